"""Splitting a batch into rounds of at most one event per NPC, and the batch event log."""

from __future__ import annotations

import numpy as np

from npc_mind.memory.columns import _NARROW_ROUND
from npc_mind.memory.types import (
    EventKind,
)


class Rounds:
    """Rounds and events of the batch paths.
    A part of `MemoryPool` (its state is set up in `MemoryPool.__init__`)."""

    #: rounds narrower than this run their events one by one on the fast paths (a class attribute
    #: so a test can make every round vectorised)
    _narrow_round: int = _NARROW_ROUND

    def _rounds(
        self, rows: np.ndarray, min_width: int = 0
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
            self._increasing = rows
            return [None], None
        order: np.ndarray | None = None  # None: already grouped by NPC (rows non-decreasing)
        if not bool((rows[1:] >= rows[:-1]).all()):
            mark = self._mark
            ar = np.arange(n)
            mark[rows] = n
            np.minimum.at(mark, rows, ar)
            if (mark[rows] == ar).all():  # no NPC twice
                return [None], None
            # a stable sort groups each NPC's events in input order (radix on 16-bit rows)
            keys = rows.astype(np.uint16) if self._alloc <= 1 << 16 else rows
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

    def _emit_event(
        self,
        kind: EventKind,
        npcs: np.ndarray,
        ents: np.ndarray,
        typs: np.ndarray,
        at: np.ndarray | None = None,
    ) -> None:
        """Log events; `at`: their positions in the running `record_batch`'s input (see `_ordered_events`)."""
        if npcs.shape[0]:
            self._ev.append(
                (
                    int(kind),
                    np.array(npcs, dtype=np.int64),
                    np.array(ents, dtype=np.int64),
                    np.array(typs, dtype=np.int8),
                )
            )
            if self._ev_at is not None:
                self._ev_at.append(np.asarray(at, dtype=np.int64))

    def _ordered_events(self, start: int) -> None:
        """Put the events a `record_batch` logged since `_ev[start]` in its input order, as the same
        single calls log them: rounds log each kind together (all rehearsals of a round, then its
        evictions, then its formations), the singles one event after the other. `_ev_at` holds each
        entry's input positions; a stable sort keeps an eviction before the formation that caused it."""
        entries, at = self._ev[start:], self._ev_at
        self._ev_at = None
        if len(entries) < 2:
            return
        kinds = np.concatenate(
            [np.full(np.size(e[1]), e[0], dtype=np.int8) for e in entries]  # ints (a single) or arrays
        )
        columns = [np.concatenate([np.atleast_1d(e[i]) for e in entries]) for i in (1, 2, 3)]
        order = np.argsort(np.concatenate([np.atleast_1d(a) for a in at]), kind="stable")  # type: ignore[union-attr]
        del self._ev[start:]
        npcs, ents, typs = (column[order] for column in columns)
        self._ev.append((kinds[order], npcs, ents, typs.astype(np.int8)))
