"""Hybrid search by reciprocal rank fusion: ranks, not scores, so nothing to calibrate."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import QueryBatch, Ranking, Retriever, top_k_desc
from .search import BLOCK_ELEMENTS, Search, full_scores

__all__ = ["rrf_fuse", "rrf_scores", "ranks_from_orders", "HybridRetriever"]


def ranks_from_orders(orders: np.ndarray) -> np.ndarray:
    """Invert full rankings: ``ranks[q, pos]`` is the 1-based rank of chunk ``pos`` for query ``q``.

    >>> ranks_from_orders(np.array([[2, 0, 1]])).tolist()  # chunk 2 first, chunk 0 second, chunk 1 third
    [[2, 3, 1]]
    """
    orders = np.atleast_2d(orders)
    ranks = np.empty_like(orders)
    rows = np.arange(orders.shape[0])[:, None]
    ranks[rows, orders] = np.arange(1, orders.shape[1] + 1)
    return ranks


def rrf_fuse(rank_arrays: Sequence[np.ndarray], *, k: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Fuse full rankings: score = sum over lists of 1 / (k + rank), rank from 1.

    Parameters
    ----------
    rank_arrays : sequence of numpy.ndarray
        One (queries x chunks) array of 1-based ranks per ranking (see :func:`ranks_from_orders`).
    k : int, keyword-only
        The RRF constant (60, as in Cormack et al. 2009).

    Returns
    -------
    order, scores : numpy.ndarray
        Per query, the chunk positions best first and their fused scores. RRF ties
        often (a chunk ranked (3, 5) scores exactly like one ranked (5, 3)); ties are
        broken by the best single rank, then by chunk position (chunk-id order).

    Examples
    --------
    Chunk 0 ranked (1, 3) and chunk 2 ranked (3, 1) tie on score; chunk 1, ranked
    (2, 2), scores 2/62 < 1/61 + 1/63 and comes last:

    >>> d = np.array([[1, 2, 3]]); b = np.array([[3, 2, 1]])
    >>> order, s = rrf_fuse([d, b]); order.tolist()
    [[0, 2, 1]]
    """
    scores, best = rrf_scores(rank_arrays, k=k)
    pos = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
    # lexsort: last key is primary -> score desc, then best single rank asc, then position.
    order = np.lexsort((pos, best, -scores), axis=-1)
    return order, np.take_along_axis(scores, order, axis=1)


def rrf_scores(rank_arrays: Sequence[np.ndarray], *, k: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, best)``: the RRF score and the best single rank of every chunk (queries x chunks).

    With ``k = 1``, chunk 0 ranked (1, 3) scores 1/2 + 1/4 = 0.75, chunk 1 ranked (2, 2)
    scores 1/3 + 1/3 = 0.6667:

    >>> s, best = rrf_scores([np.array([[1, 2, 3]]), np.array([[3, 2, 1]])], k=1)
    >>> s.round(4).tolist(), best.tolist()
    ([[0.75, 0.6667, 0.75]], [[1, 2, 1]])
    """
    if not rank_arrays:
        raise ValueError("rrf_fuse needs at least one ranking")
    ranks = np.stack([np.atleast_2d(r) for r in rank_arrays])  # lists x queries x chunks
    return (1.0 / (k + ranks)).sum(axis=0), ranks.min(axis=0)


def _fused_top(scores: np.ndarray, best: np.ndarray, depth: int) -> np.ndarray:
    """Each row's first ``depth`` in rrf_fuse's order (score desc, best rank, position) without a full sort."""
    n = scores.shape[1]
    depth = min(depth, n)
    if depth == 0:
        return np.zeros((scores.shape[0], 0), dtype=np.int64)
    kth = np.partition(scores, n - depth, axis=1)[:, n - depth]
    out = np.empty((scores.shape[0], depth), dtype=np.int64)
    for i in range(scores.shape[0]):
        idx = np.flatnonzero(scores[i] >= kth[i])
        out[i] = idx[np.lexsort((idx, best[i, idx], -scores[i, idx]))[:depth]]
    return out


def _fused_rank(scores: np.ndarray, best: np.ndarray, targets: np.ndarray) -> int:
    """1-based rank, in rrf_fuse's order, of the best of ``targets`` in one row (0 when there is none)."""
    if targets.size == 0:
        return 0
    first = targets[np.lexsort((targets, best[targets], -scores[targets]))[0]]
    f, b = scores[first], best[first]
    ahead = (scores > f) | ((scores == f) & ((best < b) | ((best == b) & (np.arange(scores.size) < first))))
    return int(ahead.sum()) + 1


