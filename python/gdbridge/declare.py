"""How a Python class declares what Godot sees: exported properties, signals, constants, methods.

Pure Python (no engine needed): `gdbridge.classdb` turns these into ClassDB registrations.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import re
import typing
from collections.abc import Callable
from typing import Any

from gdbridge import types
from gdbridge.callables import as_callable
from gdbridge.types import (
    GODOT_NAMES,
    VARIANT_OF,
    VARIANT_OF_NAME,
    PropertyHint,
    PropertyUsage,
    StringName,
    VariantType,
)

T = VariantType
H = PropertyHint


def __getattr__(name: str) -> Any:
    # The packed-array annotations live in gdbridge.types; `from gdbridge.declare import
    # PackedByteArray` still works.
    if name.startswith("Packed") and hasattr(types, name):
        return getattr(types, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Variant = typing.Any
_PY_TYPES = VARIANT_OF  # annotations mean what values of that type cross as (gdbridge.types)


@dataclasses.dataclass
class TypeSpec:
    """A Godot type as ClassDB wants it (PropertyInfo fields, minus the name)."""

    vtype: int  # VariantType; NIL with NIL_IS_VARIANT usage means "any Variant"
    class_name: str = ""
    hint: int = H.NONE
    hint_string: str = ""
    py_type: Any = None
    # The element types of a typed container: (element,) for Array[X], (key, value) for
    # Dictionary[K, V]; values of this type are made typed (set_typed) when they go to Godot.
    items: tuple[TypeSpec, ...] = ()

    @property
    def is_variant(self) -> bool:
        return self.vtype == T.NIL and self.py_type is not type(None)

    @property
    def type_name(self) -> str:
        """How typed-container hints name this type: the class, or the builtin's name ("int")."""
        if self.is_variant:
            return "Variant"
        return self.class_name if self.vtype == T.OBJECT else GODOT_NAMES[T(self.vtype)]

    def method_hint(self) -> tuple[int, str]:
        """The hint of a method argument or result: godot-cpp's (and the engine's) typed-container
        format, ARRAY_TYPE "Node" / DICTIONARY_TYPE "String;int", which GDScript's analyzer reads."""
        if self.vtype == T.ARRAY and self.items:
            return H.ARRAY_TYPE, self.items[0].type_name
        if self.vtype == T.DICTIONARY and self.items:
            return H.DICTIONARY_TYPE, ";".join(item.type_name for item in self.items)
        return self.hint, self.hint_string


def type_spec(annotation: Any) -> TypeSpec:
    """TypeSpec of a Python annotation (int, float, Vector3, list, an IntEnum, a Godot class...)."""
    if annotation in (None, type(None)):
        return TypeSpec(T.NIL, py_type=type(None))
    if annotation is typing.Any or annotation is object:
        return TypeSpec(T.NIL)
    origin = typing.get_origin(annotation)
    if origin is not None:
        args = typing.get_args(annotation)
        if origin is list and args:
            return _typed_array(args[0])
        if origin is dict and len(args) == 2:
            return _typed_dict(*args)
        if origin in (list, dict):
            return TypeSpec(_PY_TYPES[origin], py_type=origin)
        if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
            args = tuple(a for a in args if a is not type(None))
            if len(args) == 1:
                return type_spec(args[0])
            return TypeSpec(T.NIL)
    found = _PY_TYPES.get(annotation)
    if found is not None:
        return TypeSpec(found, py_type=annotation)
    if isinstance(annotation, type) and issubclass(annotation, enum.IntFlag):
        # A bitfield: the inspector's flag checkboxes; the value is the IntFlag.
        hint_string = ",".join(f"{_label(member.name)}:{member.value}" for member in annotation)
        return TypeSpec(T.INT, hint=H.FLAGS, hint_string=hint_string, py_type=annotation)
    if isinstance(annotation, type) and issubclass(annotation, enum.IntEnum):
        hint_string = ",".join(f"{_label(member.name)}:{member.value}" for member in annotation)
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


def _label(name: str) -> str:
    return str(name).title().replace("_", " ")


def _typed_array(item: Any) -> TypeSpec:
    """`list[X]`: an Array[X]. As a property its hint is the inspector's "type/hint:hint_string"
    (what the engine's own typed-array properties use, e.g. "24/17:Resource")."""
    inner = type_spec(item)
    if inner.is_variant:
        return TypeSpec(T.ARRAY, py_type=list)
    if inner.vtype == T.OBJECT and not inner.hint:
        # An Object class that is neither a Resource nor a Node: the format has no place for its
        # name, so the engine's other one (ARRAY_TYPE "ClassName").
        return TypeSpec(
            T.ARRAY, hint=H.ARRAY_TYPE, hint_string=inner.class_name, py_type=list, items=(inner,)
        )
    hint_string = f"{inner.vtype}/{inner.hint}:{inner.hint_string}" if inner.hint else f"{inner.vtype}:"
    return TypeSpec(T.ARRAY, hint=H.TYPE_STRING, hint_string=hint_string, py_type=list, items=(inner,))


