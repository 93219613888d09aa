"""gdbridge's one Python-to-Variant type map, without the engine: every annotation the old
annotation table knew keeps its meaning, values cross as their type's Variant type, and typed
containers, enums and bitfields get the engine's hint formats. Run in a subprocess (the test
process never imports gdbridge: tests/test_package.py checks that)."""

from __future__ import annotations

import ast
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON = Path(__file__).resolve().parents[1] / "python"
# the engine classes as the type checker sees them, and the engine's own API (provision writes it)
STUB = PYTHON / "gdbridge" / "classes.pyi"
ENGINE_API = PYTHON.parent / "addons" / "npc_mind" / "bin" / "gdbridge_api.json.gz"
PROBE = r"""
import enum, json
import numpy as np
import gdbridge as gd
from gdbridge import _variant
from gdbridge.declare import TypeSpec, type_spec, typed_from_hint

class Mood(enum.IntEnum):
    CALM = 0
    ANGRY = 1

class Flags(enum.IntFlag):
    NEAR = 1
    LOUD = 2

annotations = {
    "int": int, "float": float, "bool": bool, "str": str, "StringName": gd.StringName,
    "NodePath": gd.NodePath, "list": list, "dict": dict, "PackedStringArray": gd.PackedStringArray,
    "PackedByteArray": gd.PackedByteArray, "bytes": bytes, "PackedInt32Array": gd.PackedInt32Array,
    "PackedInt64Array": gd.PackedInt64Array, "PackedFloat32Array": gd.PackedFloat32Array,
    "PackedFloat64Array": gd.PackedFloat64Array, "PackedVector2Array": gd.PackedVector2Array,
    "PackedVector3Array": gd.PackedVector3Array, "PackedColorArray": gd.PackedColorArray,
    "Vector2": gd.Vector2, "Vector2i": gd.Vector2i, "Rect2": gd.Rect2, "Rect2i": gd.Rect2i,
    "Vector3": gd.Vector3, "Vector3i": gd.Vector3i, "Transform2D": gd.Transform2D, "Vector4": gd.Vector4,
    "Vector4i": gd.Vector4i, "Plane": gd.Plane, "Quaternion": gd.Quaternion, "AABB": gd.AABB,
    "Basis": gd.Basis, "Transform3D": gd.Transform3D, "Projection": gd.Projection, "Color": gd.Color,
    "RID": gd.RID, "None": None, "Variant": gd.Variant,
}
values = {
    "None": None, "bool": True, "int": 3, "float": 2.5, "str": "x", "StringName": gd.StringName("n"),
    "NodePath": gd.NodePath("a"), "list": [1], "tuple": (1,), "dict": {}, "bytes": b"x",
    "PackedStringArray": gd.PackedStringArray(["a"]), "float32 array": np.zeros(2, np.float32),
    "vec2 array": np.zeros((2, 2), np.float32), "Vector2i": gd.Vector2i(1, 2), "IntEnum": Mood.ANGRY,
}
def spec(s):
    hint, text = s.method_hint()
    return [int(s.vtype), s.class_name, int(s.hint), s.hint_string, [int(hint), text]]
hinted = TypeSpec(28, hint=31, hint_string="24/17:Item")
typed_from_hint(hinted)
print(json.dumps({
    "annotations": {name: int(type_spec(a).vtype) for name, a in annotations.items()},
    "values": {name: int(_variant.type_of(v)) for name, v in values.items()},
    "hashable": len({gd.Vector2(1, 2), gd.Vector2(1, 2), gd.Vector2i(1, 2), gd.Color(1, 0, 0)}),
    "list_int": spec(type_spec(list[int])),
    "dict_str_int": spec(type_spec(dict[str, int])),
    "list_any": spec(type_spec(list)),
    "enum": spec(type_spec(Mood)),
    "flags": spec(type_spec(Flags)),
    "hinted": [int(hinted.hint), hinted.hint_string, [int(i.vtype) for i in hinted.items],
               hinted.items[0].class_name],
}))
"""


