"""The game side of the editor's "NPC Mind" debugger tab: a read-only feed over `EngineDebugger`.

It exists only while a debugger session is attached in a debug build (`OS.is_debug_build()` and
`EngineDebugger.is_active()`: the editor's Run button, or `--remote-debug tcp://host:port` from the
command line). Otherwise `start` returns at once: nothing is registered, polled or sent, so plain runs
and release exports never pay for it.

Messages (one `npc_mind` capture, payloads are Arrays of plain Variants):

- game -> editor `npc_mind:npcs` [ids, paths, names, freed]: every NPC (the parent node of a
  MemoryStream, UtilitySelector or AsyncLLMDecision), sent when the set changed (looked at once a
  second). A path is relative to the current scene (`Mobs/@CharacterBody3D@3`), absolute outside it;
  a freed NPC stays listed, `freed` true, for `FREED_KEPT` seconds or until the editor drops it;
- game -> editor `npc_mind:npc` [snapshot]: the selected NPC's mind, `LIVE_HZ` times a second
  (memories with R, S, age, recall count, pinned and awareness; each behavior's score and the chosen
  one; the recent LLM decisions; what each of its senses perceived in the last second, one row per
  sense, entity and memory type, at most `MAX_PERCEPTIONS`; the last `MAX_ACTIONS` actions its
  behaviors ran); once freed, one last {id, name, path, freed: true};
- editor -> game `npc_mind:select` [npc id] (0: none; answered at once, so also while the game is
  paused or stopped at a break), `npc_mind:refresh` [] (send the list again),
  `npc_mind:forget_freed` [] (drop the freed NPCs from the list now).
  A malformed one (`select` with anything but one int id, or a name of neither) is refused: one
  engine error per message name ("refused a malformed debugger message ...", the later ones counted
  as `mistakes/repeats`), and the feed goes on as it was.

Only the selected NPC is read at `LIVE_HZ`; the others cost nothing per frame. LLM outcomes (rare) are
logged for every NPC as they happen, so an NPC selected later shows its whole recent timeline.
Entity names: when an entity id is an object's instance id (as in the demo), its `display_name`
property, else its node name, labels the memory, with its path. Names are learned while the objects
live (a scan of every NPC's memories once a second for ids not looked up yet, `LEARN_PER_FRAME`
look-ups a frame), so an entity freed before its NPC is selected still shows by name, marked freed.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from gdbridge import classes, objects
from gdbridge.callables import as_callable
from gdbridge.declare import PackedInt64Array
from gdbridge.types import PackedStringArray
from npc_mind.decision import DecisionFallback, DecisionMade, ThinkingStarted
from npc_mind.memory import MemoryType
from npc_mind.server.selectors import _row_scores
from npc_mind_godot import actions, mistakes, senses
from npc_mind_godot._common import display_name, object_of, server

CAPTURE = "npc_mind"
LIST_EVERY = 1.0  # seconds between looks at the set of NPCs
NEW_PER_LOOK = 256  # new nodes looked up per look: attaching to 1,000 NPCs spreads over a few looks
LIVE_HZ = 5.0  # snapshots of the selected NPC per second
MAX_MEMORIES = 32  # strongest first; a full 64-slot memory would only crowd the tab
DECISION_LOG = 24  # outcomes kept per decision node
FREED_KEPT = 30.0  # seconds a freed NPC stays listed (marked) unless the editor drops it sooner
ENTITY_NAMES = 4096  # names of entities remembered (oldest forgotten first)
LEARN_PER_FRAME = 16  # entity ids looked up per frame (each costs tens of microseconds)
LOOKED_AT = 65536  # entity ids known to be looked up already (then the set starts again)
MAX_PERCEPTIONS = 24  # rows of (sense, entity, memory type) perceived in the last second, newest first
MAX_ACTIONS = 16  # the selector's latest actions (of actions.HISTORY kept)
PROCESS_MODE_ALWAYS = 3
MEMORY_TYPE_NAMES = {int(kind): kind.name.lower() for kind in MemoryType}


class _Npc:
    """One NPC as the tab lists it: the parent node of npc_mind nodes, by the parent's instance id."""

    __slots__ = ("decision", "freed_at", "freed_sent", "memory", "name", "node", "path", "selector")

    def __init__(self, node: Any) -> None:
        self.node = node
        self.name = display_name(node)
        self.path = scene_path(node)
        self.memory = self.selector = self.decision = 0
        self.freed_at: float | None = None  # feed clock time the node was found freed
        self.freed_sent = False


