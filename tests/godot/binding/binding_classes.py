"""Python classes registered with Godot for the binding tests (tests/test_binding_*.py)."""

from __future__ import annotations

import enum
import gc
import json
import logging
import threading
import warnings

import numpy as np

import gdbridge as gd
from gdbridge import objects
from gdbridge.classes import Node, Node2D, Object, RefCounted, Resource


def emit(**fields: object) -> None:
    """One JSON line for the test to read."""
    print(json.dumps(fields, sort_keys=True))


class Mood(enum.IntEnum):
    CALM = 0
    ANGRY = 1
    SCARED = 2


class ProbeData(Resource):
    """A Python-defined Resource, stored inside a scene."""

    level: int = gd.export(1)
    label: str = gd.export("")


class Probe(Node):
    """A node exercising every part of the binding.

    Second paragraph: shown as the description in the editor help.
    """

    MAX_LEVEL = gd.constant(5)
    Mood = Mood

    speed: float = gd.export(1.5, range=(0, 10, 0.1), doc="How fast.")
    count: int = gd.export(3)
    flag: bool = gd.export(False)
    title: str = gd.export("hi", multiline=True)
    tag: gd.StringName = gd.export(gd.StringName("t"))
    target: gd.NodePath = gd.export(gd.NodePath(""))
    offset: gd.Vector2 = gd.export(gd.Vector2(1, 2))
    spot: gd.Vector3 = gd.export(gd.Vector3(0, 0, 0))
    tint: gd.Color = gd.export(gd.Color(1, 0, 0, 1))
    items: list = gd.export([])
    table: dict = gd.export({})
    names: gd.PackedStringArray = gd.export(gd.PackedStringArray())
    ids: gd.PackedInt32Array = gd.export(np.zeros(0, np.int32))
    weights: gd.PackedFloat32Array = gd.export(np.zeros(0, np.float32))
    mood: Mood = gd.export(Mood.CALM)
    profile: ProbeData | None = gd.export(None)
    datas: list[ProbeData] = gd.export([])
    _group = gd.export_group("Advanced")
    limit: int = gd.export(10)

    pinged = gd.signal(value=int)
    changed = gd.signal()

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.frames = 0
        self.physics_frames = 0
        self.setter_runs = 0

    @count.setter
    def _count_changed(self, value: int) -> None:
        self.setter_runs += 1

    # -- methods called from GDScript --
    def add(self, a: int, b: int) -> int:
        return a + b

    def scale(self, x: float) -> float:
        return x * self.speed

    def concat(self, a: str, b: str) -> str:
        return a + b

    def sum_packed(self, values: gd.PackedFloat32Array) -> float:
        return float(np.sum(values))

    def count_keys(self, table: dict) -> int:
        return len(table)

    def echo(self, value: gd.Variant) -> gd.Variant:
        return value

    def copy_dict(self, table: dict) -> dict:
        """A typed Dictionary result built in Python (ptrcall from typed GDScript)."""
        return dict(table)

    def copy_list(self, items: list) -> list:
        """A typed Array result, given back as a tuple (crosses as an Array)."""
        return tuple(items)

    def key_types(self, table: dict) -> gd.PackedStringArray:
        """The Python type name of each key, in order (str, StringName, int, float, bool, ...)."""
        return gd.PackedStringArray(type(key).__name__ for key in table)

    def built_dict(self) -> gd.Variant:
        """Keys and values of every kind a Python dict holds, nested, built on the Python side."""
        return {
            "text": "x",
            gd.StringName("name"): gd.StringName("value"),
            gd.NodePath("a/b"): gd.NodePath("c"),
            7: 1.5,
            2.5: True,
            False: None,
            "vector": gd.Vector2(3, 4),
            "nested": {"list": [1, (2, 3), {"deep": []}], "empty": {}},
            "enum": Mood.ANGRY,
            "tuple": (1, "two"),
            "large": {f"k{i}": i for i in range(1000)},
        }

    def scaled_dict(self, table: dict, scale: int = 2) -> dict:
        """Reached untyped with the default left out: the Python call path reads and writes the
        containers (not the C fast path)."""
        return {key: [value, [scale] * 2, {scale: (key,)}] for key, value in table.items()}

    def shared_tree_facts(self, tree: list, table: gd.Variant) -> str:
        """A small Array whose elements are one shared Array, nested (30 ** 10 paths), and a
        Dictionary holding one Array twice: each shared container arrives as one Python object."""
        depth, node = 0, tree
        while isinstance(node, list) and len(node) == 30:
            if any(item is not node[0] for item in node):
                return f"not shared at depth {depth}"
            depth, node = depth + 1, node[0]
        return f"{depth} {node} {table['a'] is table['b']} {table['a']}"

    def shared_tree(self, depth: int) -> list:
        """The same tree built in Python (one list 30 times, nested `depth` levels) as a typed
        Array result: 30 ** depth paths, `depth` + 1 distinct lists."""
        tree: list = ["leaf"]
        for _ in range(depth):
            tree = [tree] * 30
        return tree

    def shared_written(self, tree: list) -> gd.Variant:
        """What Python gives back with shared parts, untyped: the tree GDScript sent (echoed), a
        list holding one list twice, a dict holding one dict under two keys, a tuple of one list;
        and tuples Python itself shares (the empty one, one constant twice), which are values."""
        inner = [1, 2]
        table = {"x": 1}
        point = (1, 2)
        return [tree, [inner, inner], {"a": table, "b": table}, (inner, inner), [(), (), point, point]]

    def self_containing_written(self) -> str:
        """The errors writing a Python list, dict or tuple that contains itself (directly or
        through another container) into the engine: as a result and as an engine call's argument.
        Nothing reaches the engine (no meta is set)."""
        looped: list = [1]
        looped.append([looped])
        table: dict = {}
        table["self"] = table
        through_tuple: list = []
        through_tuple.append((through_tuple,))
        errors = []
        for name, value in (("looped", looped), ("table", table), ("through_tuple", through_tuple)):
            try:
                self.set_meta(name, value)
            except RecursionError as error:
                errors.append(str(error))
            if self.has_meta(name):
                errors.append(f"{name} reached the engine")
        return " | ".join(errors)


    def self_containing_meta(self) -> str:
        """The error reading back an Array (or a Dictionary) GDScript made contain itself."""
        errors = []
        for name in ("loop", "loop_dict"):
            try:
                self.get_meta(name)
            except RecursionError as error:
                errors.append(str(error))
        return " | ".join(errors)

    def static_engine_calls(self, path: str) -> list:
        """Static engine methods through gdbridge.classes, called on the class."""
        from gdbridge.classes import FileAccess

        return [FileAccess.file_exists(path), FileAccess.file_exists(path + ".missing"),
                FileAccess.get_file_as_string(path)]  # fmt: skip

    def cyclic_refused(self) -> bool:
        """A list holding itself, into an engine call: RecursionError, not a crash."""
        cyclic: list = [1]
        cyclic.append(cyclic)
        try:
            self.set_meta("cyclic", cyclic)
        except RecursionError:
            return not self.has_meta("cyclic")
        return False

    def packed_facts(self, values: gd.Variant) -> str:
        """What a packed-array argument arrives as: dtype, shape, writable, owning its data, values."""
        flags = values.flags
        return f"{values.dtype} {values.shape} {flags.writeable} {flags.owndata} {values.tolist()}"

    def meta_round_trip(self) -> bool:
        """A nested dict and a tuple into an engine call from Python, and back."""
        value = {"a": [1, {"b": gd.StringName("c")}], 3: (4.5, "six"), "empty": {}}
        self.set_meta("blob", value)
        back = self.get_meta("blob")
        expected = {"a": [1, {"b": "c"}], 3: [4.5, "six"], "empty": {}}
        return back == expected and type(back["a"][1]["b"]) is gd.StringName

    def doubled(self, values: gd.PackedInt32Array) -> gd.PackedInt32Array:
        return np.asarray(values, np.int32) * 2

    def with_default(self, a: int, b: int = 10) -> int:
        return a * b

    def ping(self, value: int) -> None:
        self.pinged.emit(value)

    def listen(self, other: Node) -> None:
        """Python functions as signal targets: a lambda on a Python signal, a private bound method
        on an engine signal."""
        other.pinged.connect(lambda value: self.calls.append(f"heard {value}"))
        self.property_list_changed.connect(self._on_properties_changed)

    def _on_properties_changed(self) -> None:
        self.calls.append("properties changed")

    def speak(self) -> None:
        """print, logging and warnings all reach the engine's output."""
        print("probe says hello")
        logging.getLogger("probe").info("probe logs info")
        logging.getLogger("probe").warning("probe logs a warning")
        warnings.warn("probe warns", UserWarning, stacklevel=1)

    def takes_node(self, node: Node, suffix: str) -> str:
        return str(node.name) + suffix

    def history(self) -> gd.PackedStringArray:
        return gd.PackedStringArray(self.calls)

    def frame_counts(self) -> dict:
        return {"process": self.frames, "physics": self.physics_frames, "setter": self.setter_runs}

    # -- engine calls from Python --
    def make_children(self, n: int) -> int:
        for i in range(n):
            child = Node2D()
            child.name = f"Kid{i}"
            child.position = gd.Vector2(i, 2 * i)
            self.add_child(child)
        kid = self.get_node(gd.NodePath("Kid1"))
        return int(kid.position.y) if kid is not None else -1

    def first_child(self) -> Node:
        return self.get_child(0)

    def tree_touch(self) -> int:
        """From a thread this must be refused: the node is inside the tree."""
        return self.get_child_count()

    def build_offline(self) -> int:
        """From a thread this is allowed: the objects are not in the tree."""
        node = Node2D()
        node.position = gd.Vector2(3, 4)
        node.add_child(Node())
        data = ProbeData()
        data.level = 5
        result = node.get_child_count() + int(node.position.x) + data.level
        node.free()
        return result

    def call_script(self, node: Node) -> int:
        """Members of a GDScript attached to an engine object, from Python."""
        node.set("health", node.health + 1)
        return node.doubled_by_script(21) + node.health

    def keep_counter(self) -> Counter:
        """A Python-held RefCounted outlives the engine's references to it."""
        self.kept = Counter()
        self.kept.bump()
        return self.kept

    def kept_value(self) -> int:
        return self.kept.value

    def doc_xml(self) -> str:
        from gdbridge import classdb, docs

        info = next(i for i in classdb.classes[1:] if i is not None and i.name == "Probe")
        return docs.class_xml(info)

    def deferred_touch(self) -> bool:
        self.call_deferred("set_name", "RenamedLater")
        return threading.current_thread() is not threading.main_thread()

    @staticmethod
    def live_instances() -> int:
        gc.collect()  # freed nodes' Python objects may sit in reference cycles (signal lambdas)
        alive = [*objects.instances.values(), *(ref() for ref in objects.weak_instances.values())]
        return sum(1 for obj in alive if type(obj).__module__ == __name__)  # this module's classes only

    # -- virtuals --
    def _enter_tree(self) -> None:
        self.calls.append("enter_tree")

    def _ready(self) -> None:
        self.calls.append("ready")

    def _exit_tree(self) -> None:
        self.calls.append("exit_tree")

    def _process(self, delta: float) -> None:
        self.frames += 1

    def _input(self, event: Object) -> None:
        self.calls.append(f"input {event.get_class()} {event.action}")

    def _physics_process(self, delta: float) -> None:
        self.physics_frames += 1

    def _notification(self, what: int) -> None:
        if what == 13:  # NOTIFICATION_READY
            self.calls.append("notification_ready")

    def _get_configuration_warnings(self) -> gd.PackedStringArray:
        return gd.PackedStringArray(["count is high"] if self.count > 5 else [])

    def _validate_property(self, prop: object) -> None:
        if prop.name == "limit" and not self.flag:
            prop.usage = gd.PropertyUsage.STORAGE  # stored, hidden from the inspector

    def _to_string(self) -> str:
        return f"<Probe {self.count}>"


