"""The double-buffered blackboard: the main thread owns the active board and writes it every tick;
a request works on a frozen snapshot; its result waits in an epoch-stamped commit slot until the main
thread merges it at the start of a tick, only if its epoch is still current.

A snapshot holds plain data only (numbers, strings, None, tuples and dicts of them), made on the main
thread: the prompt is formatted on the transport's thread, which must never call into a game object
(an engine node may be freed, or refuse calls from another thread, by the time it runs)."""

from __future__ import annotations

import dataclasses
import enum
import itertools
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from npc_mind.llm.transport import Outcome

_SCALARS = frozenset({bool, int, float, str, type(None)})
_STR = frozenset({str})
MAX_ITEMS = 64  # entries kept of one list or dict value (a prompt shows about 40 characters of it)
MAX_DEPTH = 8  # nesting kept; deeper values (a container holding itself, say) become "..."
MAX_VALUES = 1024  # containers and other non-scalar values converted per context, in all

Describe = Callable[[Any], Any]


def describe_type(value: Any) -> str:
    """The default description of a value that is not plain data: its type's name, without calling
    anything on the value itself (its `__str__` may be a game object's)."""
    return f"<{type(value).__name__}>"


def plain(value: Any, describe: Describe = describe_type) -> Any:
    """`value` as plain data: scalars kept (subclasses of str, int and float, such as a Godot
    StringName, as the base type), enums by name, numpy values as Python ones, sequences as tuples,
    mappings and dataclasses (a Godot Vector2: x, y) as dicts, anything else as what `describe` makes
    of it (called here, on the calling thread). Bounded: the first `MAX_ITEMS` entries of each
    container, `MAX_DEPTH` levels and `MAX_VALUES` values in all (a small structure that shares its
    parts can stand for a huge tree); beyond, "..."."""
    return _plain(value, describe, 0, [MAX_VALUES])


def _plain(value: Any, describe: Describe, depth: int, budget: list[int]) -> Any:
    if type(value) in _SCALARS:
        return value
    budget[0] -= 1
    if depth >= MAX_DEPTH or budget[0] < 0:
        return "..."
    if isinstance(value, enum.Enum):
        return value.name
    for base in (bool, int, float, str):
        if isinstance(value, base):
            return base(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        value = value.ravel()[:MAX_ITEMS].tolist()
    deeper = depth + 1
    if isinstance(value, Mapping):
        items = itertools.islice(value.items(), MAX_ITEMS)
        return {_key(key): _plain(item, describe, deeper, budget) for key, item in items}
    if isinstance(value, list | tuple | set | frozenset | deque):
        return tuple(_plain(item, describe, deeper, budget) for item in itertools.islice(value, MAX_ITEMS))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a Vector2, a Color...
        fields = dataclasses.fields(value)[:MAX_ITEMS]
        return {field.name: _plain(getattr(value, field.name), describe, deeper, budget) for field in fields}
    return _plain(describe(value), describe_type, deeper, budget)


def _key(key: Any) -> str:
    """Keys become strings, so a prompt can sort them."""
    return key if type(key) is str else str(plain(key))


class PlainBoard(dict[str, Any]):
    """A board `plain_board` made: plain data already, so `freeze` only copies it."""

    __slots__ = ()


def plain_board(board: Mapping[str, Any], describe: Describe = describe_type) -> PlainBoard:
    """A board as plain data (every key kept, each value as `plain` makes it); a board already plain
    costs one type check per entry."""
    if type(board) is PlainBoard:
        return PlainBoard(board)
    if _SCALARS.issuperset(map(type, board.values())) and _STR.issuperset(map(type, board)):
        return PlainBoard(board)
    budget = [MAX_VALUES]
    return PlainBoard({_key(key): _plain(value, describe, 1, budget) for key, value in board.items()})


def freeze(board: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only, plain-data copy of the active board: one dict copy when it is plain already, or
    when its values are (its keys are the caller's: the prompt sorts them)."""
    snapshot = dict(board)
    if type(board) is PlainBoard or _SCALARS.issuperset(map(type, snapshot.values())):
        return MappingProxyType(snapshot)
    return MappingProxyType(plain_board(snapshot))


class CommitSlot(deque[Outcome]):
    """The epoch-stamped commit slot: the loop thread `put`s (an atomic deque append, no lock), the main
    thread drains it at the start of a tick and keeps only outcomes whose epoch is still current."""

    __slots__ = ()

    put = deque.append

    def drain(self) -> Iterator[Outcome]:
        while self:
            yield self.popleft()
