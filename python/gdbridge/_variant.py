"""Values between Python and Godot: Variants (untyped path) and raw typed values (ptrcall path).

`read(type, ptr)` / `write(type, ptr, value)` work on a raw value of a known type (what ptrcall
passes); `from_variant(v)` / `to_variant(v, value)` work on a Variant. Bound to the extension's
cffi module by `bind()` at start-up.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from gdbridge.types import (
    FLATTENED,
    RAW_FORMATS,
    VARIANT_OF,
    NodePath,
    PackedStringArray,
    StringName,
    VariantType,
)

T = VariantType
ffi: Any = None
lib: Any = None
_text_buf: Any = None
_TEXT_CAP = 4096
_raw_buf: Any = None


def _unbound(*args: Any) -> Any:
    raise RuntimeError("gdbridge is not attached to an engine")


# Object <-> pointer, set by gdbridge.objects.bind (objects imports this module, not the reverse).
_wrap_object: Callable[[Any], Any] = _unbound
_object_ptr: Callable[[Any], Any] = _unbound
_wrap_variant: Callable[[Any], Any] = _unbound  # the object of an Object Variant (checked by id)
# fill(address, vtype, items) and read(address, vtype) of the extension's _gdbridge_fast module, also set
# by gdbridge.objects.bind.
_fast_fill: Callable[[int, int, Any], None] = _unbound
_fast_read: Callable[[int, int], Any] = _unbound

PACKED_DTYPES = {
    T.PACKED_BYTE_ARRAY: (np.uint8, 1),
    T.PACKED_INT32_ARRAY: (np.int32, 1),
    T.PACKED_INT64_ARRAY: (np.int64, 1),
    T.PACKED_FLOAT32_ARRAY: (np.float32, 1),
    T.PACKED_FLOAT64_ARRAY: (np.float64, 1),
    T.PACKED_VECTOR2_ARRAY: (np.float32, 2),
    T.PACKED_VECTOR3_ARRAY: (np.float32, 3),
    T.PACKED_COLOR_ARRAY: (np.float32, 4),
    T.PACKED_VECTOR4_ARRAY: (np.float32, 4),
}
# The dtype objects the C layer builds packed arguments with (borrowed there, kept alive here).
NUMPY_DTYPES = {vt: np.dtype(dtype) for vt, (dtype, _) in PACKED_DTYPES.items()}
_DTYPE_TO_PACKED = {
    (np.dtype(np.uint8), 1): T.PACKED_BYTE_ARRAY,
    (np.dtype(np.int32), 1): T.PACKED_INT32_ARRAY,
    (np.dtype(np.int64), 1): T.PACKED_INT64_ARRAY,
    (np.dtype(np.float32), 1): T.PACKED_FLOAT32_ARRAY,
    (np.dtype(np.float64), 1): T.PACKED_FLOAT64_ARRAY,
    (np.dtype(np.float32), 2): T.PACKED_VECTOR2_ARRAY,
    (np.dtype(np.float32), 3): T.PACKED_VECTOR3_ARRAY,
    (np.dtype(np.float32), 4): T.PACKED_COLOR_ARRAY,
}
_RAW_BY_TYPE = {vt: (cls, struct.Struct("<" + fmt)) for cls, (vt, fmt) in RAW_FORMATS.items()}
_TEXT_TYPES = {T.STRING: str, T.STRING_NAME: StringName, T.NODE_PATH: NodePath}


_MAIN = threading.main_thread().ident
_per_thread = threading.local()


def _buffers() -> tuple[Any, Any]:
    """Scratch buffers: the main thread's, or this thread's own (another thread may run Python
    between a C call filling a buffer and the read that follows)."""
    if threading.get_ident() == _MAIN:
        return _text_buf, _raw_buf
    found = getattr(_per_thread, "buffers", None)
    if found is None:
        found = _per_thread.buffers = (ffi.new("char[]", _TEXT_CAP), ffi.new("uint64_t[16]"))
    return found


def bind(ffi_: Any, lib_: Any) -> None:
    global ffi, lib, _text_buf, _raw_buf  # noqa: PLW0603 - module-level for speed on every call
    ffi, lib = ffi_, lib_
    _text_buf = ffi.new("char[]", _TEXT_CAP)
    _raw_buf = ffi.new("uint64_t[16]")


# ---- text ----
def utf8_of(ptr: Any, vtype: int) -> str:
    """A String/StringName/NodePath value (raw pointer) as str."""
    text_buf = _buffers()[0]
    n = lib.gdb_text_utf8(ptr, vtype, text_buf, _TEXT_CAP)
    if n <= _TEXT_CAP:
        return ffi.unpack(text_buf, n).decode()
    big = ffi.new("char[]", n)
    lib.gdb_text_utf8(ptr, vtype, big, n)
    return ffi.unpack(big, n).decode()


def new_text(ptr: Any, vtype: int, text: str) -> None:
    data = text.encode()
    lib.gdb_text_new(ptr, vtype, data, len(data))


# ---- Python value -> variant type ----
def type_of(value: Any) -> int:
    """The Variant type a Python value crosses as."""
    kind = type(value)
    found = _TYPE_OF.get(kind)
    if found is not None:
        return found
    if isinstance(value, np.ndarray):
        width = 1 if value.ndim == 1 else value.shape[1]
        packed = _DTYPE_TO_PACKED.get((value.dtype, width))
        if packed is None:
            raise TypeError(f"no packed array for numpy {value.dtype} with shape {value.shape}")
        return packed
    if hasattr(value, "_ptr"):
        return T.OBJECT
    for base, vt in _BASES:
        if isinstance(value, base):
            return vt
    raise TypeError(f"cannot pass a {kind.__name__} to Godot")


_TYPE_OF = VARIANT_OF
# Subclasses of these (an IntEnum member, a str subclass...) cross as their base (checked in order).
_BASES = tuple((kind, vt) for kind, vt in VARIANT_OF.items() if isinstance(kind, type))


# ---- containers, by internal pointer ----
def read_array(arr: Any) -> list:
    """The Array at `arr` as a list, converted in C."""
    return _fast_read(int(ffi.cast("intptr_t", arr)), T.ARRAY)


def fill_array(arr: Any, items: Any) -> None:
    """The sequence `items` into the Array at `arr` (resized to fit), element by element in C."""
    _fast_fill(int(ffi.cast("intptr_t", arr)), T.ARRAY, items)


def read_dict(d: Any) -> dict:
    """The Dictionary at `d` as a dict, in order, converted in C."""
    return _fast_read(int(ffi.cast("intptr_t", d)), T.DICTIONARY)


# keys() and values() of Dictionary (the engine's builtin methods), which the C layer reads with.
_dict_methods: dict[str, Any] = {}


def fill_dict(d: Any, items: dict) -> None:
    """The entries of `items` into the Dictionary at `d`, in order, converted in C."""
    _fast_fill(int(ffi.cast("intptr_t", d)), T.DICTIONARY, items)


def read_packed(vtype: int, seq: Any) -> Any:
    if vtype == T.PACKED_STRING_ARRAY:
        n = lib.gdb_seq_size(vtype, seq)
        if n == 0:
            return PackedStringArray()
        first = ffi.cast("uint64_t*", lib.gdb_packed_data(vtype, seq))
        return PackedStringArray(utf8_of(first + i, T.STRING) for i in range(n))
    dtype, width = PACKED_DTYPES[vtype]
    n = lib.gdb_seq_size(vtype, seq)
    shape = (n,) if width == 1 else (n, width)
    if n == 0:
        return np.zeros(shape, dtype)
    data = lib.gdb_packed_data(vtype, seq)
    size = n * width * np.dtype(dtype).itemsize
    return np.frombuffer(ffi.buffer(data, size), dtype).reshape(shape).copy()


def fill_packed(vtype: int, seq: Any, value: Any) -> None:
    if vtype == T.PACKED_STRING_ARRAY:
        lib.gdb_seq_resize(vtype, seq, len(value))
        if value:
            first = ffi.cast("uint64_t*", lib.gdb_packed_data(vtype, seq))
            for i, text in enumerate(value):
                lib.gdb_string_destroy(first + i)
                new_text(first + i, T.STRING, str(text))
        return
    dtype = PACKED_DTYPES[vtype][0]
    if isinstance(value, bytes | bytearray):
        value = np.frombuffer(value, np.uint8)
    array = np.ascontiguousarray(value, dtype=dtype)
    n = len(array)
    lib.gdb_seq_resize(vtype, seq, n)
    if n:
        ffi.memmove(lib.gdb_packed_data(vtype, seq), ffi.from_buffer(array), array.nbytes)


# ---- raw typed values (ptrcall path) ----
def read(vtype: int, ptr: Any) -> Any:
    """Python value of a raw `vtype` value at `ptr` (a ptrcall argument)."""
    return _READERS[vtype](ptr)


def write(vtype: int, ptr: Any, value: Any) -> None:
    """Store `value` into an initialized raw `vtype` value at `ptr` (a ptrcall return)."""
    _WRITERS[vtype](ptr, value)


def _read_raw(vtype: int) -> Callable[[Any], Any]:
    cls, layout = _RAW_BY_TYPE[vtype]
    flat = cls in FLATTENED

    def reader(ptr: Any) -> Any:
        values = layout.unpack(ffi.buffer(ptr, layout.size))
        return cls(values) if flat else cls(*values)

    return reader


def _raw_bytes(vtype: int, value: Any) -> bytes:
    cls, layout = _RAW_BY_TYPE[vtype]
    if cls in FLATTENED:
        return layout.pack(*value.values)
    if isinstance(value, tuple | list):
        return layout.pack(*value)
    return layout.pack(*(getattr(value, f) for f in value.__slots__))


def _write_raw(vtype: int) -> Callable[[Any, Any], None]:
    def writer(ptr: Any, value: Any) -> None:
        data = _raw_bytes(vtype, value)
        ffi.memmove(ptr, data, len(data))

    return writer


def _write_text(vtype: int) -> Callable[[Any, Any], None]:
    def writer(ptr: Any, value: Any) -> None:
        lib.gdb_value_destroy(vtype, ptr)
        new_text(ptr, vtype, value)

    return writer


def _read_text(vtype: int, cls: type) -> Callable[[Any], Any]:
    return lambda ptr: cls(utf8_of(ptr, vtype))


def _read_packed(vtype: int) -> Callable[[Any], Any]:
    return lambda ptr: read_packed(vtype, ptr)


def _write_packed(vtype: int) -> Callable[[Any, Any], None]:
    return lambda ptr, value: fill_packed(vtype, ptr, value)


def _read_object(ptr: Any) -> Any:
    return _wrap_object(ffi.cast("void**", ptr)[0])


def _write_object(ptr: Any, value: Any) -> None:
    ffi.cast("void**", ptr)[0] = _object_ptr(value)


_READERS: dict[int, Callable[[Any], Any]] = {
    T.NIL: lambda ptr: None,
    T.BOOL: lambda ptr: bool(ffi.cast("uint8_t*", ptr)[0]),
    T.INT: lambda ptr: ffi.cast("int64_t*", ptr)[0],
    T.FLOAT: lambda ptr: ffi.cast("double*", ptr)[0],
    T.OBJECT: _read_object,
    T.ARRAY: read_array,
    T.DICTIONARY: read_dict,
    **{vt: _read_text(vt, cls) for vt, cls in _TEXT_TYPES.items()},
    **{vt: _read_raw(vt) for vt in _RAW_BY_TYPE},
    **{vt: _read_packed(vt) for vt in (*PACKED_DTYPES, T.PACKED_STRING_ARRAY)},
}


def _set_scalar(ctype: str) -> Callable[[Any, Any], None]:
    def writer(ptr: Any, value: Any) -> None:
        ffi.cast(ctype, ptr)[0] = value

    return writer


_WRITERS: dict[int, Callable[[Any, Any], None]] = {
    T.NIL: lambda ptr, value: None,
    T.BOOL: _set_scalar("uint8_t*"),
    T.INT: _set_scalar("int64_t*"),
    T.FLOAT: _set_scalar("double*"),
    T.OBJECT: _write_object,
    T.ARRAY: fill_array,
    T.DICTIONARY: fill_dict,
    **{vt: _write_text(vt) for vt in _TEXT_TYPES},
    **{vt: _write_raw(vt) for vt in _RAW_BY_TYPE},
    **{vt: _write_packed(vt) for vt in (*PACKED_DTYPES, T.PACKED_STRING_ARRAY)},
}


# ---- entry points for the C fast paths (addresses as ints) ----
def read_raw_address(vtype: int, address: int) -> Any:
    return _READERS[vtype](ffi.cast("void*", address))


def to_variant_address(address: int, value: Any) -> None:
    """Replace the (Nil) Variant at `address` with `value`."""
    to_variant(ffi.cast("void*", address), value)


def read_variant_address(address: int) -> Any:
    return from_variant(ffi.cast("void*", address))


def packed_from_view(vtype: int, view: memoryview) -> Any:
    dtype, width = PACKED_DTYPES[vtype]
    array = np.frombuffer(view, dtype).copy()
    return array if width == 1 else array.reshape(-1, width)


# ---- variants ----
def from_variant(v: Any) -> Any:
    """Python value of the Variant at `v`."""
    vtype = lib.gdb_vtype(v)
    if vtype == T.INT:
        return lib.gdb_as_int(v)
    if vtype == T.FLOAT:
        return lib.gdb_as_float(v)
    if vtype == T.BOOL:
        return bool(lib.gdb_as_bool(v))
    if vtype == T.NIL:
        return None
    if vtype == T.OBJECT:
        return _wrap_variant(v)
    if vtype in _RAW_BY_TYPE:
        raw_buf = _buffers()[1]
        lib.gdb_as_raw(v, vtype, raw_buf)
        return _READERS[vtype](raw_buf)
    if vtype in _TEXT_TYPES:
        text_buf = _buffers()[0]
        n = lib.gdb_as_text(v, vtype, text_buf, _TEXT_CAP)
        if n > _TEXT_CAP:
            return _READERS[vtype](lib.gdb_vinternal(v, vtype))
        return _TEXT_TYPES[vtype](ffi.unpack(text_buf, n).decode())
    reader = _READERS.get(vtype)
    if reader is None:
        return VariantValue(v)
    return reader(lib.gdb_vinternal(v, vtype))


def to_variant(v: Any, value: Any, vtype: int | None = None) -> None:
    """Write `value` as a new Variant into uninitialized storage `v`."""
    if vtype is None:
        if type(value) is VariantValue:
            lib.gdb_vcopy(v, value.variant)
            return
        vtype = type_of(value)
    if vtype == T.INT:
        lib.gdb_vint(v, value)
    elif vtype == T.FLOAT:
        lib.gdb_vfloat(v, value)
    elif vtype == T.BOOL:
        lib.gdb_vbool(v, value)
    elif vtype == T.NIL or value is None:
        lib.gdb_vnil(v)
    elif vtype == T.OBJECT:
        lib.gdb_vobject(v, _object_ptr(value))
    elif vtype in _TEXT_TYPES:
        data = str(value).encode()
        lib.gdb_vtext(v, vtype, data, len(data))
    elif vtype in _RAW_BY_TYPE:
        data = _raw_bytes(vtype, value)
        lib.gdb_vraw(v, vtype, data)
    else:
        inner = lib.gdb_vnew(v, vtype)
        if vtype == T.ARRAY:
            fill_array(inner, value)
        elif vtype == T.DICTIONARY:
            fill_dict(inner, value)
        else:
            fill_packed(vtype, inner, value)


# The Variant's builtin methods, ==, hash: set by gdbridge.objects.bind.
_variant_call: Callable[[Any, str, tuple], Any] = _unbound
_variant_equal: Callable[[Any, Any], bool] = _unbound
_variant_hash: Callable[[Any], int] = _unbound


class VariantValue:
    """A Godot value with no Python counterpart (Callable, Signal): kept as an owned Variant copy.

    Its builtin methods are callable (`callable.bind(3)`, `callable.unbind(1)`,
    `callable.get_argument_count()`, `signal.get_name()`); a Callable is also called directly
    (`callable(1, 2)`); `==` and `hash` are the engine's."""

    __slots__ = ("variant",)

    def __init__(self, v: Any) -> None:
        self.variant = ffi.new("gdb_variant*")
        lib.gdb_vcopy(self.variant, v)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args: _variant_call(self.variant, name, args)

    def __call__(self, *args: Any) -> Any:
        return _variant_call(self.variant, "call", args)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VariantValue) and _variant_equal(self.variant, other.variant)

    def __hash__(self) -> int:
        return _variant_hash(self.variant)

    def __repr__(self) -> str:
        kind = T(lib.gdb_vtype(self.variant))
        method = _variant_call(self.variant, "get_method", ()) if kind == T.CALLABLE else ""
        return f"<{kind.name.title()} {method}>"

    def __del__(self) -> None:
        if lib is not None:
            lib.gdb_vdestroy(self.variant)