class DebugFeed:
    """What the tab needs, read from the server through its banks without changing anything."""

    def __init__(self, send: Callable[[str, list[Any]], None], clock: Callable[[], float] = time.monotonic):
        self.send = send
        self.clock = clock
        self.npcs: dict[int, _Npc] = {}
        self.owner: dict[int, int] = {}  # server handle -> npc id
        self.selected = 0
        self.sent = 0
        self.decisions: dict[int, deque[dict[str, Any]]] = {}  # decision handle -> recent outcomes
        self._entity_names: dict[int, str] = {}  # instance id -> name, learned while the object lived
        self._looked_at: set[int] = set()  # entity ids already looked up by the once-a-second scan
        self._to_learn: list[int] = []  # entity ids found by the last scan, not looked up yet
        self._next_list = 0.0
        self._next_live = 0.0
        self._list_wanted = True

    # --- the per-frame entry (only while a debugger is attached) --------------------------------
    def tick(self) -> None:
        now = self.clock()
        if now >= self._next_list:
            self._next_list = now + LIST_EVERY
            changed = self.refresh()
            self._to_learn = self.unknown_entities()
            self.learn_entity_names()
            if changed or self._list_wanted:
                self._list_wanted = False
                self._send("npc_mind:npcs", self.npc_list())
        elif self._to_learn:
            self.learn_entity_names()
        if self.selected and now >= self._next_live:
            self._send_live(now)

    def _send_live(self, now: float) -> None:
        """The selected NPC's snapshot (a freed one's, once)."""
        self._next_live = now + 1.0 / LIVE_HZ
        npc = self.npcs.get(self.selected)
        if npc is not None and (npc.freed_at is not None or not npc.node.is_valid):
            if npc.freed_sent:
                return
            npc.freed_sent = True
        snapshot = self.snapshot(self.selected)
        if snapshot:
            self._send("npc_mind:npc", [snapshot])

    def _send_list(self) -> None:
        self._list_wanted = False
        self._next_list = self.clock() + LIST_EVERY
        while self.refresh():
            pass
        self._send("npc_mind:npcs", self.npc_list())

    def _send(self, message: str, data: list[Any]) -> None:
        self.send(message, data)
        self.sent += 1

    def on_message(self, message: str, data: list[Any]) -> bool:
        """The editor's messages (the engine passes them without the `npc_mind:` prefix). A
        malformed one is refused (`refuse`) and the feed goes on as it was."""
        name = str(message).removeprefix(CAPTURE + ":")
        if name == "select":
            npc_id = selected_id(data)
            if npc_id is None:
                return refuse(name, data, "one NPC id, an int (0: none)")
            self.selected = npc_id
            npc = self.npcs.get(self.selected)
            if npc is not None:
                npc.freed_sent = False
            # Answered now: no frame runs while the game is stopped at a break or suspended.
            self._send_live(self.clock())
            return True
        if name == "refresh":
            self._send_list()
            return True
        if name == "forget_freed":
            for npc_id in [npc_id for npc_id, npc in self.npcs.items() if npc.freed_at is not None]:
                del self.npcs[npc_id]
            self._send_list()
            return True
        return refuse("unknown", [message], "select, refresh or forget_freed")

    # --- the NPC list ---------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Bring the NPC list up to date with the server's nodes; True when it changed."""
        nodes = server().nodes
        core = server().core  # which bank holds a handle says which node it is
        changed = False
        for handle in [handle for handle in self.owner if handle not in nodes]:
            changed = True
            self._forget(handle)
        changed |= self._mark_freed()
        looked_up = 0
        for handle, node in nodes.items():
            if handle in self.owner or not node.is_valid:
                continue
            if looked_up >= NEW_PER_LOOK:
                self._next_list = 0.0  # the rest at the next frame
                break
            looked_up += 1
            parent = node.get_parent()
            if parent is None:
                continue  # not in the tree yet: the next look
            npc_id = int(parent.get_instance_id())
            npc = self.npcs.get(npc_id)
            if npc is None:
                npc = self.npcs[npc_id] = _Npc(parent)
            if handle in core.memory.entries:
                npc.memory = handle
            elif handle in core.selectors.entries:
                npc.selector = handle
            elif handle in core.decisions.entries:
                npc.decision = handle
            self.owner[handle] = npc_id
            changed = True
        return changed

    def _forget(self, handle: int) -> None:
        npc_id = self.owner.pop(handle)
        self.decisions.pop(handle, None)
        npc = self.npcs.get(npc_id)
        if npc is None:
            return
        for field in ("memory", "selector", "decision"):
            if getattr(npc, field) == handle:
                setattr(npc, field, 0)
        if not (npc.memory or npc.selector or npc.decision) and npc.node.is_valid:
            del self.npcs[npc_id]  # still in the game, no longer an NPC; a freed one is marked instead

    def _mark_freed(self) -> bool:
        """Mark the NPCs whose node was freed; drop those marked `FREED_KEPT` seconds ago."""
        now = self.clock()
        changed = False
        for npc_id, npc in list(self.npcs.items()):
            if npc.freed_at is None and not npc.node.is_valid:
                npc.freed_at = now
                changed = True
            elif npc.freed_at is not None and now - npc.freed_at >= FREED_KEPT:
                del self.npcs[npc_id]
                changed = True
        return changed

    def npc_list(self) -> list[Any]:
        ids = sorted(self.npcs, key=lambda npc_id: self.npcs[npc_id].path)
        return [
            PackedInt64Array(ids),
            PackedStringArray([self.npcs[npc_id].path for npc_id in ids]),
            PackedStringArray([self.npcs[npc_id].name for npc_id in ids]),
            [self.npcs[npc_id].freed_at is not None for npc_id in ids],
        ]

    def unknown_entities(self) -> list[int]:
        """The entity ids the NPCs remember that were not looked up yet."""
        bank = server().core.memory
        bank.flush()  # the writes queued this frame
        found: list[int] = []
        for slot in bank.pools.values():
            looked_at = self._looked_at
            found.extend(entity for entity in slot.pool.entities().tolist() if entity not in looked_at)
        return found

    def learn_entity_names(self) -> None:
        """Look up `LEARN_PER_FRAME` of the entity ids not looked up yet: the live objects' names
        are kept, so an entity freed before anyone selected its NPC still shows by name."""
        batch, self._to_learn = self._to_learn[:LEARN_PER_FRAME], self._to_learn[LEARN_PER_FRAME:]
        for entity in batch:
            if len(self._looked_at) >= LOOKED_AT:
                self._looked_at.clear()  # bounded: ids seen long ago are looked at again
            self._looked_at.add(entity)
            found = object_of(entity)
            if found is not None:
                self._remember(entity, display_name(found))

    # --- one NPC's mind -------------------------------------------------------------------------
    def snapshot(self, npc_id: int) -> dict[str, Any]:
        """The selected NPC's mind now ({} when it is gone)."""
        npc = self.npcs.get(int(npc_id))
        if npc is None:
            return {}
        if npc.freed_at is not None or not npc.node.is_valid:
            return {"id": int(npc_id), "name": npc.name, "path": npc.path, "freed": True}
        core = server().core
        npc.name, npc.path = display_name(npc.node), scene_path(npc.node) or npc.path
        out: dict[str, Any] = {
            "id": int(npc_id),
            "name": npc.name,
            "path": npc.path,
            "now": float(core.now()),
        }
        if npc.memory and npc.memory in core.memory.entries:
            out.update(self._memories(core, npc.memory))
        if npc.selector and npc.selector in core.selectors.entries:
            out["selector"] = selector_state(core, npc.selector)
        if npc.decision and npc.decision in core.decisions.entries:
            out["decisions"] = list(self.decisions.get(npc.decision, ()))
            out["pending"] = bool(core.decisions.pending(npc.decision))
            out["behavior"] = core.decisions.behavior(npc.decision)
        found = senses.senses_of(npc.node)
        if found:
            out.update(self._perceptions(found, out["now"]))
        selector = server().nodes.get(npc.selector) if npc.selector else None
        if selector is not None and selector.is_valid:
            out["actions"] = actions.recent(selector)[-MAX_ACTIONS:]
        return out

    def _perceptions(self, found: list[Any], now: float) -> dict[str, Any]:
        """Each sense (name, class, perceptions in the last second) and what they perceived: one row
        per sense, entity and memory type (its count, the latest salience, time and place), newest
        first, at most MAX_PERCEPTIONS."""
        listed: list[dict[str, Any]] = []
        merged: dict[tuple[int, int, int], dict[str, Any]] = {}
        for index, sense in enumerate(found):
            recent = sense.recent_perceptions()
            name, kind = str(sense.get_name()), sense.get_class()
            listed.append({"name": name, "class": kind, "perceived": len(recent)})
            for seen in recent:  # oldest first: the last one of a key is its latest
                key = (index, seen.entity, seen.memory_type)
                row = merged.get(key)
                if row is None:
                    row = merged[key] = {"count": 0, "recorded": 0}
                where = [float(value) for value in seen.point]
                row.update(time=seen.time, salience=float(seen.salience), where=where)
                row["count"] += 1
                row["recorded"] += int(seen.recorded)
        rows: list[dict[str, Any]] = []
        for (index, entity, memory_type), row in sorted(merged.items(), key=lambda item: -item[1]["time"]):
            if len(rows) >= MAX_PERCEPTIONS:
                break
            name, path, freed = self._entity(entity)
            rows.append({
                "sense": listed[index]["name"], "entity": entity, "entity_name": name, "entity_path": path,
                "entity_freed": freed, "type": memory_type,
                "type_name": MEMORY_TYPE_NAMES.get(memory_type, str(memory_type)), **row,
                "age": max(now - row["time"], 0.0),
            })  # fmt: skip
        return {"senses": listed, "perceptions": rows, "perception_count": len(merged)}

    def _memories(self, core: Any, handle: int) -> dict[str, Any]:
        pool, row = core.memory.pool_of(handle)  # its queued writes applied
        params = pool.params
        now = core.now()
        views = [view for view in pool.memories(row, now) if view.retrievability > params.forget_threshold]
        views.sort(key=lambda view: -view.retrievability)
        rows = []
        for view in views[:MAX_MEMORIES]:
            entity = int(view.entity)
            name, path, freed = self._entity(entity)
            rows.append({
                "entity": entity,
                "entity_name": name,
                "entity_path": path,
                "entity_freed": freed,
                "type": int(view.memory_type),
                "type_name": MEMORY_TYPE_NAMES.get(int(view.memory_type), str(int(view.memory_type))),
                "r": float(view.retrievability),
                "s": float(view.stability),
                "age": float(view.age),
                "salience": float(view.salience),
                "recalls": int(view.recall_count),
                "pinned": bool(view.pinned),
                "long_term": int(view.tier) == 1,
                "awareness": int(pool.awareness(row, entity, now)),  # of the entity: only looks
            })  # fmt: skip
        return {
            "memories": rows,
            "memory_count": len(views),
            "profile": {
                "curve": str(params.curve),
                "forget": float(params.forget_threshold),
                "search": float(params.awareness_search),
                "pursue": float(params.awareness_pursue),
            },
        }

    def _entity(self, entity: int) -> tuple[str, str, bool]:
        """(name, path, freed) of an entity: a live object's name and path (remembered), a freed
        one's remembered name; ("", "", False) for an id that was never a known object."""
        found = object_of(entity)
        if found is not None:
            name = display_name(found)
            self._remember(entity, name)
            return name, scene_path(found) if found.has_method("is_inside_tree") else "", False
        known = self._entity_names.get(entity)
        return ("", "", False) if known is None else (known, "", True)

    def _remember(self, entity: int, name: str) -> None:
        names = self._entity_names
        names.pop(entity, None)  # the newest last: the oldest is forgotten first
        if len(names) >= ENTITY_NAMES:
            del names[next(iter(names))]
        names[entity] = name

    # --- decisions (a server observer: called as outcomes happen) --------------------------------
    def observe_decision(self, event: Any) -> None:
        if isinstance(event, ThinkingStarted):
            record = {"kind": "thinking", "tier": 0, "latency_ms": 0.0, "intent": "", "reason": ""}
        elif isinstance(event, DecisionMade):
            record = {"kind": "made", "tier": int(event.tier), "latency_ms": event.latency * 1000.0,
                      "intent": event.intent, "reason": event.reason}  # fmt: skip
        elif isinstance(event, DecisionFallback):
            record = {"kind": "fallback", "tier": int(event.tier), "latency_ms": event.latency * 1000.0,
                      "intent": event.behavior, "reason": event.reason}  # fmt: skip
        else:
            return
        record["t"] = float(server().core.now())
        log = self.decisions.get(event.npc)
        if log is None:
            log = self.decisions[event.npc] = deque(maxlen=DECISION_LOG)
        log.append(record)


