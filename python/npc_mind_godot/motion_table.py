"""The moves in flight as one table: a row for each body a MoveAction drives, its per-frame state in
flat columns per dimension. The physics pass (`actions.tick`) reads and writes whole columns, with
no loop over the moves' objects, as Godot's servers keep their data in arrays and batch updates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

DIMENSIONS = (2, 3)
GROWTH = 64  # rows added at once when a dimension's table is full


class MoveColumns:
    """One dimension's rows. A freed row is reused; `live()` is the rows in use, oldest move first
    (the order the moves started in, which is the order the bodies move in)."""

    def __init__(self) -> None:
        self.motions: list[Any] = []  # row -> its move (None: a free row)
        self.free: list[int] = []
        self.bodies = np.zeros(0, np.int64)  # the body's instance id (0: a free row)
        self.agents = np.zeros(0, np.int64)  # its NavigationAgent's (0: none)
        self.waypoints = np.zeros(0, np.int64)  # the destination node's while it stays (0: found again)
        self.fresh = np.zeros(0, bool)  # the agent has not had its first goal yet
        self.standing = np.zeros(0, bool)  # arrived (or nowhere to go) and halted
        self.actions = np.zeros(0, np.int32)  # the move action's slot (`MotionTable.actions`)
        self.started = np.zeros(0, np.int64)  # when the move started, as a count of moves started
        self._live: np.ndarray | None = None

    def live(self) -> np.ndarray:
        if self._live is None:
            rows = np.flatnonzero(self.bodies)
            self._live = rows[np.argsort(self.started[rows], kind="stable")]
        return self._live

    def take(self, motion: Any, body: int, agent: int, action: int, started: int) -> int:
        if not self.free:
            self._grow()
        row = self.free.pop()
        self.motions[row] = motion
        self.bodies[row], self.agents[row], self.waypoints[row] = body, agent, 0
        self.fresh[row], self.standing[row] = True, False
        self.actions[row], self.started[row] = action, started
        self._live = None
        return row

    def release(self, row: int) -> None:
        self.motions[row] = None
        self.bodies[row] = self.agents[row] = self.waypoints[row] = 0
        self.free.append(row)
        self._live = None

    def _grow(self) -> None:
        size = len(self.motions)
        self.motions += [None] * GROWTH
        self.free += range(size + GROWTH - 1, size - 1, -1)  # the lowest row is taken first
        for name in ("bodies", "agents", "waypoints", "fresh", "standing", "actions", "started"):
            column = getattr(self, name)
            setattr(self, name, np.concatenate((column, np.zeros(GROWTH, column.dtype))))


SETTINGS = ("kinds", "arrive", "flee", "speeds", "faces")  # an action's settings, a column each by slot


class MotionTable:
    """Every move in flight, by its body's instance id (one move a body: the latest wins), and the
    move actions the rows refer to (a slot each, shared by the moves of one action), with their
    settings as columns by slot: read by `read_settings(action)` (a number per SETTINGS name) when
    the slot is made and again when the action changes (`refresh`), not every frame."""

    def __init__(self, read_settings: Callable[[Any], tuple[float, ...]]) -> None:
        self.by_body: dict[int, Any] = {}
        self.columns = {dimension: MoveColumns() for dimension in DIMENSIONS}
        self.actions: list[Any] = []  # slot -> the action (None: a free slot)
        self._slots: dict[int, int] = {}  # id(action) -> its slot
        self._uses: list[int] = []  # slot -> how many moves refer to it
        self._started = 0
        self._read_settings = read_settings
        self.kinds = np.zeros(0, np.int8)  # the destination's index in actions.DESTINATIONS
        self.arrive, self.flee, self.speeds = np.zeros(0), np.zeros(0), np.zeros(0)
        self.faces = np.zeros(0, np.uint8)  # face_motion

    def __len__(self) -> int:
        return len(self.by_body)

    def get(self, body: int) -> Any:
        return self.by_body.get(body)

    def add(self, motion: Any) -> None:
        """`motion` (with `ids`: its body's and agent's instance ids, `dimension`, `action`) drives
        its body from now on, in place of any move before it; its row is set on it (`row`)."""
        body, agent = motion.ids
        self.remove(body)
        slot = self._slots.get(id(motion.action))
        if slot is None:
            slot = self._slots[id(motion.action)] = self._free_slot()
            self.actions[slot] = motion.action
            self._write_settings(slot)
        self._uses[slot] += 1
        self._started += 1
        motion.row = self.columns[motion.dimension].take(motion, body, agent, slot, self._started)
        self.by_body[body] = motion

    def remove(self, body: int) -> Any:
        """The move of this body, taken out of the table (None: none)."""
        motion = self.by_body.pop(body, None)
        if motion is not None:
            columns = self.columns[motion.dimension]
            slot = int(columns.actions[motion.row])
            columns.release(motion.row)
            self._uses[slot] -= 1
            if not self._uses[slot]:
                del self._slots[id(self.actions[slot])]
                self.actions[slot] = None
        return motion

    def refresh(self, action: Any) -> None:
        """The action's settings changed: its slot's columns are read again (none: not moving)."""
        slot = self._slots.get(id(action))
        if slot is not None:
            self._write_settings(slot)

    def _write_settings(self, slot: int) -> None:
        for name, value in zip(SETTINGS, self._read_settings(self.actions[slot]), strict=True):
            getattr(self, name)[slot] = value

    def _free_slot(self) -> int:
        for slot, uses in enumerate(self._uses):
            if not uses:
                return slot
        self.actions.append(None)
        self._uses.append(0)
        for name in SETTINGS:
            column = getattr(self, name)
            setattr(self, name, np.concatenate((column, np.zeros(1, column.dtype))))
        return len(self._uses) - 1
