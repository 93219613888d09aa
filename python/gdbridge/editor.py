"""Editor-only start-up (EDITOR initialization level): class docs and the runtime export.

Exporting ships the addon's Python runtime beside the game: an export plugin registered by the
extension itself (no editor plugin needs enabling) copies `bin/python/` (the runtime and the
project's own packages) and `gdbridge_api.json.gz` next to the exported binary, where the engine
also puts the extension library; the project's `python/paths` modules go to `python/res/`.
An export that cannot run (a missing runtime file, a platform other than Linux x86_64, a project
Python module with a syntax error, a data-only export into a folder that does not hold the game's
runtime) fails with one message and a non-zero exit, leaving nothing behind: the Export dialog shows
it on the preset, and the export itself is made to fail (see `_block_export`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gdbridge import classdb, docs, interface, objects, project, reload

OPTION = "gdbridge/python_runtime"
_TYPE_BOOL = 1
LEVEL_EDITOR = 3
_EXPORT_MESSAGE_ERROR = 3
RELOAD_CHECK_SECONDS = 0.5  # how often the editor looks for changed Python files
LIBRARY = "libgdbridge.linux.x86_64.so"
API_FILE = "gdbridge_api.json.gz"
VERSION_DIR = "python3.11"
# What an exported game needs beside its binary (relative to the addon's bin/).
RUNTIME_FILES = (
    LIBRARY,
    API_FILE,
    "python/lib/libpython3.11.so.1.0",
    "python/lib/python311.zip",  # the standard library (bytecode only)
    f"python/lib/{VERSION_DIR}/site-packages/npc_mind_godot/__init__.py",
    f"python/lib/{VERSION_DIR}/site-packages/gdbridge/__init__.py",
)
# The project's Python modules (project setting python/paths) are shipped under this folder.
PROJECT_MODULES = "python/res"
# The addon's export plugins (GDScript, in its export/ folder), added beside the runtime export.
ADDON_EXPORTERS = ("engine_libs.gd", "local_model.gd")
_SKIP_DIRS = {".godot", ".git", "__pycache__", "addons", ".import"}


def bin_dir() -> Path:
    """The addon's bin/ on disk (where the extension library was loaded from)."""
    return Path(os.path.realpath(interface.ffi.string(interface.lib.gdb_library_path()).decode())).parent


def runtime_problem(platform_name: str) -> str:
    """Why an export to `platform_name` cannot carry the runtime ('' when it can)."""
    if platform_name != "Linux":
        return (
            f"npc_mind: exporting to {platform_name} is not supported yet; the addon ships a Python "
            "runtime for Linux x86_64 only (see the addon's docs/platforms.md)."
        )
    missing = [name for name in RUNTIME_FILES if not (bin_dir() / name).is_file()]
    if missing:
        return (
            f"npc_mind: the addon's Python runtime is incomplete ({bin_dir() / missing[0]} is missing); "
            "unzip the npc_mind addon again (or run scripts/package in an npc_mind checkout)."
        )
    return ""


_compiled: dict[str, tuple[int, str]] = {}  # file -> (mtime_ns, its problem): the dialog asks often


def module_problem() -> str:
    """The first of the project's shipped Python modules (`python/paths`) that does not compile
    (the game would fail to start with `Cannot get class`), as one message naming its file and
    line; '' when they all compile."""
    settings = objects.singleton("ProjectSettings")
    for source, _ in project_modules():
        if not source.endswith(".py"):
            continue
        path = str(settings.globalize_path(source))
        try:
            stamp = Path(path).stat().st_mtime_ns
        except OSError:
            continue
        known = _compiled.get(path)
        if known is None or known[0] != stamp:
            known = stamp, _syntax_problem(source, Path(path))
            _compiled[path] = known
        if known[1]:
            return known[1]
    return ""


def _syntax_problem(source: str, path: Path) -> str:
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as error:
        return (
            f"npc_mind: the project's Python module {source}:{error.lineno} has a syntax error "
            f"({error.msg}); the exported game could not start its classes. Fix it, then export again."
        )
    except (OSError, ValueError) as error:  # unreadable, or a null byte in the source
        return f"npc_mind: the project's Python module {source} cannot be compiled ({error})."
    return ""


def export_problem(platform_name: str) -> str:
    """Why an export to `platform_name` could not run ('' when it could)."""
    return runtime_problem(platform_name) or module_problem()


