"""Python edits reloaded in the open editor, without a restart.

The editor plugin calls `check()` twice a second: a module of the project (under `python/paths`)
or of the addon (an entry module's package) whose file changed is re-imported, and each Godot
class it defines is updated in place: the class the engine knows keeps its identity (instances,
ClassDB registration, exported property values), and takes the new module's methods, virtual
overrides, setters and other attributes; ClassDB's method entries call the new bodies; a new class
is registered. What ClassDB holds that changed (a method, property or signal added or removed, a
changed method signature) is registered by the engine's GDExtension reload (`reloadable = true`),
started here: the library is never really unloaded (`-z nodelete`), Python and its objects stay,
and gdbridge.classdb registers the classes again and gives the engine objects their Python objects
back. Outside the editor, or with `reloadable = false`, such a change is reported as a warning.
"""

from __future__ import annotations

import gc
import importlib
import sys
import types
from pathlib import Path
from typing import Any

from gdbridge import classdb, declare, instances, interface, objects

_mtimes: dict[str, float] = {}  # module name -> mtime of its file when last (re)loaded
_roots: list[Path] = []
_CLASS_KEEP = frozenset({"__dict__", "__weakref__", "__module__", "__qualname__", "_gd_info", "_gd_native"})


def watch(roots: list[Path]) -> None:
    """Watch the modules whose files are under `roots` (their current state is the baseline)."""
    _roots[:] = [root.resolve() for root in roots]
    _paths.clear()
    for name, path in _watched():
        _mtimes[name] = _mtime(path)


_paths: dict[str, Path | None] = {}  # module name -> its file when watched, None when not


def _watched() -> list[tuple[str, Path]]:
    found = []
    for name, module in list(sys.modules.items()):
        if name not in _paths:
            file = getattr(module, "__file__", None)
            path = Path(file).resolve() if file and file.endswith(".py") else None
            watched = path is not None and not name.startswith("gdbridge")
            _paths[name] = path if watched and any(root in path.parents for root in _roots) else None
        path = _paths[name]
        if path is not None:
            found.append((name, path))
    return found


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def check() -> list[str]:
    """Reload the watched modules whose files changed; returns what could not be reloaded."""
    changed = []
    for name, path in _watched():
        stamp = _mtime(path)
        if name not in _mtimes:
            _mtimes[name] = stamp
        elif stamp != _mtimes[name]:
            _mtimes[name] = stamp
            changed.append(name)
    instances.drop_detached()
    library = _library_path()
    problems: list[str] = []
    for name in changed:
        problems += reload_module(sys.modules[name], declarations=library is not None)
    if problems and library is not None:
        # What ClassDB holds changed (a method, export or signal added or removed, a signature):
        # the engine reloads the library, which registers the classes again as they are now.
        objects.utility.print(f"gdbridge: reloading the library for {'; '.join(problems)}")
        objects.singleton("GDExtensionManager").call_deferred("reload_extension", library)
        problems = []
    for problem in problems:
        interface.lib.gdb_warning(f"gdbridge reload: {problem}: restart the editor".encode(), b"")
    if changed:
        objects.utility.print(f"gdbridge: reloaded {', '.join(changed)}")
    return problems


def _library_path() -> str | None:
    """The res:// path of gdbridge's .gdextension when the engine can reload it (in the editor,
    `reloadable = true`), else None."""
    if not interface.state["editor"]:
        return None
    manager = objects.singleton("GDExtensionManager")
    here = Path(interface.ffi.string(interface.lib.gdb_library_path()).decode()).resolve().parent.parent
    settings = objects.singleton("ProjectSettings")
    for path in manager.get_loaded_extensions():
        if Path(str(settings.globalize_path(path))).resolve().parent == here:
            extension = manager.get_extension(path)
            return str(path) if extension is not None and _reloadable(str(path)) else None
    return None


def _reloadable(path: str) -> bool:
    config = objects.engine_class("ConfigFile")()
    return config.load(path) == 0 and bool(config.get_value("configuration", "reloadable", False))


