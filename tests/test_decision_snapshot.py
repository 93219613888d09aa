"""What a decision's snapshot of a context holds: plain data only, bounded, made without calling
into the values (the prompt is formatted on another thread, where a game object must not be touched)."""

from __future__ import annotations

import dataclasses
import enum

import numpy as np

from npc_mind.decision.blackboard import MAX_ITEMS, PlainBoard, freeze, plain, plain_board


class Touchy:
    """A game object stand-in: reading it from the snapshot would be a call into the game."""

    def __str__(self) -> str:
        raise AssertionError("str() of a game object")

    __repr__ = __str__


class Mood(enum.Enum):
    CALM = 1


@dataclasses.dataclass
class Vec:
    x: float
    y: float


def size(value: object) -> int:
    """Nodes in a plain value."""
    if isinstance(value, dict):
        return 1 + sum(size(item) for item in value.values())
    if isinstance(value, tuple):
        return 1 + sum(size(item) for item in value)
    return 1


def test_values_become_plain_data_without_calling_them() -> None:
    board = plain_board({
        "threat": 0.5, "who": Touchy(), "mood": Mood.CALM, "at": Vec(1.0, 2.0), "n": np.int64(3),
        "seen": np.arange(3), "tags": ["a"], 7: "seven",
    })  # fmt: skip
    assert board == {
        "threat": 0.5, "who": "<Touchy>", "mood": "CALM", "at": {"x": 1.0, "y": 2.0}, "n": 3,
        "seen": (0, 1, 2), "tags": ("a",), "7": "seven",
    }  # fmt: skip
    assert type(board) is PlainBoard
    assert dict(freeze(board)) == board and freeze(board) is not board


def test_a_snapshot_is_bounded_whatever_the_context() -> None:
    shared: object = [1.0]
    for _ in range(8):  # a few hundred bytes standing for a tree of 64^8 lists
        shared = [shared] * 64
    looped: list[object] = [1]
    looped.append(looped)
    huge = {index: index for index in range(100_000)}
    board = plain_board({"huge": huge, "loop": looped, "tree": shared, "after": 1.0})
    assert len(board["huge"]) == MAX_ITEMS
    assert "..." in str(board["loop"])
    assert size(board) < 100_000  # 64^8 nodes unbounded
    assert board["after"] == 1.0  # numbers are never cut: the budget counts containers
    assert size(plain(shared)) < 100_000