def pack_problem(pack: str) -> str:
    """A data-only export runs only beside an exported game that already holds the runtime."""
    folder = Path(pack).parent
    if not folder.is_dir():
        return (
            f"npc_mind: a data-only export (--export-pack) goes beside an exported game, and {folder} "
            "does not exist; export the whole game there first (Export Project, or --export-release)."
        )
    needed = (LIBRARY, API_FILE, "python/lib/libpython3.11.so.1.0")
    missing = [name for name in needed if not (folder / name).is_file()]
    if not missing:
        return ""
    return (
        f"npc_mind: a data-only export (--export-pack) needs the game's Python runtime in its folder, "
        f"and {folder / missing[0]} is not there; export the whole game into {folder} first "
        "(Export Project, or --export-release)."
    )


def _shipped(folder: Path, root: Path, name: str) -> bool:
    """Modules, and every data file of a package or a distribution's metadata (not engine files)."""
    if name.endswith(".py"):
        return True
    if name.endswith((".pyc", ".uid", ".import")):
        return False
    inside = folder.relative_to(root).parts
    return any(
        (root.joinpath(*inside[: i + 1]) / "__init__.py").is_file() or part.endswith(".dist-info")
        for i, part in enumerate(inside)
    )


def project_modules() -> list[tuple[str, str]]:
    """(res:// file, target folder beside the binary) for the project's own Python (`python/paths`):
    its modules, and everything inside its packages (data files, vendored distributions' metadata)."""
    settings = objects.singleton("ProjectSettings")
    if not settings.has_setting("python/paths"):
        return []
    found: list[tuple[str, str]] = []
    for setting in settings.get_setting("python/paths"):
        res_path = str(setting)
        root = Path(str(settings.globalize_path(res_path)))
        relative_root = res_path.removeprefix("res://").strip("/")
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
            for name in sorted(files):
                if _shipped(Path(folder), root, name):
                    inside = Path(folder).relative_to(root).as_posix().strip(".")
                    parts = [part for part in (relative_root, inside) if part]
                    found.append(("res://" + "/".join([*parts, name]), "/".join([PROJECT_MODULES, *parts])))
    return found


def _block_export(path: str) -> None:
    """Make the engine's export fail (neither a plugin's error nor a preset warning changes the
    exit code of a data-only export): the engine next writes `path` (a .pck opened for writing, a
    .zip moved there), and a folder at that path makes it fail, so the export leaves nothing that
    could not run. A file already there would have been overwritten by this export anyway. The
    folder, and every folder made for it (an export into a folder that did not exist), are removed
    when the export ends. The engine ignores a .zip it could not move: a command-line export then
    exits non-zero through `_fail_command_line`."""
    target = Path(path)
    if target.is_dir():
        return
    made = target
    while not made.parent.exists():
        made = made.parent
    target.unlink(missing_ok=True)
    target.mkdir(parents=True)
    _blockers.append((target, made))
    _fail_command_line()


_blockers: list[tuple[Path, Path]] = []  # (the folder at the export's path, the topmost one made)
_EXPORT_ARGUMENTS = ("--export-release", "--export-debug", "--export-pack", "--export-patch")


def _fail_command_line() -> None:
    """In a command-line export, end the editor with exit code 1 once the export is done (after
    the engine's own exit code, which is 0 for a data-only export it was refused)."""
    arguments = {str(argument) for argument in objects.singleton("OS").get_cmdline_args()}
    if arguments.intersection(_EXPORT_ARGUMENTS):
        objects.singleton("Engine").get_main_loop().call_deferred("quit", 1)


def _remove_blockers() -> None:
    while _blockers:
        blocker, made = _blockers.pop()
        folder = blocker
        while folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            if folder == made:
                break
            folder = folder.parent


