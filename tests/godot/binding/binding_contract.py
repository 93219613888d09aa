"""Python classes for tests/godot/binding/contract.gd: the binding held to what a godot-cpp class does
(utility functions, object identity and lifetime, reference counts, typed containers, notifications,
bitfields, varargs, mixins). Run by tests/test_binding_contract.py."""

from __future__ import annotations

import enum
import math
import sys
import threading
import typing
from typing import Any

import numpy as np

import gdbridge as gd
from gdbridge import interface, objects
from gdbridge.classes import Expression, Mesh, Node, Object, RefCounted, Resource, StandardMaterial3D

# Utilities with side effects (output, the global random state) or random results: called, their
# result type checked, not compared with GDScript's.
NOISY = {"print", "print_rich", "printerr", "printt", "prints", "printraw", "print_verbose", "push_error",
         "push_warning", "randomize", "seed"}  # fmt: skip
RANDOM = {"randi", "randf", "randi_range", "randf_range", "randfn", "rid_allocate_id"}
SAMPLE = {"float": 0.75, "int": 3, "bool": True, "Variant": 0.75, "String": "x"}


_KEPT_NAME = gd.StringName("kept")
_fresh_ids: list[int] = []  # id() of each fresh key Contract.keyed made
_kept_keys: list = []  # argument keys Contract.keep_keys kept, to read again later



def _refused_off_main(call: Any, *args: Any) -> bool:
    """Whether `call(*args)` on another thread raises the RuntimeError "main thread only"."""
    caught: list[str] = []

    def off_main() -> None:
        try:
            call(*args)
        except RuntimeError as error:
            caught.append(str(error))

    worker = threading.Thread(target=off_main)
    worker.start()
    worker.join()
    return len(caught) == 1 and "main thread only" in caught[0]

class Flags(enum.IntFlag):
    """A class bitfield (ClassDB.is_class_enum_bitfield)."""

    NEAR = 1
    LOUD = 2
    BRIGHT = 4


class Tally(RefCounted):
    """A Python-defined RefCounted: its reference count must be the engine's own."""

    count: int = gd.export(0)

    def bump(self) -> int:
        self.count += 1
        return self.count


class Lifecycle:
    """A plain Python mixin: its methods, signal and `_notification` become the class's."""

    started = gd.signal(value=int)

    def mixin_hello(self) -> str:
        return f"hello from {self.get_class()}"

    def _notification(self, what: int) -> None:
        if what in (0, 10, 11):
            self.log.append(f"mixin {what}")


class Base(Node):
    """Parent of Derived: its `_notification` runs before (forward) or after (reversed) the child's."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def _notification(self, what: int) -> None:
        if what in (0, 10, 11):
            self.log.append(f"base {what}")

    def history(self) -> gd.PackedStringArray:
        return gd.PackedStringArray(self.log)


class Derived(Lifecycle, Base):
    def _notification(self, what: int) -> None:
        if what in (0, 10, 11):
            self.log.append(f"derived {what}")


class Quiet(Base):
    """No `_notification` of its own: its parent's still runs."""


class FamilyCurve(Resource):
    """Dynamic properties: only the chosen family's parameters exist (and are saved)."""

    family: str = gd.export("linear")
    _fine = gd.export_group("Tuning")
    _finer = gd.export_subgroup("Fine", "fine_")
    fine_step: float = gd.export(0.5)

    DEFAULTS: typing.ClassVar[dict[str, float]] = {"slope": 1.0, "exponent": 2.0}
    FAMILIES: typing.ClassVar[dict[str, list[str]]] = {"linear": ["slope"], "power": ["exponent"]}

    def __init__(self) -> None:
        self.params = dict(self.DEFAULTS)
        self.reads = 0

    def _get_property_list(self) -> list[dict]:
        return [{"name": name, "type": float} for name in self.FAMILIES.get(self.family, [])]

    def _get(self, name: str) -> Any:
        self.reads += 1
        return self.params.get(name)

    def _set(self, name: str, value: Any) -> bool:
        if name not in self.params:
            return False
        self.params[name] = float(value)
        return True

    def _property_can_revert(self, name: str) -> bool:
        return name in self.params and self.params[name] != self.DEFAULTS[name]

    def _property_get_revert(self, name: str) -> Any:
        return self.DEFAULTS.get(name)

    def read_count(self) -> int:
        return self.reads