class AbstractBase(Node, abstract=True):
    """Registered but not instantiable."""

    @gd.method(name="exposed_under_another_name")
    def _hidden(self) -> int:
        return 5


class Concrete(AbstractBase, name="ConcreteProbe"):
    """A Python class extending a Python class, registered under another name."""


class EntersTree:
    """A plain mixin supplying an engine virtual: the class using it gets `_enter_tree` from here."""

    def _enter_tree(self) -> None:
        self.__dict__["entered"] = self.__dict__.get("entered", 0) + 1

    def times_entered(self) -> int:
        return self.__dict__.get("entered", 0)


class MixedInNode(EntersTree, Node):
    """A node whose only virtual comes from a mixin."""


class Faulty(Node):
    """Raises in every `_process`; the engine must report it and keep running."""

    def __init__(self) -> None:
        self.frames = 0

    def _process(self, delta: float) -> None:
        self.frames += 1
        raise ValueError(f"faulty frame {self.frames}")

    def get_frames(self) -> int:
        return self.frames


class Counter(RefCounted):
    """A RefCounted class: freed when the last reference goes."""

    value: int = gd.export(0)

    def bump(self) -> int:
        self.value += 1
        return self.value


class ToolProbe(Node, tool=True):
    """A tool class: its game virtuals also run in the editor."""

    def _ready(self) -> None:
        emit(editor_virtual="ToolProbe._ready", editor=bool(gd.singleton("Engine").is_editor_hint()))


class GameOnly(Node):
    """Not a tool class: `_ready` must not run in the editor."""

    def _ready(self) -> None:
        emit(editor_virtual="GameOnly._ready", editor=bool(gd.singleton("Engine").is_editor_hint()))

    def _get_configuration_warnings(self) -> gd.PackedStringArray:
        emit(editor_warnings="GameOnly", editor=bool(gd.singleton("Engine").is_editor_hint()))
        return gd.PackedStringArray(["GameOnly warning"])
