"""Small helpers shared by the nodes: the server singleton, project settings, icons, the thread rule."""

from __future__ import annotations

import logging
import sys
import threading
from typing import TYPE_CHECKING, Any

from gdbridge import interface, objects
from npc_mind.server import WrongThreadError
from npc_mind_godot import mistakes

_log = logging.getLogger(__name__)

ICONS = "res://addons/npc_mind/icons/"
NOTIFICATION_PREDELETE = 1


def icon(name: str) -> str:
    return f"{ICONS}{name}.svg"


def project_setting(name: str, default: Any) -> Any:
    """Settings read at runtime always pass their default: the plugin (which declares them) is optional."""
    settings = objects.singleton("ProjectSettings")
    if not settings.has_setting(name):
        return default
    return settings.get_setting(name)


installed: list[Any] = []  # the NpcMindServer singleton, once `server_singleton.install` made it


def engine_script(source: str) -> Any:
    """An instance of a GDScript (a RefCounted) made from `source`: a loop over many nodes that runs
    at the engine's own cost, called from Python once a frame with packed arrays in and out (an
    engine call from Python costs about ten times GDScript's)."""
    from gdbridge import classes

    script = classes.GDScript()
    script.set_source_code(source)
    script.reload()
    return script.new()


def instance() -> Any:
    """The `NpcMindServer` singleton's Python object (installed by `server_singleton.install`)."""
    if not installed:
        raise RuntimeError("the NpcMindServer singleton is not installed (is the npc_mind addon loaded?)")
    return installed[0]


server = instance  # what the nodes call it


_core: list[Any] = []  # the singleton's MindServer, once looked up (it is created once a process)
MAIN_THREAD = objects.MAIN_THREAD
thread_id = threading.get_ident
# the update thread's id while the server has one (NpcMindServer.update_on_thread), else 0: it runs
# the server's update while the main thread waits before it enters Python (`threaded`)
UPDATE_THREAD = [0]


def core() -> Any:
    """The singleton's engine-agnostic `MindServer`, for the calling node or the singleton itself.

    The thread rule lives here, the one door to the server's state: npc_mind is main-thread only
    (nothing in it is locked; two threads in one pool corrupt it), so a call from any other thread
    raises `WrongThreadError` before anything is touched. From a GDScript `Thread`, use
    `call_deferred` / `call_thread_safe`, which run the call on the main thread. Cost: one thread
    id comparison per call. MemoryStream's per-frame methods make the same comparison inline
    (`thread_id() != MAIN_THREAD`, then `refuse_thread(1)`): one Python frame less per call. The
    one other thread let in is the server's own update thread (`threaded`), while the main thread
    waits for it.
    """
    if thread_id() != MAIN_THREAD and thread_id() != UPDATE_THREAD[0]:
        refuse_thread(2)
    if not _core:
        _core.append(server().mind)
    return _core[0]


def on_main_thread() -> bool:
    return thread_id() == MAIN_THREAD


def refuse_thread(depth: int) -> None:
    """Raise the `WrongThreadError` naming the node or singleton method `depth` frames up (only on
    this error path)."""
    frame = sys._getframe(depth)
    while frame.f_back is not None and frame.f_code.co_name == "core":  # the singleton's `core` property
        frame = frame.f_back
    raise WrongThreadError(
        f"{frame.f_code.co_qualname}() called from a non-main thread: npc_mind's nodes and NpcMindServer "
        "are main-thread only; from a Thread use call_deferred() or call_thread_safe()"
    )


class ServerHandle:
    """The server-handle lifecycle of the nodes the server runs (a plain mixin: gdbridge registers
    its methods on each node). The node's own `_handle()` joins the server once and keeps the id in
    `_server_handle`; the node joins on entering the tree (or, with `_JOINS_IN_READY`, from its own
    `_ready`, once the nodes it links to are in the tree) and leaves when it is freed."""

    _JOINS_IN_READY = False

    if TYPE_CHECKING:

        def _handle(self) -> int:
            """The node's server id, joining once (each node class defines it)."""
            ...

    def _enter_tree(self) -> None:
        if not self._JOINS_IN_READY:
            self._handle()

    def _notification(self, what: int) -> None:
        if what == NOTIFICATION_PREDELETE:
            mistakes.forget(self)
            if self.__dict__.get("_server_handle"):
                server().release(self.__dict__.pop("_server_handle"))

    def get_server_id(self) -> int:
        """This node's id for the server's batched methods."""
        return self._handle()


def entity_name(entity: int) -> str:
    """The name of the object whose instance id `entity` is (its display_name, else node name), or ""."""
    found = object_of(entity)
    return display_name(found) if found is not None else ""


OBJECT_ID_FLOOR = 1 << 24  # an engine instance id's validator sits above its 24 slot bits, never 0


def has_property(node: Any, name: str) -> bool:
    """Whether the node (its class or script) has the property `name` (or a sub-path: `position:x`) reads."""
    base = name.split(":", 1)[0]
    return any(str(prop["name"]) == base for prop in node.get_property_list())


def object_of(instance_id: int) -> Any:
    """The live object with this instance id, or None (an entity id need not be one). An id below
    `OBJECT_ID_FLOOR` is never an object's, and is not looked up: the engine's ObjectDB prints an
    error ("slot >= slot_max") for a slot it never handed out."""
    if instance_id < OBJECT_ID_FLOOR:
        return None
    ptr = interface._iface["object_get_instance_from_id"](instance_id)
    return None if ptr == interface.ffi.NULL else objects.wrap(ptr)


def display_name(node: Any) -> str:
    """A node's display_name property, else its node name, or ""."""
    try:
        named = node.get("display_name")
    except Exception:  # an object without get (cannot happen for nodes): no name
        named = None
    if named:
        return str(named)
    return str(node.get_name()) if node.has_method("get_name") else ""


def decision_of(selector: Any, path: Any) -> Any:
    """The AsyncLLMDecision an NPC's selector works with: at `path` from the selector, else (empty
    path) the first AsyncLLMDecision child of its parent, the NPC; None when there is none."""
    if str(path):
        node = selector.get_node_or_null(path)
    else:
        npc = selector.get_parent()
        siblings = npc.get_children() if npc is not None else []
        node = next((child for child in siblings if child.is_class("AsyncLLMDecision")), None)
    return node if node is not None and node.is_class("AsyncLLMDecision") else None


def emit_signals(calls: list[tuple[Any, ...]]) -> None:
    """Emit (instance id, signal StringName, *arguments) calls in order, in one crossing; one that
    fails is logged and does not stop the others."""
    for position, reason in objects.emit_signals(calls):
        _id, signal, *args = calls[position]
        _log.error("npc_mind: signal %s%s not emitted: %s", signal, tuple(args), reason)
