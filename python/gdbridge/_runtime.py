"""Start-up inside the engine: the `extern "Python"` callbacks, output redirection, entry modules.

`attach(ffi, lib, env)` is called by the extension library's embedded init code, once, before
the first engine callback reaches Python.
"""

from __future__ import annotations

import gc
import logging
import sys
import warnings
from pathlib import Path
from typing import Any

from gdbridge import (
    _variant,
    callables,
    classdb,
    instances,
    interface,
    lifetime,
    objects,
    project,
    properties,
)
from gdbridge.interface import report, state
from gdbridge.types import VARIANT_OF, NodePath, StringName, Vector2, Vector3

LEVEL_SCENE = 2
LEVEL_EDITOR = 3
# The cyclic garbage collector, tuned for a game's frames. At CPython's default (a young collection
# every 700 net new objects) a frame's own temporaries set one off nearly every frame, mid-frame, and
# it moves them to the old generations, so a full collection of every object (a hitch of tens of
# milliseconds with 1,000 NPCs) came every few seconds. At 10,000 young collections are rare and
# nearly every temporary is freed before one runs. Bounds: 700 (CPython's) to 100,000 (a young
# collection then walks up to that many objects, in one frame).
GC_YOUNG_THRESHOLD = 10_000
ffi: Any = None
lib: Any = None
_env: dict[str, Any] = {}


class _EngineStream:
    """sys.stdout / sys.stderr: complete lines go to the engine's print / printerr."""

    def __init__(self, function: str) -> None:
        self.function = function
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        if "\n" in self.pending:
            *lines, self.pending = self.pending.split("\n")
            out = getattr(objects.utility, self.function)
            for line in lines:
                out(line)
        return len(text)

    def flush(self) -> None:
        if self.pending:
            getattr(objects.utility, self.function)(self.pending)
            self.pending = ""

    def isatty(self) -> bool:
        return False


class _EngineLogHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        text = self.format(record)
        if record.levelno >= logging.ERROR:
            lib.gdb_error(text.encode(), b"")
        elif record.levelno >= logging.WARNING:
            lib.gdb_warning(text.encode(), b"")
        else:
            objects.utility.print(text)


def _show_warning(  # noqa: PLR0917 - the warnings.showwarning signature
    message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    lib.gdb_warning(f"{category.__name__}: {message}".encode(), f"  at {filename}:{lineno}".encode())


def _redirect_output() -> None:
    sys.stdout = _EngineStream("print")
    sys.stderr = _EngineStream("printerr")
    handler = _EngineLogHandler()
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level == logging.WARNING:
        root.setLevel(logging.INFO)
    warnings.showwarning = _show_warning


def _start_scene() -> None:
    _redirect_output()
    engine = objects.singleton("Engine")
    state["editor"] = bool(engine.is_editor_hint())
    # Loaded by a running editor (it found the addon while scanning) rather than at engine start.
    state["late_load"] = bool(engine.has_singleton("EditorInterface"))
    version = sys.version.split()[0]
    python = _env.get("python", "?")
    objects.utility.print(
        f"gdbridge: Python {version} ({python}; libpython {ffi.string(lib.gdb_libpython()).decode()})"
    )
    import importlib

    for module in project.entry_modules():
        try:
            importlib.import_module(module)
        except Exception as error:
            report(type(error), error, error.__traceback__)
        classdb.register_pending()
    state["scene_ready"] = True
    classdb.register_pending()
    classdb.install_weakener()
    _tune_collector()


def _tune_collector() -> None:
    """The collector for the game's frames (`GC_YOUNG_THRESHOLD`), and what start-up made (the
    modules, the engine API's wrappers: there for the life of the process) out of its full
    collections: `gc.freeze`. A module reloaded in the editor lets them back in (`reload`)."""
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)
    gc.freeze()