def selected_id(data: Any) -> int | None:
    """`npc_mind:select`'s NPC id: [id] with id an int in int64 (a whole float too), or [] (0:
    none); None for anything else."""
    if not isinstance(data, list | tuple) or len(data) > 1:
        return None
    if not data:
        return 0
    value = data[0]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
        return None
    return value


def refuse(name: str, data: Any, wanted: str) -> bool:
    """A malformed message from the debugger peer: one error per message name, naming what it
    takes (the later ones are counted: `mistakes`); the message is ignored, handled (True)."""
    shown = repr(data)
    mistakes.report(
        "NPC Mind debugger feed",
        f"bad_message:{name}",
        f"refused a malformed debugger message {CAPTURE}:{name} with {shown[:200]}: it takes {wanted}; "
        "it is ignored and the feed goes on.",
        fix="send what the NPC Mind tab sends (see npc_mind_godot.debug_feed).",
    )
    return True


def selector_state(core: Any, handle: int) -> dict[str, Any]:
    """A selector's behavior names, their scores from its last choice, and the chosen one."""
    entry = core.selectors.entries.get(handle)
    group = entry.group
    names = list(group.names)
    if entry.by_dictionary:  # the Dictionary path: ranked now, for this one NPC only
        by_name = core.scores(handle)
        scores = [float(by_name.get(name, 0.0)) for name in names]
    elif group.batch is not None and group.batch.scores is not None and entry.row >= 0:
        scores = _row_scores(group, entry.row)
    else:
        scores = [0.0] * len(names)
    return {"names": PackedStringArray(names), "scores": scores, "chosen": entry.last_behavior}


