"""How a Python class declares what Godot sees: exported properties, signals, constants, methods.

Pure Python (no engine needed): `gdbridge.classdb` turns these into ClassDB registrations.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import typing
from collections.abc import Callable
from typing import Any, NewType

import numpy as np

from gdbridge.types import (
    RAW_FORMATS,
    NodePath,
    PackedStringArray,
    PropertyHint,
    PropertyUsage,
    StringName,
    VariantType,
)

T = VariantType
H = PropertyHint

# Annotations for the numeric packed arrays (values are numpy arrays of the matching dtype).
PackedByteArray = NewType("PackedByteArray", np.ndarray)
PackedInt32Array = NewType("PackedInt32Array", np.ndarray)
PackedInt64Array = NewType("PackedInt64Array", np.ndarray)
PackedFloat32Array = NewType("PackedFloat32Array", np.ndarray)
PackedFloat64Array = NewType("PackedFloat64Array", np.ndarray)
PackedVector2Array = NewType("PackedVector2Array", np.ndarray)
PackedVector3Array = NewType("PackedVector3Array", np.ndarray)
PackedColorArray = NewType("PackedColorArray", np.ndarray)
Variant = typing.Any

_PY_TYPES: dict[Any, int] = {
    int: T.INT,
    float: T.FLOAT,
    bool: T.BOOL,
    str: T.STRING,
    StringName: T.STRING_NAME,
    NodePath: T.NODE_PATH,
    list: T.ARRAY,
    dict: T.DICTIONARY,
    PackedStringArray: T.PACKED_STRING_ARRAY,
    PackedByteArray: T.PACKED_BYTE_ARRAY,
    bytes: T.PACKED_BYTE_ARRAY,
    PackedInt32Array: T.PACKED_INT32_ARRAY,
    PackedInt64Array: T.PACKED_INT64_ARRAY,
    PackedFloat32Array: T.PACKED_FLOAT32_ARRAY,
    PackedFloat64Array: T.PACKED_FLOAT64_ARRAY,
    PackedVector2Array: T.PACKED_VECTOR2_ARRAY,
    PackedVector3Array: T.PACKED_VECTOR3_ARRAY,
    PackedColorArray: T.PACKED_COLOR_ARRAY,
    **{cls: vt for cls, (vt, _) in RAW_FORMATS.items()},
}


@dataclasses.dataclass
class TypeSpec:
    """A Godot type as ClassDB wants it (PropertyInfo fields, minus the name)."""

    vtype: int  # VariantType; NIL with NIL_IS_VARIANT usage means "any Variant"
    class_name: str = ""
    hint: int = H.NONE
    hint_string: str = ""
    py_type: Any = None

    @property
    def is_variant(self) -> bool:
        return self.vtype == T.NIL and self.py_type is not type(None)


def type_spec(annotation: Any) -> TypeSpec:
    """TypeSpec of a Python annotation (int, float, Vector3, list, an IntEnum, a Godot class...)."""
    if annotation in (None, type(None)):
        return TypeSpec(T.NIL, py_type=type(None))
    if annotation is typing.Any or annotation is object:
        return TypeSpec(T.NIL)
    origin = typing.get_origin(annotation)
    if origin is not None:
        if origin is list and typing.get_args(annotation):
            return _typed_array(typing.get_args(annotation)[0])
        if origin in (list, dict):
            return TypeSpec(_PY_TYPES[origin], py_type=origin)
        if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) == 1:
                return type_spec(args[0])
            return TypeSpec(T.NIL)
    found = _PY_TYPES.get(annotation)
    if found is not None:
        return TypeSpec(found, py_type=annotation)
    if isinstance(annotation, type) and issubclass(annotation, enum.IntEnum):
        hint_string = ",".join(
            f"{member.name.title().replace('_', ' ')}:{member.value}" for member in annotation
        )
        return TypeSpec(T.INT, hint=H.ENUM, hint_string=hint_string, py_type=annotation)
    if isinstance(annotation, type) and hasattr(annotation, "_gd_native"):
        name = godot_name(annotation)
        spec = TypeSpec(T.OBJECT, class_name=name, py_type=annotation)
        if _is_subclass_named(annotation, "Resource"):
            spec.hint, spec.hint_string = H.RESOURCE_TYPE, name
        elif _is_subclass_named(annotation, "Node"):
            spec.hint, spec.hint_string = H.NODE_TYPE, name
        return spec
    raise TypeError(f"gdbridge cannot map the annotation {annotation!r} to a Godot type")


def _typed_array(item: Any) -> TypeSpec:
    """`list[X]`: an Array whose inspector only offers X (Godot's "type/hint:hint_string" format)."""
    inner = type_spec(item)
    hint_string = f"{inner.vtype}/{inner.hint}:{inner.hint_string}" if inner.hint else f"{inner.vtype}:"
    return TypeSpec(T.ARRAY, hint=H.TYPE_STRING, hint_string=hint_string, py_type=list)


def godot_name(cls: type) -> str:
    info = cls.__dict__.get("_gd_info")
    return info.name if info is not None else cls.__name__


def _is_subclass_named(cls: type, name: str) -> bool:
    return any(base.__name__ == name and base.__dict__.get("_gd_native", False) for base in cls.__mro__)


@dataclasses.dataclass
class Export:
    """An exported property: shown in the inspector, saved in .tscn/.tres, readable from GDScript.

    Python code reads and writes it as a plain attribute; the engine's set/get go through it too.
    """

    default: Any = None
    type: Any = None
    hint: int = H.NONE
    hint_string: str = ""
    usage: int = PropertyUsage.DEFAULT
    doc: str = ""
    on_change: Callable[[Any, Any], None] | None = None
    name: str = ""
    spec: TypeSpec | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            value = copy.copy(self.default)
            obj.__dict__[self.name] = value
            return value

    def __set__(self, obj: Any, value: Any) -> None:
        spec = self.spec
        if spec is not None and spec.vtype == T.FLOAT and isinstance(value, int):
            value = float(value)
        elif spec is not None and isinstance(spec.py_type, type) and issubclass(spec.py_type, enum.IntEnum):
            value = spec.py_type(value)
        missing = object()
        previous = obj.__dict__.get(self.name, missing)
        obj.__dict__[self.name] = value
        if self.on_change is not None:
            try:
                self.on_change(obj, value)
            except BaseException:
                # The setter rejected the value: the property keeps the one it had.
                if previous is missing:
                    obj.__dict__.pop(self.name, None)
                else:
                    obj.__dict__[self.name] = previous
                raise

    def setter(self, fn: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
        """Decorator: run `fn(self, value)` after each assignment (from Python, GDScript or a scene load);
        when `fn` raises, the assignment is undone (the property reads back its previous value)."""
        self.on_change = fn
        return fn


def export(
    default: Any = None,
    *,
    type: Any = None,
    range: tuple[float, ...] | None = None,
    hint: int = H.NONE,
    hint_string: str = "",
    multiline: bool = False,
    file: str | None = None,
    usage: int = PropertyUsage.DEFAULT,
    doc: str = "",
) -> Any:
    """Declare an exported property. The type comes from the class annotation, or `type=`.

    `range=(min, max[, step])` gives a slider; an IntEnum type gives a drop-down; a Resource or Node
    class gives a typed picker; `multiline=True` a text box; `file="*.json"` a file picker.
    """
    if range is not None:
        hint, hint_string = H.RANGE, ",".join(str(x) for x in range)
    elif multiline:
        hint = H.MULTILINE_TEXT
    elif file is not None:
        hint, hint_string = H.FILE, file
    return Export(default=default, type=type, hint=hint, hint_string=hint_string, usage=usage, doc=doc)


@dataclasses.dataclass
class Group:
    """`export_group("Movement")`: the exports declared after it appear under that inspector group."""

    title: str
    prefix: str = ""


def export_group(title: str, prefix: str = "") -> Any:
    return Group(title, prefix)


@dataclasses.dataclass
class Signal:
    """A signal declared in Python: `hit = signal(damage=int, source=Node)`; `self.hit.emit(3, node)`."""

    args: dict[str, Any]
    doc: str = ""
    name: str = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return BoundSignal(obj, self.name)


def signal(*names: str, doc: str = "", **typed: Any) -> Any:
    args: dict[str, Any] = dict.fromkeys(names, typing.Any)
    args.update(typed)
    return Signal(args, doc)


class BoundSignal:
    """One object's signal: emit, connect (a Callable, or an object and a method); GDScript can await it."""

    __slots__ = ("name", "obj")

    def __init__(self, obj: Any, name: str) -> None:
        self.obj, self.name = obj, name

    def emit(self, *args: Any) -> None:
        self.obj.emit_signal(StringName(self.name), *args)

    def connect(self, target: Any, method: str | None = None, flags: int = 0) -> int:
        from gdbridge.callables import as_callable

        return self.obj.connect(StringName(self.name), as_callable(target, method), flags)

    def disconnect(self, target: Any, method: str | None = None) -> None:
        from gdbridge.callables import as_callable

        self.obj.disconnect(StringName(self.name), as_callable(target, method))

    def is_connected(self, target: Any, method: str | None = None) -> bool:
        from gdbridge.callables import as_callable

        return bool(self.obj.is_connected(StringName(self.name), as_callable(target, method)))


@dataclasses.dataclass
class Constant:
    """An integer constant registered on the class: `MAX_LEVEL = constant(5)`."""

    value: int
    name: str = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> int:
        return self.value


def constant(value: int) -> Any:
    return Constant(value)


def method(fn: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Expose a method to Godot that would otherwise stay Python-only (leading underscore),
    or under another name. Public methods (no leading underscore) are exposed without it."""

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        f._gd_expose = name or f.__name__  # type: ignore[attr-defined]
        return f

    return mark(fn) if fn is not None else mark


def python_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Keep a public method out of ClassDB (Python callers only)."""
    fn._gd_expose = None  # type: ignore[attr-defined]
    return fn