class PyMesh(Mesh):
    """Engine virtuals with a typed-array result and a Ref<Material> result."""

    def __init__(self) -> None:
        self.material = StandardMaterial3D()
        self.blend = [[1, 2], [3]]

    def _get_surface_count(self) -> int:
        return 1

    def _surface_get_blend_shape_arrays(self, index: int) -> list:
        return self.blend

    def _surface_get_material(self, index: int) -> Object:
        return self.material

    def set_blend(self, blend: list) -> None:
        self.blend = blend


class Hittable(Node):
    """Declares a virtual method a GDScript extending it overrides."""

    @gd.virtual
    def _on_hit(self, damage: int) -> int:
        return damage + 1

    @gd.virtual(required=True)
    def _describe(self) -> str:
        return "no description"

    def hit(self, damage: int) -> int:
        return self._on_hit(damage)

    def describe(self) -> str:
        return self._describe()


# What a module global keeps (contract.gd's release checks store and delete it).
kept_in_module: Any = None


_notes: list[list] = []  # every Noted.note call in the order Python received it


_NOTE_ROW = np.dtype([("key", np.int64), ("a", np.int64), ("x", np.float64)])


def _take_notes(raw: bytes) -> None:
    """The queued `Noted.note` calls as bytes: each row (key, a, x), 8 bytes a number; the last
    item says the row was read as the declared types (int, int, float)."""
    for key, a, x in np.frombuffer(raw, dtype=_NOTE_ROW).tolist():
        _notes.append(["queued", key, a, x, type(key) is int and type(a) is int and type(x) is float])


class Noted(Node):
    """`note` is a queued method (gd.queued): its calls with a in [0, 9] and a finite x, from the
    main thread, on an instance with a key, reach Python only through `_take_notes`."""

    @gd.queued(_take_notes, a=(0, 9))
    def note(self, a: int, x: float) -> None:
        main = threading.get_ident() == objects.MAIN_THREAD
        _notes.append(["python", a, x if math.isfinite(x) else str(x), main])

    def key(self, key: int) -> None:
        objects.queue_calls(self, key)

    def key_of_plain_object(self) -> str:
        """A key for a Python object the engine does not know is refused (never taken back)."""
        try:
            objects.queue_calls(object(), 3)
        except TypeError as error:
            return f"TypeError: {error}"
        return "accepted"

    def notes(self) -> list:
        """The log so far (this call itself takes the queued ones first), then empty."""
        log = list(_notes)
        _notes.clear()
        return log

    def notes_after(self, target: Object, how: str) -> list:
        """`target.make_notes(self)` called from Python (as a method, or through a Callable): the
        log Python sees the moment that engine call returns."""
        if how == "method":
            target.call("make_notes", self)
        else:
            gd.as_callable(target, "make_notes")(self)
        return self.notes()

    def queued_total(self) -> int:
        return objects.queued_total()

    @gd.answered(note)
    def level(self, a: int) -> int:
        """Python's answer (the table's, in these checks, are below 100)."""
        return 1000 + a

    def answer(self, pairs: list, streams: list) -> None:
        """Set `level`'s table: pairs [key, a, answer], streams [key, budget, written]."""
        keys, ids, answers = zip(*pairs, strict=True) if pairs else ((), (), ())
        stream_keys, budgets, written = zip(*streams, strict=True) if streams else ((), (), ())
        objects.answer_table(Noted.level).set(keys, ids, answers, stream_keys, budgets, written)

    def close_answers(self, key: int) -> None:
        objects.answer_table(Noted.level).close(key)

    def clear_answers(self) -> None:
        objects.answer_table(Noted.level).clear()

    def asked(self) -> list:
        return [list(pair) for pair in objects.answer_table(Noted.level).asked()]

    def answered_total(self) -> int:
        return objects.answered_total()

    @gd.apart
    def apart_notes(self) -> int:
        """How many notes Python has so far: the calls queued before this one are not taken."""
        return len(_notes)


class Hidden(RefCounted, internal=True):
    """Registered, not exposed (godot-cpp's GDREGISTER_INTERNAL_CLASS): Python makes it, GDScript
    cannot."""

    def answer(self) -> int:
        return 42


