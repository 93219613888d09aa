"""Editor-only start-up (EDITOR initialization level): class docs and the export guard.

Exporting a game with Python inside is not supported yet (the exported game would need its own
Python runtime and packages). The guard, an editor plugin registered by the extension itself,
marks every export preset invalid with that message and stops an export that starts anyway.
"""

from __future__ import annotations

from typing import Any

from gdbridge import docs, objects

MESSAGE = (
    "npc_mind (gdbridge): exporting a game that uses Python classes is not supported yet; "
    "the export would not run. Run the project from the editor or with the godot command instead."
)
OPTION = "gdbridge/python_export_unsupported"
_TYPE_BOOL = 1
LEVEL_EDITOR = 3
_EXPORT_MESSAGE_ERROR = 3
RELOAD_CHECK_SECONDS = 0.5  # how often the editor looks for changed Python files


def _define_classes() -> None:
    from gdbridge.classes import EditorExportPlugin, EditorPlugin

    class GdbridgeExportGuard(EditorExportPlugin, tool=True):
        """Stops exports: Python classes cannot be exported yet."""

        def _get_name(self) -> str:
            return "gdbridge_export_guard"

        def _supports_platform(self, platform: Any) -> bool:
            return True

        def _get_export_options(self, platform: Any) -> list:
            option = {"name": OPTION, "type": _TYPE_BOOL, "hint": 0, "hint_string": "", "usage": 6}
            return [{"option": option, "default_value": False, "required": True}]

        def _get_export_option_warning(self, platform: Any, option: str) -> str:
            return MESSAGE if option == OPTION else ""

        def _export_begin(self, features: Any, is_debug: bool, path: str, flags: int) -> None:
            objects.utility.push_error(MESSAGE)
            platform = self.get_export_platform()
            if platform is not None:
                platform.add_message(_EXPORT_MESSAGE_ERROR, "gdbridge", MESSAGE)
            # Leave nothing usable behind: every file is skipped, so no half-working build ships.

        def _export_file(self, path: str, type_: str, features: Any) -> None:
            self.skip()

    class GdbridgeEditorPlugin(EditorPlugin, tool=True):
        """Adds the export guard; reloads changed Python modules (gdbridge.reload)."""

        def _enter_tree(self) -> None:
            self.guard = GdbridgeExportGuard()
            self.add_export_plugin(self.guard)
            self.since_check = 0.0
            from gdbridge import _runtime, reload

            reload.watch(_runtime.watch_roots())

        def _process(self, delta: float) -> None:
            self.since_check += delta
            if self.since_check >= RELOAD_CHECK_SECONDS:
                self.since_check = 0.0
                from gdbridge import reload

                reload.check()

        def _exit_tree(self) -> None:
            self.remove_export_plugin(self.guard)
            self.guard = None


PLUGIN = "GdbridgeEditorPlugin"


def _plugin_call(function: str) -> None:
    call = objects.ffi.cast(
        "GDExtensionInterfaceEditorAddPlugin", objects.lib.gdb_get_proc(function.encode())
    )
    call(objects.sn(PLUGIN))


def start() -> None:
    """Only when the editor runs (EDITOR level is also reached by games started from an editor build)."""
    from gdbridge import classdb

    # Loaded by an editor that already runs (the first import of a project): registering editor
    # classes then crashes the engine at exit, so the guard and the docs wait for the next start.
    if not classdb.state["editor"] or classdb.state["late_load"]:
        return
    classdb.state["level"] = LEVEL_EDITOR
    _define_classes()
    classdb.register_pending()
    docs.load_into_editor()
    _plugin_call("editor_add_plugin")
    _added.append(PLUGIN)


_added: list[str] = []


def stop() -> None:
    while _added:
        _added.pop()
        _plugin_call("editor_remove_plugin")