@pytest.fixture(scope="module")
def facts() -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(PYTHON)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# The annotation table before the two maps were merged (declare._PY_TYPES), and None/Variant.
BEFORE = {
    "int": 2, "float": 3, "bool": 1, "str": 4, "StringName": 21, "NodePath": 22, "list": 28, "dict": 27,
    "PackedStringArray": 34, "PackedByteArray": 29, "bytes": 29, "PackedInt32Array": 30,
    "PackedInt64Array": 31, "PackedFloat32Array": 32, "PackedFloat64Array": 33, "PackedVector2Array": 35,
    "PackedVector3Array": 36, "PackedColorArray": 37, "Vector2": 5, "Vector2i": 6, "Rect2": 7, "Rect2i": 8,
    "Vector3": 9, "Vector3i": 10, "Transform2D": 11, "Vector4": 12, "Vector4i": 13, "Plane": 14,
    "Quaternion": 15, "AABB": 16, "Basis": 17, "Transform3D": 18, "Projection": 19, "Color": 20, "RID": 23,
    "None": 0, "Variant": 0,
}  # fmt: skip


def test_every_annotation_keeps_its_meaning(facts: dict) -> None:
    assert facts["annotations"] == BEFORE


def test_values_cross_as_their_types_variant(facts: dict) -> None:
    assert facts["values"] == {
        "None": 0, "bool": 1, "int": 2, "float": 3, "str": 4, "StringName": 21, "NodePath": 22, "list": 28,
        "tuple": 28, "dict": 27, "bytes": 29, "PackedStringArray": 34, "float32 array": 32, "vec2 array": 35,
        "Vector2i": 6, "IntEnum": 2,
    }  # fmt: skip


def test_value_types_are_hashable(facts: dict) -> None:
    assert facts["hashable"] == 3


def test_typed_containers_enums_and_bitfields_have_the_engine_hints(facts: dict) -> None:
    # [vtype, class, property hint, property hint string, method hint (hint, ...)]
    assert facts["list_int"][:4] == [28, "", 23, "2:"]  # TYPE_STRING "2:" (the inspector's)
    assert facts["list_int"][4] == [31, "int"]  # methods: godot-cpp's ARRAY_TYPE "int"
    assert facts["dict_str_int"] == [27, "", 38, "String;int", [38, "String;int"]]  # DICTIONARY_TYPE
    assert facts["list_any"][:3] == [28, "", 0]  # a plain list stays untyped
    assert facts["enum"][:4] == [2, "", 2, "Calm:0,Angry:1"]
    assert facts["flags"][:4] == [2, "", 6, "Near:1,Loud:2"]
    assert facts["hinted"] == [23, "24/17:Item", [24], "Item"]  # ARRAY_TYPE "24/17:X" -> TYPE_STRING, typed


def _stub_parents() -> dict[str, str]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    parents = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            (base,) = node.bases
            assert isinstance(base, ast.Name), node.name
            parents[node.name] = base.id
    return parents


def test_the_type_stub_declares_each_engine_class_under_its_engine_parent() -> None:
    engine = json.loads(gzip.decompress(ENGINE_API.read_bytes()))["classes"]  # as interface.load_api reads it
    declared = _stub_parents()
    assert declared, "no class declared in gdbridge/classes.pyi"
    for name, parent in declared.items():
        assert engine[name]["parent"] == parent, f"{name}: the engine's parent is {engine[name]['parent']}"
        assert parent == "Object" or parent in declared, f"{name}'s parent {parent} is not declared"


def test_the_type_stub_declares_every_engine_class_the_packages_name() -> None:
    """A class the stub leaves out reaches the type checker as Any: its subclasses' `icon=` is an
    error there, and nothing it does is checked."""
    named: set[str] = set()
    for package in ("gdbridge", "npc_mind_godot"):
        for path in sorted((PYTHON / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "classes"
                    and node.attr[0].isupper()  # (not a local list named classes)
                ):
                    named.add(node.attr)
                elif isinstance(node, ast.ImportFrom) and node.module == "gdbridge.classes":
                    named.update(alias.name for alias in node.names)
    assert named, "the packages name no engine class"
    assert sorted(named - set(_stub_parents()) - {"Object"}) == []