def _typed_dict(key: Any, value: Any) -> TypeSpec:
    """`dict[K, V]`: a Dictionary[K, V] (hint "K;V", the engine's format)."""
    items = (type_spec(key), type_spec(value))
    if all(item.is_variant for item in items):
        return TypeSpec(T.DICTIONARY, py_type=dict)
    hint_string = ";".join(item.type_name for item in items)
    return TypeSpec(T.DICTIONARY, hint=H.DICTIONARY_TYPE, hint_string=hint_string, py_type=dict, items=items)


_TYPED_HINT = re.compile(r"^(\d+)(?:/(\d+))?:(.*)$")


def typed_from_hint(spec: TypeSpec) -> None:
    """An Array export given its element type by hint (`hint=ARRAY_TYPE, hint_string="24/17:Item"`
    or `hint_string="Item"`) becomes an Array[Item] like `list[Item]`: typed values, and the
    "type/hint:hint_string" format under the hint that names it (TYPE_STRING; GDScript cannot read
    that format under ARRAY_TYPE)."""
    if spec.vtype != T.ARRAY or spec.items or spec.hint not in (H.ARRAY_TYPE, H.TYPE_STRING):
        return
    found = _TYPED_HINT.match(spec.hint_string)
    if found is not None:
        vtype, hint, text = int(found[1]), int(found[2] or 0), found[3]
        named = vtype == T.OBJECT and hint in (H.RESOURCE_TYPE, H.NODE_TYPE)
        element = TypeSpec(vtype, class_name=text if named else "", hint=hint, hint_string=text)
        spec.hint = H.TYPE_STRING
    elif spec.hint == H.ARRAY_TYPE and spec.hint_string:
        vtype = VARIANT_OF_NAME.get(spec.hint_string, T.OBJECT)
        element = TypeSpec(vtype, class_name=spec.hint_string if vtype == T.OBJECT else "")
    else:
        return
    if element.vtype == T.OBJECT and not element.class_name:
        return  # an Object element without a class: nothing to type the values with
    spec.items = (element,)


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
        elif (
            spec is not None
            and isinstance(spec.py_type, type)
            and issubclass(spec.py_type, enum.IntEnum | enum.IntFlag)
        ):
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
    range: tuple[float | str, ...] | None = None,
    hint: int = H.NONE,
    hint_string: str = "",
    multiline: bool = False,
    file: str | None = None,
    usage: int = PropertyUsage.DEFAULT,
    doc: str = "",
) -> Any:
    """Declare an exported property. The type comes from the class annotation, or `type=`.

    `range=(min, max[, step][, extra...])` gives a slider; the extras are the engine's range hint
    words ("or_greater", "exp", "suffix:m"); an IntEnum type gives a drop-down; a Resource or Node
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
    subgroup: bool = False


def export_group(title: str, prefix: str = "") -> Any:
    return Group(title, prefix)


def export_subgroup(title: str, prefix: str = "") -> Any:
    """`export_subgroup("Fine")`: a subgroup inside the current group (the exports after it)."""
    return Group(title, prefix, subgroup=True)


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
        return self.obj.connect(StringName(self.name), as_callable(target, method), flags)

    def disconnect(self, target: Any, method: str | None = None) -> None:
        self.obj.disconnect(StringName(self.name), as_callable(target, method))

    def is_connected(self, target: Any, method: str | None = None) -> bool:
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
        f._gd_expose = name or f.__name__  # type: ignore[attr-defined]  # a marker the class registration reads off the function
        return f

    return mark(fn) if fn is not None else mark


def virtual(fn: Callable[..., Any] | None = None, *, required: bool = False) -> Any:
    """A virtual method of the class (`@gd.virtual def _on_hit(self, damage: int) -> int`): declared to
    ClassDB like godot-cpp's GDVIRTUAL, so a GDScript extending the class can override it. Calling it
    from Python runs the script's override when the object's script has one, else this body.
    `@gd.virtual(required=True)`: scripts extending the class must override it (the editor says so)."""

    def mark(body: Callable[..., Any]) -> Callable[..., Any]:
        name = body.__name__

        @functools.wraps(body)
        def dispatch(self: Any, *args: Any) -> Any:
            # has_method is True for a virtual only when a script on the object defines it.
            if self.has_method(name):
                return self.call(name, *args)
            return body(self, *args)

        dispatch._gd_virtual = body  # type: ignore[attr-defined]  # a marker the class registration reads off the function
        dispatch._gd_required = required  # type: ignore[attr-defined]  # a marker the class registration reads off the function
        return dispatch

    return mark(fn) if fn is not None else mark


INT64_RANGE = (-(1 << 63), (1 << 63) - 1)


def queued(take: Callable[[bytes], Any], **bounds: tuple[int, int]) -> Callable[[Any], Any]:
    """A method called very often that returns nothing, whose calls the binding may queue in C.

    A call from the main thread, on an instance Python gave a key (`objects.queue_calls(obj, key)`),
    with plain values for its parameters (up to 4, each `int`, `float` or `StringName`: an int
    within `bounds[name]`, default the int64 range, inclusive; a finite float; a name numbered by
    `objects.queued_names(method).number(...)`, as a StringName or, from a Variant call, a String)
    returns at once, without Python. `take(raw)` receives the method's queued calls in call order,
    before any other Python code of the main thread runs (when a callback into Python starts and
    when an engine call made from Python returns), one call per method and hand-over (so it must
    change only what its own method's body reads: another queued method's calls made in between
    may reach their `take` before or after): `raw` the rows as bytes, each the key then the
    arguments, 8 bytes a number in native order (int64, float64 for a float parameter, the name's
    number for a StringName; a numpy structured dtype reads them). Every other call runs the method
    itself, so the method must do what `take` does with the same arguments. `take` must not raise
    for calls the method accepts, nor call the engine (calls queued while it runs would reach
    Python code it starts before they reach `take`).
    """

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn._gd_queued = (take, dict(bounds))  # type: ignore[attr-defined]  # a marker the class registration reads off the function
        return fn

    return mark


def answered(writes: Callable[..., Any]) -> Callable[[Any], Any]:
    """A read of one int (an id) returning an int that the binding may answer in C, from a table
    Python publishes (`objects.answer_table(read).set`) and keeps true, while the queued method
    `writes` (whose first parameter is the same kind of id) changes what it reads.

    The table holds the answer of (key, id) pairs and, per key, for how many more queued calls of
    `writes` the answers hold and the answer for an id one of those calls names (-1: the method
    answers it). The binding applies it as data: a queued call of `writes` spends one of its key's
    calls (a key with none left is closed) and gives its id the key's written answer; a call of the
    read from the main thread, on an instance whose key (`objects.queue_calls`) is open, gets its
    id's answer when there is one (then logged for the table's `asked` if it came from the pairs).
    Every other call runs the method, which must give the same answer: Python closes a key (the
    table's `close`) when it changes the key's state other than by those queued calls, and clears
    the table (`clear`) when it stops holding.
    """

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn._gd_answered = writes  # type: ignore[attr-defined]  # a marker the class registration reads off the function
        return fn

    return mark


def chosen(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A read of one Dictionary of numbers (input key -> number), or of nothing, returning a
    StringName that the binding may answer in C, from a table Python publishes
    (`objects.choice_table(read).put`) and keeps true: per instance key (`objects.queue_calls`), the
    number each input name of its group must have (a read of nothing: its groups have no input
    names) and the answer (one of the group's names).

    The binding applies it as data: a call from the main thread, on an instance whose key is open,
    whose Dictionary holds every input name of the key's group as an int or a float equal to the
    published number (an int as Python's float() of it; bit for bit) gets the answer, and the key is
    logged for the table's `asked`. Other keys of the Dictionary are not read. Every other call runs
    the method, which must give the same answer: Python closes a key (`close`) when its state
    changes so that the answer no longer holds, and clears the table (`clear`) when it stops holding.
    """
    fn._gd_chosen = True  # type: ignore[attr-defined]  # a marker the class registration reads off the function
    return fn


DROP = object()  # a `converts` converter's answer: the call is dropped


def converts(**converters: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """A method whose int/float/bool parameters take, from an untyped call, a value the binding
    would refuse (an object, a string, a fractional float for an int) through a converter:
    `converters[name](obj, value)` returns what the method is called with, or `DROP`: the call is
    dropped and answers its result type's zero (0, 0.0, false, null), the converter having told the
    user why (once: `npc_mind_godot.mistakes`). A parameter without one refuses such a value with
    the engine's call error ("Cannot convert argument N from X to int"), printed on every call."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn._gd_converts = dict(converters)  # type: ignore[attr-defined]  # a marker the class registration reads off the function
        return fn

    return mark


def apart(fn: Callable[..., Any] | None = None, *, reads: Callable[..., Any] | None = None) -> Any:
    """A method whose body never reads what queued calls (`queued`) change: the calls queued
    before it are not handed to Python first (they go, in order, before the next callback that
    may read them). For a per-frame method of another concern (a selector's choice).

    `@apart(reads=method)`: the body reads what the queued `method`'s calls change, and nothing
    the others change: that method's queued calls are handed over first, the others wait. A
    queued method that is apart reads its own calls (a call of it that runs in Python comes after
    those queued before it)."""

    def mark(marked: Callable[..., Any]) -> Callable[..., Any]:
        marked._gd_apart = reads if reads is not None else True  # type: ignore[attr-defined]  # a marker the class registration reads off the function
        return marked

    return mark(fn) if fn is not None else mark


def python_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Keep a public method out of ClassDB (Python callers only)."""
    fn._gd_expose = None  # type: ignore[attr-defined]  # a marker the class registration reads off the function
    return fn
