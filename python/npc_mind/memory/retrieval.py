"""Top-k retrieval for an LLM prompt (the Generative Agents memory stream's idea, never waking).

score = R^w_r x E^w_i x relevance^w_t, where relevance = floor + (1 - floor) x shared / asked when
query tags are given (1 otherwise). A weight of 0 drops its factor. Forgotten memories
(R <= forget threshold) never appear. Ties: higher R, then working before long-term, then slot.
"""

from __future__ import annotations

import numpy as np

from npc_mind.memory.params import MemoryParams
from npc_mind.memory.types import MemoryView


def scores(views: list[MemoryView], query: frozenset[str] | None, params: MemoryParams) -> np.ndarray:
    if not views:
        return np.empty(0)
    r = np.fromiter((v.retrievability for v in views), dtype=np.float64, count=len(views))
    e = np.fromiter((v.salience for v in views), dtype=np.float64, count=len(views))
    out = np.power(r, params.topk_recency_weight) * np.power(e, params.topk_importance_weight)
    if query:
        floor = params.topk_tag_floor
        shared = np.fromiter((len(v.tags & query) for v in views), dtype=np.float64, count=len(views))
        rel = floor + (1.0 - floor) * shared / len(query)
        out *= np.power(rel, params.topk_relevance_weight)
    return out


def top_k(
    views: list[MemoryView], k: int, query: frozenset[str] | None, params: MemoryParams
) -> list[MemoryView]:
    live = [v for v in views if v.retrievability > params.forget_threshold]
    if not live or k == 0:
        return []
    s = scores(live, query, params)
    r = np.fromiter((v.retrievability for v in live), dtype=np.float64, count=len(live))
    tier = np.fromiter((int(v.tier) for v in live), dtype=np.int64, count=len(live))
    pos = np.arange(len(live))
    order = np.lexsort((pos, tier, -r, -s))
    return [live[i] for i in order[:k].tolist()]