def scene_path(node: Any) -> str:
    """A node's path relative to the current scene (`Mobs/Goblin`; the scene itself by its name), so
    two NPCs with generated names are told apart; its absolute path outside the current scene; ""
    outside the tree."""
    if not node.is_inside_tree():
        return ""
    scene = node.get_tree().get_current_scene()
    if scene is not None and scene == node:
        return str(node.get_name())
    if scene is not None and scene.is_ancestor_of(node):
        return str(scene.get_path_to(node))
    return str(node.get_path())


class NpcMindDebugFeed(classes.Node, internal=True):
    """Internal: sends the editor's NPC Mind debugger tab its data (added only while a debugger is
    attached). `get_npc_list()` and `get_snapshot(id)` return what the messages carry."""

    def _enter_tree(self) -> None:
        feed = self.__dict__.get("feed")
        if feed is None:
            debugger = objects.singleton("EngineDebugger")
            feed = self.__dict__["feed"] = DebugFeed(debugger.send_message)
        core = server().core
        if feed.observe_decision not in core.decisions.observers:
            core.decisions.observers.append(feed.observe_decision)
        debugger = objects.singleton("EngineDebugger")
        # Made by Python without a debugger (a tool reading snapshots), it never sends.
        self.__dict__["live"] = bool(debugger.is_active())
        if self.__dict__["live"] and not debugger.has_capture(CAPTURE):
            debugger.register_message_capture(CAPTURE, as_callable(feed.on_message))

    def _exit_tree(self) -> None:
        feed = self.__dict__.get("feed")
        core = server().core
        if feed is not None and feed.observe_decision in core.decisions.observers:
            core.decisions.observers.remove(feed.observe_decision)
        debugger = objects.singleton("EngineDebugger")
        if debugger.has_capture(CAPTURE):
            debugger.unregister_message_capture(CAPTURE)

    def _process(self, _delta: float) -> None:
        if self.__dict__["live"]:
            self.__dict__["feed"].tick()

    def get_npc_list(self) -> list:
        """[ids, paths, names] of every NPC (what `npc_mind:npcs` carries)."""
        feed: DebugFeed = self.__dict__["feed"]
        while feed.refresh():  # every new node, not NEW_PER_LOOK of them
            pass
        return feed.npc_list()

    def get_snapshot(self, npc_id: int) -> dict:
        """The NPC's mind now (what `npc_mind:npc` carries; {} for an unknown id)."""
        return self.__dict__["feed"].snapshot(npc_id)

    def get_sent_count(self) -> int:
        """Messages sent to the debugger so far."""
        return self.__dict__["feed"].sent


def start(tree: Any) -> Any:
    """Add the feed to the tree when a debugger session is attached in a debug build; else nothing."""
    if not (objects.singleton("OS").is_debug_build() and objects.singleton("EngineDebugger").is_active()):
        return None
    node = NpcMindDebugFeed()
    node.set_name("NpcMindDebugFeed")
    node.set_process_mode(PROCESS_MODE_ALWAYS)  # a paused game is still inspected
    tree.get_root().call_deferred("add_child", node)
    return node
