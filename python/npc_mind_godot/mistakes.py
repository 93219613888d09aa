"""A user's mistake is reported once per node and cause; its repeats are counted, not printed.

Every per-frame path that meets a mistake the game can recover from (a missing input, a Node passed
as an id, a NodePath that resolves to nothing, a sense with no MemoryStream...) calls `report(owner,
cause, message, fix=...)` and goes on with its documented fallback. The first call for an
(owner, cause) pair prints one engine error (or warning) naming the owner, what is wrong and the
fix; later calls for the same pair only count. `NpcMindServer.get_metrics()` shows the counts as
`mistakes/reported` (distinct pairs) and `mistakes/repeats` (calls not printed).

The owner is a node or a resource (its path, or its class and resource path), or a plain string for
the singleton's own mistakes. An owner is keyed by its instance id, so a freed node's pairs are
forgotten with `forget(owner)` (the nodes call it when they are freed) and a new node at a reused
address reports again.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from gdbridge import objects

MAX_OWNERS = 100_000  # bounded: past it, a new owner's mistakes are counted as repeats rather than remembered
# bounded: the reports made on other threads (the update thread's) that wait for the main thread's
# `flush`; past it, one is counted as a repeat
MAX_WAITING = 10_000
_waiting: deque[tuple[Any, str, str, str, bool]] = deque()

_seen: dict[int | str, dict[str, int]] = {}  # owner key -> cause -> times met
_totals = {"reported": 0, "repeats": 0}


def describe(owner: Any) -> str:
    """A name a person can find: a node's scene path, a resource's class and file, else repr."""
    if isinstance(owner, str):
        return owner
    try:
        if owner.is_class("Node"):
            path = str(owner.get_path()) if owner.is_inside_tree() else ""
            return path or f"{owner.get_class()} '{owner.get_name()}' (not in the tree)"
        if owner.is_class("Resource"):
            where = str(owner.get_path())
            return f"{owner.get_class()} {where}" if where else f"{owner.get_class()} (built in)"
    except Exception:  # a freed or foreign object still gets a name
        pass
    return repr(owner)


def _key(owner: Any) -> int | str:
    if isinstance(owner, str):
        return owner
    try:
        return int(owner.get_instance_id())
    except Exception:  # not an engine object: keyed by its identity
        return f"py:{id(owner)}"


def report(owner: Any, cause: str, message: str, *, fix: str = "", warning: bool = False) -> bool:
    """Print `message` (and `fix`) once for this owner and cause; count later calls. True when it
    printed. `cause` is a short stable name (e.g. "missing_input:hunger"), never a per-call value.
    On another thread than the main one (the update thread), it waits for the main thread's
    `flush`, at the start of the next frame (naming a node reads the engine), and returns False."""
    if threading.get_ident() != objects.MAIN_THREAD:
        if len(_waiting) < MAX_WAITING:
            _waiting.append((owner, cause, message, fix, warning))
        else:
            _totals["repeats"] += 1
        return False
    key = _key(owner)
    causes = _seen.get(key)
    if causes is None:
        if len(_seen) >= MAX_OWNERS:
            _totals["repeats"] += 1
            return False
        causes = _seen[key] = {}
    if cause in causes:
        causes[cause] += 1
        _totals["repeats"] += 1
        return False
    causes[cause] = 1
    _totals["reported"] += 1
    text = f"npc_mind: {describe(owner)}: {message}"
    if fix:
        text += f" Fix: {fix}"
    if warning:
        objects.utility.push_warning(text)
    else:
        objects.utility.push_error(text)
    return True


def times(owner: Any, cause: str) -> int:
    """How many times this owner met this cause (0: never)."""
    return _seen.get(_key(owner), {}).get(cause, 0)


def forget(owner: Any) -> None:
    """Drop an owner's pairs (a freed node): a new object at the same address reports afresh."""
    _seen.pop(_key(owner), None)


def metrics() -> dict[str, float]:
    return {"mistakes/reported": float(_totals["reported"]), "mistakes/repeats": float(_totals["repeats"])}


def waiting() -> bool:
    """Reports other threads left for the main thread's `flush`."""
    return bool(_waiting)


def flush() -> None:
    """Make the reports other threads left waiting (main thread, once a frame)."""
    while _waiting:
        owner, cause, message, fix, warning = _waiting.popleft()
        report(owner, cause, message, fix=fix, warning=warning)
