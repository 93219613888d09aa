"""gdbridge: Python classes as real Godot 4 classes (GDExtension through cffi).

Declare a class by subclassing an engine class; it is registered with ClassDB when its module is
imported by the extension (see docs/binding.md):

    import gdbridge as gd
    from gdbridge.classes import Node3D

    class Wanderer(Node3D):
        \"\"\"Walks around.\"\"\"
        speed: float = gd.export(1.5, range=(0, 10, 0.1))
        arrived = gd.signal(where=gd.Vector3)

        def walk(self, steps: int) -> float:
            return steps * self.speed

        def _process(self, delta: float) -> None:
            ...

This package knows nothing about NPCs.
"""

# classdb registers the Python-declared classes: imported first, so every class statement finds it.
from gdbridge import classdb  # noqa: F401
from gdbridge.callables import as_callable
from gdbridge.declare import (
    Variant,
    answered,
    apart,
    chosen,
    constant,
    export,
    export_group,
    export_subgroup,
    method,
    python_only,
    queued,
    signal,
    virtual,
)
from gdbridge.objects import GodotError, Object, library_path, register_singleton, singleton, utility
from gdbridge.types import (
    AABB,
    RID,
    Basis,
    Color,
    NodePath,
    PackedByteArray,
    PackedColorArray,
    PackedFloat32Array,
    PackedFloat64Array,
    PackedInt32Array,
    PackedInt64Array,
    PackedStringArray,
    PackedVector2Array,
    PackedVector3Array,
    Plane,
    Projection,
    PropertyHint,
    PropertyUsage,
    Quaternion,
    Rect2,
    Rect2i,
    StringName,
    Transform2D,
    Transform3D,
    VariantType,
    Vector2,
    Vector2i,
    Vector3,
    Vector3i,
    Vector4,
    Vector4i,
)

__all__ = [
    "AABB",
    "RID",
    "Basis",
    "Color",
    "GodotError",
    "NodePath",
    "Object",
    "PackedByteArray",
    "PackedColorArray",
    "PackedFloat32Array",
    "PackedFloat64Array",
    "PackedInt32Array",
    "PackedInt64Array",
    "PackedStringArray",
    "PackedVector2Array",
    "PackedVector3Array",
    "Plane",
    "Projection",
    "PropertyHint",
    "PropertyUsage",
    "Quaternion",
    "Rect2",
    "Rect2i",
    "StringName",
    "Transform2D",
    "Transform3D",
    "Variant",
    "VariantType",
    "Vector2",
    "Vector2i",
    "Vector3",
    "Vector3i",
    "Vector4",
    "Vector4i",
    "answered",
    "apart",
    "as_callable",
    "chosen",
    "constant",
    "export",
    "export_group",
    "export_subgroup",
    "library_path",
    "method",
    "python_only",
    "queued",
    "register_singleton",
    "signal",
    "singleton",
    "utility",
    "virtual",
]
