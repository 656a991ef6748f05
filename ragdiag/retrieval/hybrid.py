"""Hybrid search by reciprocal rank fusion: ranks, not scores, so nothing to calibrate."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import QueryBatch, Ranking, Retriever

__all__ = ["rrf_fuse", "ranks_from_orders", "HybridRetriever"]


def ranks_from_orders(orders: np.ndarray) -> np.ndarray:
    """Invert full rankings: ``ranks[q, pos]`` is the 1-based rank of chunk ``pos`` for query ``q``."""
    orders = np.atleast_2d(orders)
    ranks = np.empty_like(orders)
    rows = np.arange(orders.shape[0])[:, None]
    ranks[rows, orders] = np.arange(1, orders.shape[1] + 1)
    return ranks


def rrf_fuse(rank_arrays: Sequence[np.ndarray], *, k: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Fuse full rankings: score = sum over lists of 1 / (k + rank), rank from 1.

    Returns ``(order, scores)`` per query, best first. RRF ties often (a chunk
    ranked (3, 5) scores exactly like one ranked (5, 3)); ties are broken by
    the best single rank, then by chunk position (chunk-id order).

    >>> d = np.array([[1, 2, 3]]); b = np.array([[3, 2, 1]])
    >>> order, s = rrf_fuse([d, b]); order.tolist()
    [[0, 2, 1]]
    """
    if not rank_arrays:
        raise ValueError("rrf_fuse needs at least one ranking")
    ranks = np.stack([np.atleast_2d(r) for r in rank_arrays])  # lists x queries x chunks
    scores = (1.0 / (k + ranks)).sum(axis=0)
    best = ranks.min(axis=0)
    pos = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
    # lexsort: last key is primary -> score desc, then best single rank asc, then position.
    order = np.lexsort((pos, best, -scores), axis=-1)
    return order, np.take_along_axis(scores, order, axis=1)


class HybridRetriever:
    """RRF over the full rankings of its parts (default: dense and BM25), k = 60."""

    name = "hybrid"

    def __init__(self, parts: Sequence[Retriever], *, k: int = 60):
        if len(parts) < 2:
            raise ValueError("hybrid retrieval fuses at least two retrievers")
        self.parts = list(parts)
        self.k = k

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        rankings = [p.rank(batch) for p in self.parts]
        ranks = [ranks_from_orders(np.stack([r.order for r in rs])) for rs in rankings]
        order, scores = rrf_fuse(ranks, k=self.k)
        # A part with no evidence for a query (every score 0: BM25 with no known token) has no
        # ranking to give; fusing its chunk-order fallback would add noise, so that query is
        # fused from the other parts alone.
        silent = np.array([[getattr(p, "zero_is_unmatched", False) and bool(np.all(r.scores == 0)) for r in rs]
                           for p, rs in zip(self.parts, rankings)])  # parts x queries
        for q in np.flatnonzero(silent.any(axis=0) & ~silent.all(axis=0)):
            keep = [ranks[p][q:q + 1] for p in range(len(self.parts)) if not silent[p, q]]
            o, s = rrf_fuse(keep, k=self.k)
            order[q], scores[q] = o[0], s[0]
        if depth is not None:
            order, scores = order[:, :depth], scores[:, :depth]
        return [Ranking(o, s) for o, s in zip(order, scores)]