class HybridRetriever:
    """RRF over the full rankings of its parts (default: dense and BM25), k = 60."""

    name = "hybrid"

    def __init__(self, parts: Sequence[Retriever], *, k: int = 60):
        if len(parts) < 2:
            raise ValueError("hybrid retrieval fuses at least two retrievers")
        self.parts = list(parts)
        self.k = k

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        """Per query, chunk positions in :func:`rrf_fuse` order with their RRF scores (the top ``depth``)."""
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

    def _part_ranks(self, part: Retriever, sub: QueryBatch, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Full ranks of every chunk for the queries of ``sub``, and which queries the part is silent on."""
        zero_is_unmatched = getattr(part, "zero_is_unmatched", False)
        if callable(getattr(part, "scorer", None)):
            scores = full_scores(part.scorer(sub), n, len(sub))
            orders = top_k_desc(scores, None)
            silent = (scores == 0).all(axis=1) if zero_is_unmatched else np.zeros(len(sub), dtype=bool)
        else:
            rankings = part.rank(sub)
            orders = np.stack([r.order for r in rankings])
            silent = np.array([zero_is_unmatched and bool(np.all(r.scores == 0)) for r in rankings], dtype=bool)
        return ranks_from_orders(orders), silent

    def bounded_search(self, batch: QueryBatch, *, depth: int, targets=None, budget: int = BLOCK_ELEMENTS) -> Search:
        """Top ``depth`` and the targets' rank, a few queries at a time.

        RRF needs every chunk's rank in every part, so each part's full ranking is
        computed -- but only for as many queries as ``budget`` values allow
        (``budget // chunks``, at least one): memory grows with the corpus, never
        with queries x corpus. Same fusion and ties as :meth:`rank`.
        """
        n = self._size(batch)
        nq = len(batch)
        targets = list(targets) if targets is not None else [np.zeros(0, dtype=np.int64)] * nq
        step = max(1, budget // max(n, 1))
        orders, scores, ranks = [], [], []
        for a in range(0, nq, step):
            sub = QueryBatch(batch.texts[a : a + step], None if batch.vectors is None else batch.vectors[a : a + step])
            parts = [self._part_ranks(p, sub, n) for p in self.parts]
            fused, best = rrf_scores([r for r, _ in parts], k=self.k)
            silent = np.stack([s for _, s in parts])  # parts x queries
            # As in rank(): a part with no evidence for a query is left out of that query's fusion.
            for q in np.flatnonzero(silent.any(axis=0) & ~silent.all(axis=0)):
                f, b = rrf_scores([r[q : q + 1] for (r, _), quiet in zip(parts, silent[:, q]) if not quiet], k=self.k)
                fused[q], best[q] = f[0], b[0]
            del parts
            order = _fused_top(fused, best, depth)
            orders.append(order)
            scores.append(np.take_along_axis(fused, order, axis=1))
            ranks.append(np.array([_fused_rank(f, b, np.asarray(t, dtype=np.int64))
                                   for f, b, t in zip(fused, best, targets[a : a + step])], dtype=np.int64))
            del fused, best
        if not orders:
            return Search(np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0)), np.zeros(0, dtype=np.int64))
        return Search(np.concatenate(orders), np.concatenate(scores), np.concatenate(ranks))

    def _size(self, batch: QueryBatch) -> int:
        """Chunks in the index: from a part that says (``n_chunks``), else from one query's full ranking."""
        for p in self.parts:
            n = getattr(p, "n_chunks", None)
            if n is not None:
                return int(n)
        (r,) = self.parts[0].rank(QueryBatch(batch.texts[:1], None if batch.vectors is None else batch.vectors[:1]))
        return len(r.order)