class Sketch(Node, abstract=True):
    """Abstract: only its subclasses are made."""


class Drawing(Sketch):
    """A concrete subclass of an abstract Python class."""


class Announcer:
    """A Python callable with its own __str__ (what str() of its Callable shows)."""

    def __call__(self) -> str:
        return "announced"

    def __str__(self) -> str:
        return "the announcer"


class Contract(Node):
    """Every check's Python side."""

    pinged = gd.signal(value=int)

    Flags = Flags

    flags: Flags = gd.export(Flags.NEAR)
    tally_list: list[Tally] = gd.export([])
    score_table: dict[str, int] = gd.export({})
    # The element type given by hint instead of annotation (as the addon's nodes declare theirs).
    curves: list = gd.export([], hint=gd.PropertyHint.ARRAY_TYPE, hint_string="24/17:FamilyCurve")

    def __init__(self) -> None:
        self.held: Any = None
        self.kept: Any = None

    # -- utilities --
    def utilities_agree(self) -> gd.PackedStringArray:
        """Every global utility called from Python, compared with the same call in GDScript
        (an Expression); the ones that disagree, fail or return the wrong type."""
        bad = []
        own_id = self.get_instance_id()
        seven = gd.utility.var_to_bytes(7)
        special: dict[str, tuple[Any, ...]] = {
            "str_to_var": ("[1, 2]",), "instance_from_id": (own_id,), "is_instance_id_valid": (own_id,),
            "weakref": (self,), "is_instance_valid": (self,), "is_same": (self, self),
            "bytes_to_var": (seven,), "bytes_to_var_with_objects": (seven,),
            "max": (1, 2.5, -1), "min": (1, 2.5, -1), "str": (1, "a", gd.Vector2(1, 2)),
            "type_convert": (2.5, 2),
        }  # fmt: skip
        for name, (_, _, arg_types, _) in objects.API["utility"].items():
            args = special.get(name) or tuple(SAMPLE.get(t, 3) for t in arg_types)
            if name in NOISY:
                continue
            try:
                got = getattr(gd.utility, name)(*args)
            except Exception as error:  # reported as a failed check
                bad.append(f"{name}: {type(error).__name__}: {error}")
                continue
            if name in RANDOM:
                if not isinstance(got, int | float | gd.RID):
                    bad.append(f"{name}: {got!r}")
                continue
            expression = Expression()
            names = [f"a{i}" for i in range(len(args))]
            expression.parse(f"{name}({', '.join(names)})", gd.PackedStringArray(names))
            want = expression.execute(list(args))
            if not _same(got, want):
                bad.append(f"{name}{args}: python {got!r}, gdscript {want!r}")
        return gd.PackedStringArray(bad)

    def utility_errors(self) -> gd.PackedStringArray:
        """Wrong counts and types raise TypeError in Python, before the engine is called."""
        caught = []
        calls = (
            lambda: gd.utility.str(),  # noqa: PLW0108 - each one a separate call
            lambda: gd.utility.lerpf("a", 1, 0.5),
            lambda: gd.utility.lerpf(1, 2),
            lambda: gd.utility.max(1),
            lambda: gd.utility.nope(),  # noqa: PLW0108
        )
        for call in calls:
            try:
                call()
            except (TypeError, AttributeError) as error:
                caught.append(type(error).__name__)
        return gd.PackedStringArray(caught)

    def str_of(self, a: gd.Variant, b: gd.Variant) -> str:
        return gd.utility.str(a, b)

    # -- objects --
    def emit_many(self) -> list:
        """Four `pinged` emissions in one crossing (`objects.emit_signals`): 1; one for a freed
        object (skipped); one whose argument does not convert (reported, the rest go on); 3."""
        freed = Node()
        freed_id = freed._id
        freed.free()
        name = gd.StringName("pinged")
        calls = [(self._id, name, 1), (freed_id, name, 2), (self._id, name, object()), (self._id, name, 3)]
        return [list(failure) for failure in objects.emit_signals(calls)]

    def collector(self) -> list:
        """The garbage collector as start-up left it: its young threshold, and whether start-up's
        objects were frozen out of its full collections."""
        import gc

        from gdbridge import _runtime

        return [gc.get_threshold()[0] == _runtime.GC_YOUNG_THRESHOLD, gc.get_freeze_count() > 10_000]

    def poses_of(self, ids: gd.PackedInt64Array, dimension: int) -> gd.PackedFloat64Array:
        """Each node's position and unit facing in one crossing (`interface.node_poses`)."""
        out = np.empty(len(ids) * 2 * dimension)
        interface.node_poses(np.asarray(ids, dtype=np.uint64), dimension, out)
        return gd.PackedFloat64Array(out.tolist())

    def poses_refused(self) -> list:
        """node_poses' clear errors: an output of the wrong size, a bad dimension, another thread."""
        refused = []
        for out, dimension in ((np.empty(3), 2), (np.empty(4), 4)):
            try:
                interface.node_poses(np.zeros(1, dtype=np.uint64), dimension, out)
            except ValueError as error:
                refused.append(type(error).__name__)
        off_main = _refused_off_main(interface.node_poses, np.zeros(1, dtype=np.uint64), 2, np.empty(4))
        return [*refused, off_main]

    def move_many(
        self, ids: gd.PackedInt64Array, dimension: int, velocities: gd.PackedFloat64Array,
        yaws: gd.PackedFloat64Array, modes: gd.PackedByteArray,
    ) -> None:  # fmt: skip
        """Many bodies' moves in one crossing (`interface.move_bodies`)."""
        interface.move_bodies(
            dimension, np.asarray(ids, dtype=np.uint64), np.asarray(velocities, dtype=np.float64),
            np.asarray(yaws, dtype=np.float64), np.asarray(modes, dtype=np.uint8),
        )  # fmt: skip

    def moves_refused(self) -> list:
        """move_bodies' clear errors: velocities of the wrong size, modes of the wrong size, a bad
        dimension, another thread."""
        one = np.zeros(1, dtype=np.uint64)
        refused = []
        for dimension, velocities, modes in ((2, np.zeros(3), np.zeros(1, np.uint8)),
                                             (2, np.zeros(2), np.zeros(2, np.uint8)),
                                             (4, np.zeros(4), np.zeros(1, np.uint8))):  # fmt: skip
            try:
                interface.move_bodies(dimension, one, velocities, np.zeros(1), modes)
            except ValueError as error:
                refused.append(type(error).__name__)
        byte = np.zeros(1, np.uint8)
        off_main = _refused_off_main(interface.move_bodies, 2, one, np.zeros(2), np.zeros(1), byte)
        return [*refused, off_main]

    def object_kind(self, obj: Object) -> str:
        return _kind(obj)

    def object_kind_untyped(self, obj: gd.Variant) -> str:
        return _kind(obj)

    def hold(self, obj: Object) -> None:
        self.held = obj

    def held_state(self) -> str:
        return _kind(self.held)

    def held_is(self, obj: Object) -> bool:
        return self.held == obj

    def held_use_error(self) -> str:
        """Using a freed wrapper raises GodotError (it never reaches the freed memory); its repr and
        hasattr still answer."""
        try:
            self.held.get_name()
        except gd.GodotError as error:
            return f"{error}; {self.held!r}; {hasattr(self.held, 'script_member')}"
        return "no error"

    def held_valid_by_utility(self) -> bool:
        return gd.utility.is_instance_valid(self.held)

    # -- reference counts --
    def touch(self, tally: Tally) -> int:
        return tally.bump()

    def touch_untyped(self, tally: gd.Variant) -> int:
        return tally.bump()

    def store(self, tally: Tally) -> None:
        self.kept = tally

    def kept_count(self) -> int:
        return self.kept.count

    def keep_in_module(self, obj: RefCounted) -> None:
        global kept_in_module  # noqa: PLW0603 - the module global is the point
        kept_in_module = obj

    def make_kept_in_module(self) -> Tally:
        """A Tally Python makes and keeps in the module global."""
        global kept_in_module  # noqa: PLW0603
        kept_in_module = Tally()
        return kept_in_module

    def drop_from_module(self) -> None:
        """Python's last reference goes: the engine must see it at once (count down, or freed)."""
        global kept_in_module  # noqa: PLW0603
        del kept_in_module

    # -- value types, typed containers --
    def grid(self) -> dict:
        return {gd.Vector2i(x, y): x * 10 + y for x in range(3) for y in range(3)}

    def grid_lookup(self, grid: dict) -> int:
        return grid[gd.Vector2i(2, 1)] + grid[gd.Vector2(0.5, 1)] + grid[gd.Color(1, 0, 0, 1)]

    def hashing(self) -> bool:
        points = {
            gd.Vector2(1, 2),
            gd.Vector2(1, 2),
            gd.Vector3(1, 2, 3),
            gd.Vector2i(1, 2),
            gd.Color(1, 0, 0),
        }
        return len(points) == 4 and hash(gd.Vector3i(1, 2, 3)) == hash(gd.Vector3i(1, 2, 3))

    def tallies(self) -> list[Tally]:
        made = [Tally(), Tally()]
        made[1].bump()
        return made

    def ints(self) -> list[int]:
        return [1, 2, 3]

    def count_names(self, names: list[str]) -> int:
        return len(names)

    def scores(self) -> dict[str, int]:
        return {"a": 1, "b": 2}

    def score_sum(self, table: dict[str, int]) -> int:
        return sum(table.values())

    # -- String keys, both directions, through the C layer's caches of texts --
    def keyed(self, n: int) -> dict:
        """Keys that repeat (literals), change every call (a new interned str, freed after the call,
        so a later one can be made at its address), are not ASCII, or are a StringName."""
        fresh = sys.intern(f"fresh-{n}-ü")
        _fresh_ids.append(id(fresh))
        built = "".join(["ent", "ity"])  # equal to the literal key "entity", another str object
        name = gd.StringName("name")
        return {"entity": n, fresh: n, sys.intern("mémoire"): n % 7, name: n, "été": "valeur", "label": built}

    def fresh_ids_reused(self) -> int:
        """How many of keyed()'s fresh keys were made at an address an earlier one had."""
        return len(_fresh_ids) - len(set(_fresh_ids))

    def named(self, n: int) -> gd.StringName:
        """A StringName result: one kept (the same object every call), a new one, or a plain str."""
        return (_KEPT_NAME, gd.StringName(f"nom-{n}-é"), f"plain-{n}", sys.intern(f"interned-{n}"))[n % 4]

    def texted(self, n: int) -> str:
        return ("littéral", "literal", f"fresh-{n}", sys.intern(f"interned-{n}"))[n % 4]

    def name_text(self, name: gd.StringName) -> str:
        return f"{type(name).__name__}:{name}"

    def key_kinds(self, table: dict) -> list[str]:
        return [f"{type(key).__name__}:{key}" for key in table]

    def item_kinds(self, table: dict) -> list[str]:
        """Each key and value of an argument Dictionary as `type:text=type:text`, in order."""
        return [f"{type(k).__name__}:{k}={type(v).__name__}:{v}" for k, v in table.items()]

    def keep_keys(self, table: dict) -> None:
        _kept_keys.extend(table)

    def kept_keys(self) -> list[str]:
        return [f"{type(key).__name__}:{key}" for key in _kept_keys]

    # -- bitfields, varargs --
    def combine(self, a: Flags, b: Flags) -> Flags:
        return a | b

    def flag_type(self) -> str:
        return type(self.flags).__name__

    # -- callables --
    def _heard(self, value: int) -> None:
        self.heard.append(value)

    def callable_facts(self) -> list:
        """Callables made from Python: equal when made from the same function (so is_connected and
        disconnect work), their real argument count, bind/unbind/call."""
        self.heard: list[int] = []
        facts = []
        self.pinged.connect(self._heard)
        facts.append(self.pinged.is_connected(self._heard))
        self.pinged.emit(1)
        self.pinged.disconnect(self._heard)
        facts.append(not self.pinged.is_connected(self._heard))
        self.pinged.emit(2)
        facts.append(self.heard == [1])
        facts.append(gd.as_callable(self._heard) == gd.as_callable(self._heard))
        facts.append(hash(gd.as_callable(self._heard)) == hash(gd.as_callable(self._heard)))
        product = gd.as_callable(lambda a, b: a * b)
        facts.append(product.get_argument_count() == 2 and product != gd.as_callable(lambda a, b: a * b))
        bound = product.bind(5)
        facts.append(bound(3) == 15 and bound.get_argument_count() == 1)
        dropped = gd.as_callable(self._heard).unbind(1)
        dropped(7, "ignored")
        facts.append(self.heard == [1, 7] and dropped.get_argument_count() == 2)
        method = gd.as_callable(self, "hit_count")
        facts.append(method.get_object() == self and method.get_method() == "hit_count")
        return facts

    def hit_count(self) -> int:
        return len(self.heard)

    def python_callable(self) -> gd.Variant:
        return gd.as_callable(lambda a, b, c: a + b + c)

    def announcer(self) -> gd.Variant:
        return gd.as_callable(Announcer())

    def abstract_from_python(self) -> str:
        """Creating an abstract Python class from Python: the TypeError's message."""
        try:
            Sketch()
        except TypeError as error:
            drawing = Drawing()
            made = drawing.get_class()
            drawing.free()
            return f"{error} | {made}"
        return "no error"

    def internal_from_python(self) -> RefCounted:
        return Hidden()

    def library_paths(self) -> gd.PackedStringArray:
        """gd.library_path() and the file the dynamic loader mapped this library from."""
        return [gd.library_path(), interface.ffi.string(interface.lib.gdb_library_path()).decode()]

    def made_from_python(self) -> gd.PackedStringArray:
        """POSTINITIALIZE reaches an object Python makes, through every class of its chain."""
        node = Derived()
        history = node.history()
        node.free()
        return history

    def joined(self, sep: str, *parts: gd.Variant) -> str:
        return sep.join(str(part) for part in parts)


