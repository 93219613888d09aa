"""The Python-declared classes gdbridge registers, as data: each class's `ClassInfo` (by class
id, the small integer the engine's callbacks carry) and the `MethodInfo` of each method it exposes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from gdbridge import interface
from gdbridge.declare import TypeSpec


@dataclasses.dataclass
class ClassInfo:
    cls: type
    name: str
    parent: str
    native: str
    tool: bool
    abstract: bool
    icon: str
    doc: str
    internal: bool = False  # registered but not exposed: not in Create Node, docs or ClassDB.instantiate
    cid: int = 0
    registered: bool = False
    level: int = 2  # the initialization level it was registered at (SCENE, or EDITOR for editor classes)
    was_registered: bool = False  # registered once (a library reload registers it again)


@dataclasses.dataclass
class MethodInfo:
    name: str
    func: Callable[..., Any]
    args: list[tuple[str, TypeSpec]]
    ret: TypeSpec | None
    defaults: list[Any]
    is_static: bool = False
    vararg: bool = False  # a `*args` parameter: extra arguments after the declared ones


classes: list[ClassInfo | None] = [None]  # class id -> info (0 is never used)


def python_mro(cls: type) -> list[type]:
    """The classes of `cls`'s MRO written in Python (Python-defined Godot classes and plain mixins),
    not the engine's proxies."""
    return [c for c in cls.__mro__ if c is not object and not c.__dict__.get("_gd_native", False)]


def defines(cls: type, name: str) -> bool:
    return any(name in c.__dict__ for c in python_mro(cls))


_functions: dict[str, Any] = {}


def interface_function(name: str, ctype: str) -> Any:
    """The engine interface function `name` as its C type `ctype`, resolved on first use."""
    found = _functions.get(name)
    if found is None:
        found = _functions[name] = interface.ffi.cast(ctype, interface.lib.gdb_get_proc(name.encode()))
    return found
