"""The long-term tier: memories consolidated out of working memory by `advance_game_day`.

They take no working slot and age in game days (the source's "dual track" time: sleeping at an
inn advances game days, which is what this tier follows, while working memory follows real play
seconds). Decay is applied in one batch per `advance_game_day` call. Flat growable columns, one
row per memory; an index maps (npc, entity, type) to its row.
"""

from __future__ import annotations

import numpy as np

from npc_mind.memory.curves import retrievability_age
from npc_mind.memory.params import MemoryParams

_COLUMNS = {
    "npc": np.int64,
    "entity": np.int64,
    "memory_type": np.int8,
    "salience": np.float64,
    "recall_count": np.int64,
    "stability": np.float64,  # game days
    "age": np.float64,  # game days since last woken
}


class LongTermStore:
    def __init__(self) -> None:
        self.size = 0
        self.cols: dict[str, np.ndarray] = {name: np.empty(0, dtype=dt) for name, dt in _COLUMNS.items()}
        self.tags: list[frozenset[str]] = []
        self._index: dict[int, dict[tuple[int, int], int]] = {}

    # ------------------------------------------------------------------------------------------
    def _grow(self, need: int) -> None:
        cap = self.cols["npc"].shape[0]
        if need <= cap:
            return
        new = max(need, 2 * cap, 16)
        for name, arr in self.cols.items():
            grown = np.zeros(new, dtype=arr.dtype)
            grown[: self.size] = arr[: self.size]
            self.cols[name] = grown

    def count_for(self, npc: int) -> int:
        return len(self._index.get(npc, ()))

    def lookup(self, npc: int, entity: int) -> list[int]:
        """Rows of this NPC's long-term memories of `entity` (any type), in row order."""
        idx = self._index.get(npc)
        if not idx:
            return []
        return sorted(i for (e, _t), i in idx.items() if e == entity)

    def rows_for(self, npc: int) -> list[int]:
        return sorted(self._index.get(npc, {}).values())

    def get(self, npc: int, entity: int, memory_type: int) -> int | None:
        return self._index.get(npc, {}).get((entity, memory_type))

    def retrievability(self, rows: np.ndarray | list[int], params: MemoryParams) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        return retrievability_age(self.cols["age"][rows], self.cols["stability"][rows], params)

    # ------------------------------------------------------------------------------------------
    def add(  # noqa: PLR0917
        self,
        npc: int,
        entity: int,
        memory_type: int,
        salience: float,
        recall_count: int,
        stability_days: float,
        tags: frozenset[str],
    ) -> int:
        """Add, or merge into the existing (npc, entity, type) memory (keeps the larger of each)."""
        row = self.get(npc, entity, memory_type)
        c = self.cols
        if row is not None:
            c["salience"][row] = max(c["salience"][row], salience)
            c["recall_count"][row] = max(c["recall_count"][row], recall_count)
            c["stability"][row] = max(c["stability"][row], stability_days)
            c["age"][row] = 0.0
            self.tags[row] = self.tags[row] | tags
            return row
        self._grow(self.size + 1)
        row = self.size
        c["npc"][row], c["entity"][row], c["memory_type"][row] = npc, entity, memory_type
        c["salience"][row], c["recall_count"][row] = salience, recall_count
        c["stability"][row], c["age"][row] = stability_days, 0.0
        self.tags.append(tags)
        self._index.setdefault(npc, {})[(entity, memory_type)] = row
        self.size += 1
        return row

    def wake(self, row: int) -> None:
        self.cols["age"][row] = 0.0
        self.cols["recall_count"][row] += 1

    def keep(self, keep: np.ndarray) -> None:
        """Compact to the rows where `keep` is True and rebuild the index."""
        for arr in self.cols.values():
            kept = arr[: self.size][keep]
            arr[: kept.shape[0]] = kept
        self.tags = [t for t, k in zip(self.tags, keep.tolist(), strict=True) if k]
        self.size = int(np.count_nonzero(keep))
        self._reindex()

    def _reindex(self) -> None:
        self._index = {}
        c = self.cols
        for row, (npc, e, t) in enumerate(
            zip(
                c["npc"][: self.size].tolist(),
                c["entity"][: self.size].tolist(),
                c["memory_type"][: self.size].tolist(),
                strict=True,
            )
        ):
            self._index.setdefault(npc, {})[(e, t)] = row

    def remove_npc(self, npc: int) -> None:
        if npc in self._index:
            self.keep(self.cols["npc"][: self.size] != npc)

    def decay(self, days: float, params: MemoryParams) -> np.ndarray:
        """Age every long-term memory by `days`; drop the forgotten ones and return their rows
        (as they were before compaction) so the caller can report them."""
        if self.size == 0:
            return np.empty(0, dtype=np.int64)
        self.cols["age"][: self.size] += days
        r = self.retrievability(np.arange(self.size), params)
        return np.flatnonzero(r <= params.forget_threshold)

    def snapshot(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        return {name: arr[rows].copy() for name, arr in self.cols.items()}
