"""Python edits reloaded in the open editor, without a restart.

The editor plugin calls `check()` twice a second: a module of the project (under `python/paths`)
or of the addon (an entry module's package) whose file changed is re-imported, and each Godot
class it defines is updated in place: the class the engine knows keeps its identity (instances,
ClassDB registration, exported property values), and takes the new module's methods, virtual
overrides, setters and other attributes; ClassDB's method entries call the new bodies. What ClassDB
cannot change without a restart (a method, property or signal added or removed, a changed method
signature) is reported as an editor warning, with the rest reloaded; a new class is registered.

(The GDExtension library reload, `reloadable = true`, stays off: the library embeds the Python
runtime, which cannot be unloaded and loaded again in one process; nothing here needs it.)
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import Any

from gdbridge import classdb, declare, objects

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
    problems: list[str] = []
    for name in changed:
        problems += reload_module(sys.modules[name])
    for problem in problems:
        objects.lib.gdb_warning(f"gdbridge reload: {problem}".encode(), b"")
    if changed:
        objects.utility.print(f"gdbridge: reloaded {', '.join(changed)}")
    return problems


def reload_module(module: types.ModuleType) -> list[str]:
    """Re-import `module` and update the Godot classes it defines in place; returns the problems."""
    problems: list[str] = []
    state = classdb.state
    state["reloading"] = {}
    try:
        importlib.reload(module)
    except Exception as error:  # the old classes stay as they were
        from gdbridge._runtime import report

        report(type(error), error, error.__traceback__)
        return [f"{module.__name__} failed to import; the previous version stays"]
    finally:
        found: dict[str, type] = state.pop("reloading")
    for name, new_cls in found.items():  # new classes were registered as the module ran
        old_info = _registered(name)
        if old_info is None:
            continue
        problems += _update_class(old_info, new_cls)  # the module then names the known classes
    return problems


def _registered(name: str) -> classdb.ClassInfo | None:
    return next((i for i in classdb.classes[1:] if i is not None and i.registered and i.name == name), None)


def _update_class(info: classdb.ClassInfo, new_cls: type) -> list[str]:
    old_cls = info.cls
    label = info.name
    problems = []
    old_members, new_members = classdb._members(old_cls), classdb._members(new_cls)
    for kind in (declare.Export, declare.Signal, declare.Constant, declare.Group):
        before = {k for k, v in old_members.items() if isinstance(v, kind)}
        after = {k for k, v in new_members.items() if isinstance(v, kind)}
        for attr in sorted(before ^ after):
            problems.append(f"{label}.{attr} ({kind.__name__.lower()}) added or removed: restart the editor")
    # The class and its plain Python mixins from the same module take the new Python attributes.
    pairs = [(old_cls, new_cls)]
    olds = {(c.__module__, c.__qualname__): c for c in old_cls.__mro__ if not hasattr(c, "_gd_native")}
    for base in new_cls.__mro__:
        old_base = olds.get((base.__module__, base.__qualname__))
        if old_base is not None and base is not old_base and base.__module__ == new_cls.__module__:
            pairs.append((old_base, base))
    for old, new in pairs:
        _copy_attributes(old, new)
        module = sys.modules.get(new.__module__)
        if module is not None and getattr(module, new.__name__, None) is new:
            setattr(module, new.__name__, old)
    for attr, value in old_members.items():
        if isinstance(value, declare.Export):
            value.on_change = getattr(new_members.get(attr), "on_change", None)
    problems += _update_methods(info, old_cls)
    classdb.reloaded(info)
    return problems


def _copy_attributes(old: type, new: type) -> None:
    """Everything but the declarations ClassDB already holds, with `super()` inside the new methods
    pointing at the class the engine knows; attributes the new version dropped go too."""
    declarations = declare.Export | declare.Signal | declare.Group
    for attr, value in vars(new).items():
        if attr in _CLASS_KEEP or isinstance(value, declarations):
            continue
        _retarget_super(value, new, old)
        setattr(old, attr, value)
    for attr in set(vars(old)) - set(vars(new)) - _CLASS_KEEP:
        if not isinstance(vars(old)[attr], declarations):
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
        problems.append(f"{info.name}.{name}() added or removed: restart the editor")
    for name, method in current.items():
        found = registered.get(name)
        if found is None:
            continue
        mid, old = found
        if _signature(old) != _signature(method):
            problems.append(f"{info.name}.{name}(): its signature changed: restart the editor")
            continue
        classdb.replace_method(info.name, mid, method)
    return problems


def _signature(method: classdb.MethodInfo) -> tuple:
    def spec(s: declare.TypeSpec | None) -> tuple:
        return () if s is None else (s.vtype, s.class_name, s.hint, s.hint_string)

    args = tuple((name, spec(s)) for name, s in method.args)
    return args, spec(method.ret), len(method.defaults), method.is_static, method.vararg
