"""The project's Python settings: the addon's `.gdextension` `[python]` section, the
`python/paths` and `python/entry_modules` project settings, and the folders they name.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gdbridge import interface, objects


def gdextension_config() -> dict[str, Any]:
    """The `[python]` section of the addon's .gdextension file (entry_modules = [...]).

    Read through the engine from the project's extension list (an exported game has the file only
    in its pack); on a project's first import, before that list exists, from the addon folder."""
    read = objects.engine_class("FileAccess").get_file_as_string
    texts = [read(path) for path in read("res://.godot/extension_list.cfg").split()]
    if not texts:
        addon = Path(interface.ffi.string(interface.lib.gdb_library_path()).decode()).parent.parent
        texts = [path.read_text() for path in addon.glob("*.gdextension")]
    found: dict[str, Any] = {}
    for text in texts:
        section = ""
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "python" and "=" in line and not line.startswith(";"):
                key, _, value = line.partition("=")
                found[key.strip()] = json.loads(value.strip())
    return found


def project_setting(name: str, default: Any) -> Any:
    settings = objects.singleton("ProjectSettings")
    if not settings.has_setting(name):
        return default
    return settings.get_setting(name)


def module_folder(res_path: str) -> str:
    """Where a `python/paths` folder is on disk: the project itself, or in an exported game the
    copy beside the binary (`python/res/...`, made by the runtime export)."""
    exported = Path(interface.ffi.string(interface.lib.gdb_library_path()).decode()).parent / "python" / "res"
    if exported.is_dir():
        return str(exported / res_path.removeprefix("res://").strip("/"))
    return str(objects.singleton("ProjectSettings").globalize_path(res_path))


def entry_modules() -> list[str]:
    modules = list(gdextension_config().get("entry_modules", []))
    for path in project_setting("python/paths", []):
        folder = module_folder(str(path))
        if folder not in sys.path:
            sys.path.insert(0, folder)
    modules += [m for m in project_setting("python/entry_modules", []) if m not in modules]
    return modules


def watch_roots() -> list[Path]:
    """Where the modules a reload watches live: the project's `python/paths` folders and the
    folders holding the addon's entry modules."""
    settings = objects.singleton("ProjectSettings")
    roots = [Path(settings.globalize_path(path)) for path in project_setting("python/paths", [])]
    for name in gdextension_config().get("entry_modules", []):
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if file:
            path = Path(file).parent
            roots.append(path.parent if path.name == name else path)
    return roots