def attach(ffi_: Any, lib_: Any, env: dict[str, Any]) -> None:
    global ffi, lib
    ffi, lib = ffi_, lib_
    _env.update(env)
    _variant.bind(ffi, lib)
    objects.bind(ffi, lib, Path(env["api"]))
    # Borrowed by the C fast paths: all module-level, alive for the life of the process.
    lib.gdb_set_callbacks(
        id(report),
        id(_variant.read_raw_address),
        id(_variant.read_variant_address),
        id(_variant.packed_from_view),
        id(StringName),
        id(NodePath),
        ffi.cast("void*", _variant._dict_methods["keys"]),
        ffi.cast("void*", _variant._dict_methods["values"]),
        id(_variant.to_variant_address),
    )
    for vtype, dtype in _variant.NUMPY_DTYPES.items():
        if _variant.PACKED_DTYPES[vtype][1] == 1:
            lib.gdb_set_numpy(id(_variant.np.empty), vtype, id(dtype))
    for vector in (Vector2, Vector3):  # borrowed: module-level classes
        lib.gdb_set_vector_class(VARIANT_OF[vector], id(vector))
    lib.gdb_set_arrivals(id(lifetime.arrivals), id(lifetime.held), id(lifetime.settle_arrivals))
    lookup = interface.lookup
    # `settle` (in C) calls settle_arrivals when something arrived or a held object was let go.
    arrivals, held = lifetime.arrivals, lifetime.held
    import _gdbridge_fast

    settle = _gdbridge_fast.settle
    vcalls = classdb._vcalls
    ptrcalls = classdb._ptrcalls
    varcalls = classdb._varcalls

    @ffi.def_extern(onerror=report)
    def gdb_py_initialize(level: int) -> None:
        if state.get("library_reload"):
            if level == LEVEL_SCENE:
                classdb.register_again(LEVEL_SCENE)
            elif level == LEVEL_EDITOR:
                from gdbridge import editor

                editor.start()  # defines and registers the editor classes afresh
                state["library_reload"] = False
            return
        if level == LEVEL_SCENE:
            _start_scene()
        elif level == LEVEL_EDITOR:
            from gdbridge import editor

            editor.start()

    @ffi.def_extern(onerror=report)
    def gdb_py_deinitialize(level: int) -> None:
        # The engine reloading the library (the editor's main loop still runs): Python and its
        # objects stay; the classes are unregistered and registered again at initialize.
        if level not in (LEVEL_SCENE, LEVEL_EDITOR):
            return
        reload = state["editor"] and objects.singleton("Engine").get_main_loop() is not None
        if reload:
            state["library_reload"] = True
        if level == LEVEL_EDITOR:
            from gdbridge import editor

            editor.stop()
            classdb.unregister_all(level=LEVEL_EDITOR)
        elif level == LEVEL_SCENE:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            lifetime.remove_weakener()
            if not reload:
                objects.shutdown()
            classdb.unregister_all(level=LEVEL_SCENE)
            if not reload:
                interface.shutdown_names()

    @ffi.def_extern(onerror=report)
    def gdb_py_create(cid: int, notify: int) -> Any:
        return instances.create(cid, notify)

    @ffi.def_extern(onerror=report)
    def gdb_py_free(cid: int, iid: int) -> None:
        instances.free(cid, iid)

    @ffi.def_extern(onerror=report)
    def gdb_py_recreate(cid: int, ptr: Any) -> int:
        return instances.recreate(cid, ptr)

    @ffi.def_extern(onerror=report)
    def gdb_py_get_virtual(cid: int, name: Any) -> int:
        return classdb.get_virtual(cid, name)

    @ffi.def_extern(onerror=report)
    def gdb_py_virtual0(iid: int, vid: int) -> None:
        vcalls[vid](lookup(iid))
        if arrivals or held:
            settle()

    @ffi.def_extern(onerror=report)
    def gdb_py_virtual_f(iid: int, vid: int, x: float) -> None:
        vcalls[vid](lookup(iid), x)
        if arrivals or held:
            settle()

    @ffi.def_extern(onerror=report)
    def gdb_py_virtual(iid: int, vid: int, args: Any, ret: Any) -> None:
        vcalls[vid](lookup(iid), args, ret)
        if arrivals or held:
            settle()

    @ffi.def_extern(onerror=report)
    def gdb_py_notification(iid: int, what: int, reversed_: int) -> None:
        classdb.notification(iid, what, reversed_)
        if arrivals or held:
            settle()

    @ffi.def_extern(onerror=report)
    def gdb_py_ptrcall(mid: int, iid: int, args: Any, ret: Any) -> None:
        ptrcalls[mid](lookup(iid) if iid else None, args, ret)
        if arrivals or held:
            settle()

    def _call_error(exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        report(exc_type, exc, tb)

    @ffi.def_extern(onerror=_call_error)
    def gdb_py_call(  # noqa: PLR0917 - the engine's callback signature
        mid: int, iid: int, args: Any, n: int, ret: Any, err: Any
    ) -> None:
        code, expected, argument = varcalls[mid](lookup(iid) if iid else None, args, n, ret)
        if arrivals or held:
            settle()
        if code:
            err.error = code
            err.expected = expected
            err.argument = argument

    @ffi.def_extern(onerror=report)
    def gdb_py_validate_property(iid: int, info: Any) -> int:
        return properties.validate_property(iid, info)

    @ffi.def_extern(onerror=report)
    def gdb_py_callable_call(cid: int, args: Any, n: int, ret: Any, err: Any) -> None:
        callables.call_function(cid, args, n, ret)
        if arrivals or held:
            settle()

    @ffi.def_extern(onerror=report)
    def gdb_py_callable_free(cid: int) -> None:
        callables.free_function(cid)

    @ffi.def_extern(onerror=report)
    def gdb_py_reference(iid: int, up: int) -> None:
        lifetime.reference_changed(iid, up)

    @ffi.def_extern(onerror=report)
    def gdb_py_to_string(iid: int, valid: Any, out: Any) -> None:
        properties.to_string(iid, valid, out)

    @ffi.def_extern(onerror=report)
    def gdb_py_property(iid: int, op: int, name: Any, value: Any) -> int:
        return properties.property_hook(iid, op, name, value)

    @ffi.def_extern(onerror=report)
    def gdb_py_property_list(iid: int, count: Any) -> Any:
        return properties.property_list(iid, count)

    @ffi.def_extern(onerror=report)
    def gdb_py_free_property_list(iid: int, array: Any) -> None:
        properties.free_property_list(iid, array)

    @ffi.def_extern(onerror=report)
    def gdb_py_callable_info(cid: int, what: int, other: int) -> int:
        return callables.function_info(cid, what, other)

    @ffi.def_extern(onerror=report)
    def gdb_py_callable_to_string(cid: int, valid: Any, out: Any) -> None:
        callables.function_text(cid, valid, out)