def reload_module(module: types.ModuleType, declarations: bool = False) -> list[str]:
    """Re-import `module` and update the Godot classes it defines in place; returns what ClassDB
    holds that changed (with `declarations`, exports and signals are taken too, for a library
    reload to register)."""
    problems: list[str] = []
    state = interface.state
    state["reloading"] = {}
    gc.unfreeze()  # what start-up froze (`_runtime._tune_collector`) may be garbage once replaced
    try:
        importlib.reload(module)
    except Exception as error:  # the old classes stay as they were
        interface.report(type(error), error, error.__traceback__)
        return [f"{module.__name__} failed to import; the previous version stays"]
    finally:
        found: dict[str, type] = state.pop("reloading")
    for name, new_cls in found.items():  # new classes were registered as the module ran
        old_info = _registered(name)
        if old_info is None:
            continue
        problems += _update_class(old_info, new_cls, declarations)  # the module then names the known classes
    return problems


def _registered(name: str) -> classdb.ClassInfo | None:
    return next((i for i in classdb.classes[1:] if i is not None and i.registered and i.name == name), None)


def _update_class(info: classdb.ClassInfo, new_cls: type, declarations: bool) -> list[str]:
    old_cls = info.cls
    label = info.name
    problems = []
    old_members, new_members = classdb._members(old_cls), classdb._members(new_cls)
    for kind in (declare.Export, declare.Signal, declare.Constant, declare.Group):
        before = {k for k, v in old_members.items() if isinstance(v, kind)}
        after = {k for k, v in new_members.items() if isinstance(v, kind)}
        for attr in sorted(before ^ after):
            problems.append(f"{label}.{attr} ({kind.__name__.lower()}) added or removed")
    # The class and its plain Python mixins from the same module take the new Python attributes.
    pairs = [(old_cls, new_cls)]
    olds = {(c.__module__, c.__qualname__): c for c in old_cls.__mro__ if not hasattr(c, "_gd_native")}
    for base in new_cls.__mro__:
        old_base = olds.get((base.__module__, base.__qualname__))
        if old_base is not None and base is not old_base and base.__module__ == new_cls.__module__:
            pairs.append((old_base, base))
    for old, new in pairs:
        _copy_attributes(old, new, declarations and bool(problems))
        module = sys.modules.get(new.__module__)
        if module is not None and getattr(module, new.__name__, None) is new:
            setattr(module, new.__name__, old)
    for attr, value in old_members.items():
        if isinstance(value, declare.Export):
            value.on_change = getattr(new_members.get(attr), "on_change", None)
    problems += _update_methods(info, old_cls)
    classdb.reloaded(info)
    return problems


def _copy_attributes(old: type, new: type, with_declarations: bool = False) -> None:
    """Everything but the declarations ClassDB already holds (unless a library reload registers
    them again), with `super()` inside the new methods pointing at the class the engine knows;
    attributes the new version dropped go too."""
    declarations = declare.Export | declare.Signal | declare.Group
    if with_declarations:
        declarations = ()
    for attr, value in vars(new).items():
        if attr in _CLASS_KEEP or (declarations and isinstance(value, declarations)):
            continue
        _retarget_super(value, new, old)
        setattr(old, attr, value)
    for attr in set(vars(old)) - set(vars(new)) - _CLASS_KEEP:
        if not (declarations and isinstance(vars(old)[attr], declarations)):
            delattr(old, attr)


def _retarget_super(value: Any, new_cls: type, old_cls: type) -> None:
    func = getattr(value, "__func__", value)
    func = getattr(func, "_gd_virtual", func)
    code = getattr(func, "__code__", None)
    if code is None or "__class__" not in code.co_freevars:
        return
    cell = func.__closure__[code.co_freevars.index("__class__")]
    if cell.cell_contents is new_cls:
        cell.cell_contents = old_cls


def _update_methods(info: classdb.ClassInfo, cls: type) -> list[str]:
    problems = []
    registered = classdb.registered_methods(info.name)
    current = {m.name: m for m in classdb._collect_methods(cls)}
    for name in sorted(set(registered) ^ set(current)):
        problems.append(f"{info.name}.{name}() added or removed")
    for name, method in current.items():
        found = registered.get(name)
        if found is None:
            continue
        mid, old = found
        if _signature(old) != _signature(method):
            problems.append(f"{info.name}.{name}(): its signature changed")
            continue
        classdb.replace_method(info.name, mid, method)
    return problems


def _signature(method: classdb.MethodInfo) -> tuple:
    def spec(s: declare.TypeSpec | None) -> tuple:
        return () if s is None else (s.vtype, s.class_name, s.hint, s.hint_string)

    args = tuple((name, spec(s)) for name, s in method.args)
    return args, spec(method.ret), len(method.defaults), method.is_static, method.vararg
