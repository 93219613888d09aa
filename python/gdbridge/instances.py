"""Instances of Python-declared classes: the engine asks for one (create), frees one, or after a
library reload gives its objects back their Python objects (recreate); Python constructing one
(`Wanderer()`) goes through `construct`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from gdbridge import interface, lifetime, objects
from gdbridge.classinfo import ClassInfo, classes, interface_function
from gdbridge.interface import state
from gdbridge.types import VariantType

T = VariantType


# ---- instances ----
def create(cid: int, notify: int) -> Any:
    info = classes[cid]
    ptr = interface._iface["classdb_construct_object2"](interface.sn(info.native))
    _attach(info, ptr, notify)
    return ptr


def recreate(cid: int, ptr: Any) -> int:
    """The engine reloaded the library: the Python object it had before for this engine object
    (a new one if there was none); the engine sets its stored properties again next."""
    ffi, lib = interface.ffi, interface.lib
    info = classes[cid]
    obj = _detached.pop(lib.gdb_object_id(ptr), None)
    if obj is None:
        return id(_attach(info, ptr, 0))
    if type(obj) is not info.cls:
        obj.__class__ = info.cls
    iid = id(obj)
    interface.instances[iid] = obj
    if obj._gd_owns:
        lifetime.created_by_python(obj)
    interface_function("object_set_instance", "GDExtensionInterfaceObjectSetInstance")(
        ptr, interface.sn(info.name), ffi.cast("void*", iid)
    )
    interface_function("object_set_instance_binding", "GDExtensionInterfaceObjectSetInstanceBinding")(
        ptr, lib.gdb_get_library(), ffi.cast("void*", iid), lib.gdb_binding_callbacks_ptr()
    )
    return iid


def _attach(info: ClassInfo, ptr: Any, notify: int) -> Any:
    ffi, lib = interface.ffi, interface.lib
    cls = info.cls
    obj = object.__new__(cls)
    obj._ptr = ptr
    obj._id = lib.gdb_object_id(ptr)
    obj._gd_owns = False
    # The instance pointer given to the engine is the Python object's address (the C fast paths
    # call it directly); `instances` keeps the object alive until the engine frees it.
    iid = id(obj)
    interface.instances[iid] = obj
    interface_function("object_set_instance", "GDExtensionInterfaceObjectSetInstance")(
        ptr, interface.sn(info.name), ffi.cast("void*", iid)
    )
    interface_function("object_set_instance_binding", "GDExtensionInterfaceObjectSetInstanceBinding")(
        ptr, lib.gdb_get_library(), ffi.cast("void*", iid), lib.gdb_binding_callbacks_ptr()
    )
    from_python = getattr(_constructing, "python", False)
    _constructing.python = False  # objects __init__ makes are not Python's unless it asks for them
    if cls._gd_refcounted and from_python:
        # Made by Python code (`Counter()`): Python holds one engine reference for as long as the
        # Python object lives; `instances` holds the Python object strongly while the engine holds
        # more (see `lifetime.reference_changed`). Made by the engine (GDScript `Counter.new()`, a scene
        # load): no Python reference, so the count is the engine's own, as in godot-cpp.
        objects.engine_class("RefCounted").init_ref(obj)
        obj._gd_owns = True
    if type(obj).__init__ is not object.__init__:
        try:
            obj.__init__()
        except Exception as error:  # reported; the engine still gets its object
            interface.report(type(error), error, error.__traceback__)
    if notify:
        obj.notification(0)
    return obj


_constructing = threading.local()


@contextlib.contextmanager
def constructing_from_python() -> Iterator[None]:
    """Marks the engine construction Python asked for (create() then takes Python's reference)."""
    before = getattr(_constructing, "python", False)
    _constructing.python = True
    try:
        yield
    finally:
        _constructing.python = before


def construct(info: ClassInfo) -> Any:
    """The engine object of a Python-declared class Python constructs (`Wanderer()`), with its
    Python object attached (NULL when the engine made none)."""
    with constructing_from_python():
        if info.internal:  # the engine makes no unexposed class: its native base, then ours
            return create(info.cid, 0)
        return interface._iface["classdb_construct_object2"](interface.sn(info.name))


def free(cid: int, iid: int) -> None:
    with lifetime.moving:
        obj = lifetime.forget(iid)
        if obj is not None and state.get("library_reload"):
            # The engine reloads the library: its object stays, and gets this Python object back
            # from `recreate` (its Python state intact; the engine sets the stored properties again).
            _detached[obj._id] = obj
        elif obj is not None:
            obj._ptr = None
            obj._gd_owns = False


_detached: dict[int, Any] = {}  # engine object id -> its Python object, during a library reload


def drop_detached() -> None:
    """After a library reload: the objects whose class was not registered again are plain engine
    objects now."""
    while _detached:
        _, obj = _detached.popitem()
        if obj._gd_owns and obj.is_valid and objects.engine_class("RefCounted").unreference(obj):
            interface._iface["object_destroy"](obj._ptr)
        obj._ptr = None
        obj._gd_owns = False
