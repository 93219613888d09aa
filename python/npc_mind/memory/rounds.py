"""Splitting a batch into rounds of at most one event per NPC, in per-NPC input order."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from npc_mind.memory.state import PoolState


def split_rounds(
    state: PoolState, rows: np.ndarray, min_width: int = 0
) -> tuple[list[np.ndarray | None], np.ndarray | None]:
    """Split events into rounds holding at most one event per NPC, keeping each NPC's events in
    input order: round j holds every NPC's j-th event, in input order. A round is an index array
    into the events, or None for "all events" (no NPC twice, the common case).

    Returns (rounds, tail): rounds narrower than `min_width` events (they cost a round's numpy
    calls for a handful of events: one NPC's 20,000 events would be 20,000 rounds) are left
    to the caller's per-event path as `tail`, the indices of their events in input order (None:
    no tail). Events are grouped by NPC once (no sort when they already come grouped, as a game
    loop gives each NPC's perceptions together), and round j + 1 is made only from the NPCs
    that had more than j + 1 events, so the cost is linear in events whatever their distribution."""
    n = rows.shape[0]
    if n < 2 or bool((rows[1:] > rows[:-1]).all()):
        state.increasing_rows = rows
        return [None], None
    order: np.ndarray | None = None  # None: already grouped by NPC (rows non-decreasing)
    if not bool((rows[1:] >= rows[:-1]).all()):
        mark = state.row_mark
        ar = np.arange(n)
        mark[rows] = n
        np.minimum.at(mark, rows, ar)
        if (mark[rows] == ar).all():  # no NPC twice
            return [None], None
        # a stable sort groups each NPC's events in input order (radix on 16-bit rows)
        keys = rows.astype(np.uint16) if state.allocated_rows <= 1 << 16 else rows
        order = np.argsort(keys, kind="stable")
    grouped = rows if order is None else rows[order]
    starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1])))
    sizes = np.diff(np.append(starts, n))
    rounds: list[np.ndarray | None] = []
    j = 0
    while starts.shape[0] >= max(min_width, 1):
        members = starts + j  # each live NPC's j-th event, in grouped positions (ascending)
        rounds.append(members if order is None else np.sort(order[members]))
        j += 1
        more = sizes > j
        if not more.all():
            starts, sizes = starts[more], sizes[more]
    if not starts.shape[0]:
        return rounds, None
    counts = sizes - j  # the rest of each remaining NPC's events: positions starts + j ...
    total = int(counts.sum())
    firsts = np.cumsum(counts) - counts
    rest = np.repeat(starts + j - firsts, counts) + np.arange(total)
    return rounds, (rest if order is None else np.sort(order[rest]))
