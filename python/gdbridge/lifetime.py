"""The lifetime of Python-defined RefCounted objects: when Python holds an engine reference for
one, and when its Python object is kept strongly (`interface.instances`) or weakly
(`interface.weak_instances`). Engine calls go through `interface.call_engine`: this layer sits under
the Python proxy classes (`gdbridge.objects`), which hand it arrivals, and the class registration
(`gdbridge.classdb`), which hands it creations and frees.
"""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from typing import Any

from gdbridge import interface

# ---- Python-defined RefCounted objects arriving in Python ----
# One the engine made carries no Python reference (its count is the engine's own, as in godot-cpp).
# When it arrives (an argument, an engine call's result) it takes one at once, so the engine cannot
# free it under Python; one Python makes (`Tally()`) holds one from the start. At the end of the
# engine's callback `settle_arrivals` gives that reference back unless Python kept the object
# (stored it: more references than the bookkeeping's own); a kept one stays owned until Python's
# references go (see "RefCounted lifetime" below).
arrivals: list[Any] = []
# Those Python holds an engine reference for (`_gd_owns`) while `instances` also holds them (the
# engine holds references too, or the move to weak is pending): when nothing else refers to one,
# Python let go of it, and its engine reference is given back at the end of that callback, as a
# godot-cpp Ref<T> going out of scope (the count falls at once, or the object is freed).
held: dict[int, Any] = {}


def hold(obj: Any) -> None:
    if not held:
        interface.lib.gdb_watch_held(1)  # the C settle checks `held` only while it has members
    held[id(obj)] = obj


def unhold(iid: int) -> Any:
    """The held object of `iid` (None if it was not held), no longer held."""
    obj = held.pop(iid, None)
    if obj is not None and not held:
        interface.lib.gdb_watch_held(0)
    return obj


def arrive(obj: Any) -> None:
    """A Python-defined RefCounted object the engine made arrived in Python: it takes a reference."""
    interface.call_engine("RefCounted", "reference", obj._id)
    obj._gd_owns = True
    arrivals.append(obj)


def settle_arrivals() -> None:
    """The end of an engine callback: arrivals Python did not keep give their reference back."""
    while arrivals:
        obj = arrivals.pop()
        # `instances`, this name and getrefcount's argument: 3; more means Python kept it.
        if sys.getrefcount(obj) > 3:
            created_by_python(obj)
            continue
        obj._gd_owns = False
        if obj._ptr is not None and interface.call_engine("RefCounted", "unreference", obj._id):
            interface._iface["object_destroy"](obj._ptr)
    if held:
        release_dropped(interface._fast.dropped())


# ---- RefCounted lifetime ----
# A Python-defined RefCounted instance owns one engine reference (released by its __del__). While
# the engine holds more, `instances` keeps the Python object alive; when the count falls back to
# Python's own reference, the object moves to `interface.weak_instances` and Python's references alone
# decide. The move is deferred to the main loop: dropping the object inside the engine's unreference
# is not safe.
_pending_weak: set[int] = set()
_weakener_class: list[type] = []
_weakener: list[Any] = []  # made on first use: objects made at start-up crash a late-loading editor


# Moves between strong and weak happen under one lock: engine calls release the GIL, and another
# thread may take or drop a reference in between.
moving = threading.RLock()


def reference_changed(iid: int, up: int) -> None:
    with moving:
        if up:
            found = interface.weak_instances.pop(iid, None)
            obj = found() if found is not None else None
            if obj is not None:
                interface.instances[iid] = obj
                hold(obj)
            return
        obj = interface.instances.get(iid)
        # Not during creation (Python's own init_ref): the creator holds no Python reference yet.
        if obj is not None and obj._gd_owns:
            _schedule_weaken(iid)


def created_by_python(obj: Any) -> None:
    """Python built or kept `obj` (and holds it): unless the engine takes references, it goes weak."""
    hold(obj)
    _schedule_weaken(id(obj))


def release_dropped(iids: list[int]) -> None:
    """Python let go of these held objects: their engine reference goes now (at a callback's end,
    where settle_arrivals gives references back too); the engine frees one it does not hold."""
    for iid in iids:
        with moving:
            obj = unhold(iid)
            if obj is None or not obj._gd_owns:
                continue
            obj._gd_owns = False
            _pending_weak.discard(iid)
        if obj._ptr is not None and interface.call_engine("RefCounted", "unreference", obj._id):
            interface._iface["object_destroy"](obj._ptr)
        del obj


def _schedule_weaken(iid: int) -> None:
    first = not _pending_weak
    _pending_weak.add(iid)
    if first:
        _kick_weakener()


def _kick_weakener() -> None:
    if not _weakener_class:
        return  # before SCENE start-up ends: install_weakener kicks it
    if not _weakener:
        _weakener.append(_weakener_class[0]())
    _weakener[0].call_deferred("weaken_pending")


def weaken_pending() -> None:
    while _pending_weak:
        with moving:
            iid = _pending_weak.pop()
            obj = interface.instances.get(iid)
            if obj is not None and obj._ptr is not None and _reference_count(obj) <= 1:
                del interface.instances[iid]
                unhold(iid)
                interface.weak_instances[iid] = weakref.ref(obj)
            del obj  # may be the last reference: __del__ releases the engine reference


def _reference_count(obj: Any) -> int:
    return interface.call_engine("RefCounted", "get_reference_count", obj._id)


def install_weakener(weakener_class: type) -> None:
    """The class of the object whose deferred call runs `weaken_pending` on the main loop (a
    Python-defined class: `gdbridge.classdb` makes it at the end of SCENE start-up)."""
    _weakener_class.append(weakener_class)
    if _pending_weak:
        _kick_weakener()


def forget(iid: int) -> Any:
    """The engine freed instance `iid`: its Python object (None if gone), in no table any more."""
    with moving:
        obj = interface.lookup(iid)
        interface.instances.pop(iid, None)
        interface.weak_instances.pop(iid, None)
        unhold(iid)
        _pending_weak.discard(iid)
    return obj


def remove_weakener() -> None:
    weaken_pending()
    gc.collect()
    weaken_pending()
    while _weakener:
        _weakener.pop().free()