def _define_classes() -> None:
    from gdbridge.classes import EditorExportPlugin, EditorPlugin

    class GdbridgeRuntimeExport(EditorExportPlugin, tool=True):
        """Ships the addon's Python runtime beside an exported game."""

        def _get_name(self) -> str:
            return "gdbridge_python_runtime"

        def _supports_platform(self, platform: Any) -> bool:
            return True

        def _get_export_options(self, platform: Any) -> list:
            option = {"name": OPTION, "type": _TYPE_BOOL, "hint": 0, "hint_string": "", "usage": 6}
            return [{"option": option, "default_value": True, "required": True}]

        def _get_export_option_warning(self, platform: Any, option: str) -> str:
            # Not empty: the preset is invalid, so the Export dialog and --export-release refuse it.
            return export_problem(str(platform.get_os_name())) if option == OPTION else ""

        def _export_begin(self, features: Any, is_debug: bool, path: str, flags: int) -> None:
            path = str(path)
            platform = self.get_export_platform()
            data_only = path.endswith((".pck", ".zip"))
            problem = export_problem(str(platform.get_os_name()) if platform is not None else "Linux")
            if not problem and data_only:
                problem = pack_problem(path)
            if problem:
                _block_export(path)
                objects.utility.push_error(problem)
                return
            if data_only:
                return  # the runtime beside it was checked
            addon_bin = objects.singleton("ProjectSettings").localize_path(str(bin_dir()))
            self.add_shared_object(f"{addon_bin}/python", [], "")
            self.add_shared_object(f"{addon_bin}/{API_FILE}", [], "")
            for source, target in project_modules():
                self.add_shared_object(source, [], target)

        def _export_file(self, path: str, type_: str, features: Any) -> None:
            # The runtime's files go beside the binary, not into the pack.
            if "/bin/" in str(path) and str(path).endswith((API_FILE, ".stamp")):
                self.skip()

        def _export_end(self) -> None:
            _remove_blockers()

    class GdbridgeEditorPlugin(EditorPlugin, tool=True):
        """Adds the runtime export (and the engine libraries' export, when the addon has one);
        reloads changed Python modules (gdbridge.reload)."""

        def _enter_tree(self) -> None:
            self.exporters = [GdbridgeRuntimeExport()]
            # The addon's own export plugins, when it has them: the engine's C libraries for a
            # Debian-built engine, the opt-in local model (export/engine_libs.gd, local_model.gd).
            for script in ADDON_EXPORTERS:
                found = bin_dir().parent / "export" / script
                if found.is_file():
                    path = objects.singleton("ProjectSettings").localize_path(str(found))
                    self.exporters.append(objects.singleton("ResourceLoader").load(path).new())
            for exporter in self.exporters:
                self.add_export_plugin(exporter)
            self.since_check = 0.0
            reload.watch(project.watch_roots())

        def _process(self, delta: float) -> None:
            self.since_check += delta
            if self.since_check >= RELOAD_CHECK_SECONDS:
                self.since_check = 0.0
                reload.check()

        def _exit_tree(self) -> None:
            for exporter in self.exporters:
                self.remove_export_plugin(exporter)
            self.exporters = []


PLUGIN = "GdbridgeEditorPlugin"


def _plugin_call(function: str) -> None:
    call = interface.ffi.cast(
        "GDExtensionInterfaceEditorAddPlugin", interface.lib.gdb_get_proc(function.encode())
    )
    call(interface.sn(PLUGIN))


def _skip_doc_refresh_when_headless() -> None:
    """A running editor that just loaded the addon (the first import of a project) answers
    `GDExtensionManager.extensions_reloaded` by reloading its class reference on a worker thread,
    whose last step (documenting the extension's classes) is a deferred call. A headless
    `--import` or `--export-*` quits a few frames later; the editor frees its docs on the way out,
    then runs that deferred call on them: a segfault at exit (Godot 4.6 engine bug, upstream
    issue 111048) whenever an extension class exists. Headless, nobody reads those docs, the
    inspector or open scripts (what the handler refreshes), so the refresh is disconnected."""
    if objects.singleton("DisplayServer").get_name() != "headless":
        return
    manager = objects.singleton("GDExtensionManager")
    for connection in manager.get_signal_connection_list("extensions_reloaded"):
        manager.disconnect("extensions_reloaded", connection["callable"])


def start() -> None:
    """Only when the editor runs (EDITOR level is also reached by games started from an editor build)."""
    if not interface.state["editor"]:
        return
    if interface.state["late_load"]:
        _skip_doc_refresh_when_headless()
    interface.state["level"] = LEVEL_EDITOR
    _define_classes()
    classdb.register_pending()
    if not interface.state["late_load"]:  # late: the editor may still be reading its doc cache
        docs.load_into_editor()
    _plugin_call("editor_add_plugin")
    _added.append(PLUGIN)


_added: list[str] = []


def stop() -> None:
    while _added:
        _added.pop()
        _plugin_call("editor_remove_plugin")