def _kind(obj: Any) -> str:
    if obj is None:
        return "none"
    if not obj.is_valid:
        return "freed" if not obj else "freed but truthy"
    return f"valid {obj.get_class()}"


def _same(got: Any, want: Any) -> bool:
    if isinstance(got, np.ndarray) or isinstance(want, np.ndarray):
        return isinstance(got, np.ndarray) and isinstance(want, np.ndarray) and np.array_equal(got, want)
    if isinstance(got, float) and isinstance(want, float) and math.isnan(got) and math.isnan(want):
        return True
    if isinstance(got, Object) and isinstance(want, Object) and got.get_class() == "WeakRef":
        return want.get_class() == "WeakRef"
    return type(got) is type(want) and got == want


def _game() -> bool:
    # The editor makes an instance of every class (for its defaults): Broken breaks only in a game.
    return not gd.singleton("Engine").is_editor_hint()


class Broken(Resource):
    """Every hook raises: the engine must report each with its traceback and keep running."""

    def add_failing_frame_hook(self) -> bool:
        """A frame hook that raises every frame: reported once, its repeats counted."""

        def broken_frame_hook() -> None:
            raise ValueError("broken frame hook")

        return interface.add_frame_hook(broken_frame_hook)

    def frame_hook_failures(self) -> int:
        failures = interface.frame_hook_failures().items()
        return sum(count for cause, count in failures if "broken_frame_hook" in cause)

    def _get_property_list(self) -> list[dict]:
        if _game():
            raise ValueError("broken property list")
        return []

    def _get(self, name: str) -> Any:
        if _game():
            raise ValueError(f"broken get {name}")
        return None

    def _set(self, name: str, value: Any) -> bool:
        if _game():
            raise ValueError(f"broken set {name}")
        return False

    def _notification(self, what: int) -> None:
        if what == 0 and _game():
            raise ValueError("broken postinitialize")

    def takes_int(self, value: int) -> int:
        return value

    def takes_object(self, obj: Object) -> str:
        return obj.get_class()

    def bad_result(self) -> int:
        return "not an int"  # type: ignore[return-value]

    def bad_typed_list(self) -> list[int]:
        return ["not", "ints"]  # type: ignore[list-item]

    def looped_result(self) -> list:
        """A list that contains itself as a result: refused before it reaches the engine."""
        looped: list = [1]
        looped.append(looped)
        return looped

    def looped_dict_result(self) -> dict:
        looped: dict = {"a": 1}
        looped["self"] = looped
        return looped

    def looped_typed_result(self) -> list[list]:
        looped: list = [[1]]
        looped[0].append(looped)
        return looped

    def bad_class_list(self) -> list[Tally]:
        return [FamilyCurve()]  # the engine's typed constructor refuses it

    def returns_freed(self) -> Object:
        node = Node()
        node.free()
        return node
