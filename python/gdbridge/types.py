"""Godot's value types as plain Python values (importable without the engine).

Mapping: None/bool/int/float/str are themselves; `StringName` and `NodePath` are `str` subclasses;
vectors and colors are small dataclasses; Array is `list`, Dictionary is `dict`; numeric packed
arrays are numpy arrays (float32 -> PackedFloat32Array, ...); `PackedStringArray` is a list subclass.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any, NewType

import numpy as np


class VariantType(enum.IntEnum):
    NIL = 0
    BOOL = 1
    INT = 2
    FLOAT = 3
    STRING = 4
    VECTOR2 = 5
    VECTOR2I = 6
    RECT2 = 7
    RECT2I = 8
    VECTOR3 = 9
    VECTOR3I = 10
    TRANSFORM2D = 11
    VECTOR4 = 12
    VECTOR4I = 13
    PLANE = 14
    QUATERNION = 15
    AABB = 16
    BASIS = 17
    TRANSFORM3D = 18
    PROJECTION = 19
    COLOR = 20
    STRING_NAME = 21
    NODE_PATH = 22
    RID = 23
    OBJECT = 24
    CALLABLE = 25
    SIGNAL = 26
    DICTIONARY = 27
    ARRAY = 28
    PACKED_BYTE_ARRAY = 29
    PACKED_INT32_ARRAY = 30
    PACKED_INT64_ARRAY = 31
    PACKED_FLOAT32_ARRAY = 32
    PACKED_FLOAT64_ARRAY = 33
    PACKED_STRING_ARRAY = 34
    PACKED_VECTOR2_ARRAY = 35
    PACKED_VECTOR3_ARRAY = 36
    PACKED_COLOR_ARRAY = 37
    PACKED_VECTOR4_ARRAY = 38


# Godot's own names of the Variant types (type_string(), typed-array hints, the API file).
GODOT_NAMES: dict[VariantType, str] = {
    **{t: t.name.title().replace("_", "") for t in VariantType},
    VariantType.NIL: "Nil",
    VariantType.BOOL: "bool",
    VariantType.INT: "int",
    VariantType.FLOAT: "float",
    VariantType.VECTOR2I: "Vector2i",
    VariantType.RECT2I: "Rect2i",
    VariantType.VECTOR3I: "Vector3i",
    VariantType.VECTOR4I: "Vector4i",
    VariantType.AABB: "AABB",
    VariantType.RID: "RID",
}
VARIANT_OF_NAME: dict[str, VariantType] = {name: t for t, name in GODOT_NAMES.items()}


class PropertyHint(enum.IntEnum):
    NONE = 0
    RANGE = 1
    ENUM = 2
    ENUM_SUGGESTION = 3
    EXP_EASING = 4
    LINK = 5
    FLAGS = 6
    LAYERS_2D_RENDER = 7
    LAYERS_2D_PHYSICS = 8
    LAYERS_2D_NAVIGATION = 9
    LAYERS_3D_RENDER = 10
    LAYERS_3D_PHYSICS = 11
    LAYERS_3D_NAVIGATION = 12
    FILE = 13
    DIR = 14
    GLOBAL_FILE = 15
    GLOBAL_DIR = 16
    RESOURCE_TYPE = 17
    MULTILINE_TEXT = 18
    EXPRESSION = 19
    PLACEHOLDER_TEXT = 20
    COLOR_NO_ALPHA = 21
    OBJECT_ID = 22
    TYPE_STRING = 23
    NODE_PATH_TO_EDITED_NODE = 24
    OBJECT_TOO_BIG = 25
    NODE_PATH_VALID_TYPES = 26
    SAVE_FILE = 27
    GLOBAL_SAVE_FILE = 28
    INT_IS_OBJECTID = 29
    INT_IS_POINTER = 30
    ARRAY_TYPE = 31
    LOCALE_ID = 32
    LOCALIZABLE_STRING = 33
    NODE_TYPE = 34
    HIDE_QUATERNION_EDIT = 35
    PASSWORD = 36
    LAYERS_AVOIDANCE = 37
    DICTIONARY_TYPE = 38
    TOOL_BUTTON = 39
    ONESHOT = 40
    GROUP_ENABLE = 42
    INPUT_NAME = 43
    FILE_PATH = 44


class PropertyUsage(enum.IntFlag):
    NONE = 0
    STORAGE = 2
    EDITOR = 4
    INTERNAL = 8
    CHECKABLE = 16
    CHECKED = 32
    GROUP = 64
    CATEGORY = 128
    SUBGROUP = 256
    CLASS_IS_BITFIELD = 512
    NO_INSTANCE_STATE = 1024
    RESTART_IF_CHANGED = 2048
    SCRIPT_VARIABLE = 4096
    STORE_IF_NULL = 8192
    UPDATE_ALL_IF_MODIFIED = 16384
    CLASS_IS_ENUM = 65536
    NIL_IS_VARIANT = 131072
    ARRAY = 262144
    SCRIPT_DEFAULT_VALUE = 32768
    EDITOR_BASIC_SETTING = 134217728
    READ_ONLY = 268435456
    DEFAULT = STORAGE | EDITOR


class StringName(str):
    """A Godot StringName (interned name); compares equal to the plain string."""

    __slots__ = ()


class NodePath(str):
    """A Godot NodePath, e.g. NodePath("../Player")."""

    __slots__ = ()


class PackedStringArray(list):
    """A list of str that crosses into Godot as a PackedStringArray (a plain list is an Array)."""

    __slots__ = ()


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Vector2:
    x: float = 0.0
    y: float = 0.0

    def __add__(self, other: Vector2) -> Vector2:
        return Vector2(self.x + other.x, self.y + other.y)

    def __sub__(self, other: Vector2) -> Vector2:
        return Vector2(self.x - other.x, self.y - other.y)

    def __mul__(self, k: float) -> Vector2:
        return Vector2(self.x * k, self.y * k)

    def length(self) -> float:
        return math.hypot(self.x, self.y)


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Vector2i:
    x: int = 0
    y: int = 0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Vector3:
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0

    def __add__(self, other: Vector3) -> Vector3:
        return Vector3(self.x + other.x, self.y + other.y, self.z + other.z)

    def __sub__(self, other: Vector3) -> Vector3:
        return Vector3(self.x - other.x, self.y - other.y, self.z - other.z)

    def __mul__(self, k: float) -> Vector3:
        return Vector3(self.x * k, self.y * k, self.z * k)

    def length(self) -> float:
        return math.sqrt(self.x * self.x + self.y * self.y + self.z * self.z)


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Vector3i:
    x: int = 0
    y: int = 0
    z: int = 0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Vector4:
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    w: float = 0.0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Vector4i:
    x: int = 0
    y: int = 0
    z: int = 0
    w: int = 0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Color:
    r: float = 0.0
    g: float = 0.0
    b: float = 0.0
    a: float = 1.0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Rect2:
    x: float = 0.0
    y: float = 0.0
    width: float = 0.0
    height: float = 0.0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Rect2i:
    x: int = 0
    y: int = 0
    width: int = 0
    height: int = 0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Quaternion:
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    w: float = 1.0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Plane:
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    d: float = 0.0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class RID:
    id: int = 0


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Transform2D:
    """Columns x, y and origin, flattened: (xx, xy, yx, yy, ox, oy)."""

    values: tuple[float, ...] = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class AABB:
    values: tuple[float, ...] = (0.0,) * 6


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Basis:
    values: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Transform3D:
    """Basis rows then origin, flattened (12 floats)."""

    values: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)


@dataclasses.dataclass(slots=True, unsafe_hash=True)
class Projection:
    values: tuple[float, ...] = tuple(float(i % 5 == 0) for i in range(16))


# Plain-data types: (variant type, struct format of the raw value, how fields map to it).
RAW_FORMATS: dict[type, tuple[VariantType, str]] = {
    Vector2: (VariantType.VECTOR2, "2f"),
    Vector2i: (VariantType.VECTOR2I, "2i"),
    Rect2: (VariantType.RECT2, "4f"),
    Rect2i: (VariantType.RECT2I, "4i"),
    Vector3: (VariantType.VECTOR3, "3f"),
    Vector3i: (VariantType.VECTOR3I, "3i"),
    Transform2D: (VariantType.TRANSFORM2D, "6f"),
    Vector4: (VariantType.VECTOR4, "4f"),
    Vector4i: (VariantType.VECTOR4I, "4i"),
    Plane: (VariantType.PLANE, "4f"),
    Quaternion: (VariantType.QUATERNION, "4f"),
    AABB: (VariantType.AABB, "6f"),
    Basis: (VariantType.BASIS, "9f"),
    Transform3D: (VariantType.TRANSFORM3D, "12f"),
    Projection: (VariantType.PROJECTION, "16f"),
    Color: (VariantType.COLOR, "4f"),
    RID: (VariantType.RID, "Q"),
}
FLATTENED = (Transform2D, AABB, Basis, Transform3D, Projection)


# Annotations for the numeric packed arrays (values are numpy arrays of the matching dtype).
PackedByteArray = NewType("PackedByteArray", np.ndarray)
PackedInt32Array = NewType("PackedInt32Array", np.ndarray)
PackedInt64Array = NewType("PackedInt64Array", np.ndarray)
PackedFloat32Array = NewType("PackedFloat32Array", np.ndarray)
PackedFloat64Array = NewType("PackedFloat64Array", np.ndarray)
PackedVector2Array = NewType("PackedVector2Array", np.ndarray)
PackedVector3Array = NewType("PackedVector3Array", np.ndarray)
PackedColorArray = NewType("PackedColorArray", np.ndarray)

# The one map from Python types to Variant types: the type of a value crossing into Godot
# (`type(value)`), and the meaning of an annotation (`x: Vector2`). The packed-array NewTypes are
# annotations only (their values are numpy arrays, matched by dtype).
VARIANT_OF: dict[Any, VariantType] = {
    type(None): VariantType.NIL,
    bool: VariantType.BOOL,
    int: VariantType.INT,
    float: VariantType.FLOAT,
    str: VariantType.STRING,
    StringName: VariantType.STRING_NAME,
    NodePath: VariantType.NODE_PATH,
    list: VariantType.ARRAY,
    tuple: VariantType.ARRAY,
    dict: VariantType.DICTIONARY,
    PackedStringArray: VariantType.PACKED_STRING_ARRAY,
    bytes: VariantType.PACKED_BYTE_ARRAY,
    PackedByteArray: VariantType.PACKED_BYTE_ARRAY,
    PackedInt32Array: VariantType.PACKED_INT32_ARRAY,
    PackedInt64Array: VariantType.PACKED_INT64_ARRAY,
    PackedFloat32Array: VariantType.PACKED_FLOAT32_ARRAY,
    PackedFloat64Array: VariantType.PACKED_FLOAT64_ARRAY,
    PackedVector2Array: VariantType.PACKED_VECTOR2_ARRAY,
    PackedVector3Array: VariantType.PACKED_VECTOR3_ARRAY,
    PackedColorArray: VariantType.PACKED_COLOR_ARRAY,
    **{cls: vt for cls, (vt, _) in RAW_FORMATS.items()},
}
