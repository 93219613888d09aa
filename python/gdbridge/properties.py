"""The dynamic property hooks of Python-declared classes (`_set`, `_get`, `_get_property_list`,
`_property_can_revert`, `_property_get_revert`, `_validate_property`) and `_to_string`, as the
engine calls them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gdbridge import _variant, interface
from gdbridge.declare import TypeSpec, type_spec
from gdbridge.types import PropertyUsage, StringName, VariantType

T = VariantType


# ---- dynamic properties: _set, _get, _get_property_list, _property_can_revert, _property_get_revert ----
PROPERTY_HOOKS = {
    "_set": 1,
    "_get": 2,
    "_get_property_list": 4,
    "_property_can_revert": 8,
    "_property_get_revert": 8,
}
_CAN_REVERT = 2  # the C layer's GDB_PROP_CAN_REVERT (3 is GET_REVERT)


def property_hook(iid: int, op: int, name_ptr: Any, value: Any) -> int:
    """The engine's can-revert/get-revert by name (`_set` and `_get`, asked for every property by
    name, are called from C). As in GDScript, `_property_get_revert` returns None for a name it does
    not handle."""
    obj = interface.lookup(iid)
    if obj is None:
        return 0
    name = StringName(_variant.utf8_of(name_ptr, T.STRING_NAME))
    if op == _CAN_REVERT:
        return int(hasattr(type(obj), "_property_can_revert") and bool(obj._property_can_revert(name)))
    hook = getattr(obj, "_property_get_revert", None)
    result = hook(name) if hook is not None else None
    if result is None:
        return 0
    interface.lib.gdb_vdestroy(value)
    _variant.to_variant(value, result)
    return 1


_lists: dict[int, tuple[Any, list[Any]]] = {}  # property lists the engine holds, by address


def property_list(iid: int, count: Any) -> Any:
    """`_get_property_list()`: dicts as in GDScript ({"name", "type", "hint", "hint_string",
    "usage", "class_name"}); "type" is a VariantType or any annotation gdbridge maps (float, a
    Resource class, list[int]...), which also gives the hint when none is given."""
    ffi = interface.ffi
    obj = interface.lookup(iid)
    entries = list(obj._get_property_list() or []) if obj is not None else []
    array = ffi.new("GDExtensionPropertyInfo[]", max(1, len(entries)))
    texts: list[Any] = []
    for i, entry in enumerate(entries):
        kind = entry.get("type", T.NIL)
        spec = TypeSpec(int(kind)) if isinstance(kind, int) else type_spec(kind)
        item = array[i]
        item.name = interface.sn(str(entry["name"]))
        item.type = spec.vtype
        item.class_name = interface.sn(entry.get("class_name", spec.class_name))
        item.hint = entry.get("hint", spec.hint)
        hint_string = ffi.new("uint64_t*")
        _variant.new_text(hint_string, T.STRING, entry.get("hint_string", spec.hint_string))
        texts.append(hint_string)
        item.hint_string = hint_string
        item.usage = entry.get(
            "usage", PropertyUsage.DEFAULT | (PropertyUsage.NIL_IS_VARIANT if spec.is_variant else 0)
        )
    _lists[int(ffi.cast("intptr_t", array))] = (array, texts)
    count[0] = len(entries)
    return array


def free_property_list(iid: int, array: Any) -> None:
    _, texts = _lists.pop(int(interface.ffi.cast("intptr_t", array)), (None, []))
    for text in texts:
        interface.lib.gdb_value_destroy(T.STRING, text)


@dataclasses.dataclass
class PropertyView:
    """What `_validate_property(self, prop)` may change: hint, hint_string, usage."""

    name: str
    hint: int
    hint_string: str
    usage: int


def validate_property(iid: int, info: Any) -> int:
    obj = interface.lookup(iid)
    if obj is None:
        return 0
    view = PropertyView(
        _variant.utf8_of(info.name, T.STRING_NAME),
        info.hint,
        _variant.utf8_of(info.hint_string, T.STRING),
        info.usage,
    )
    before = dataclasses.astuple(view)
    obj._validate_property(view)
    if dataclasses.astuple(view) == before:
        return 0
    info.hint, info.usage = view.hint, view.usage
    if view.hint_string != before[2]:
        interface.lib.gdb_value_destroy(T.STRING, info.hint_string)
        _variant.new_text(info.hint_string, T.STRING, view.hint_string)
    return 1


def to_string(iid: int, valid: Any, out: Any) -> None:
    obj = interface.lookup(iid)
    method = getattr(type(obj), "_to_string", None)
    if obj is None or method is None:
        valid[0] = 0
        return
    text = str(method(obj))
    interface.lib.gdb_value_destroy(T.STRING, out)
    _variant.new_text(out, T.STRING, text)
    valid[0] = 1
