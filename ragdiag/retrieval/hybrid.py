"""Hybrid search by reciprocal rank fusion: ranks, not scores, so nothing to calibrate.

:meth:`HybridRetriever.bounded_search` fuses the parts' top pools, never their
full rankings: each part's scores are read once, its top ``P`` chunks sorted
(a partition, then a sort of ``P``), and RRF evaluated on the union of the
pools. A chunk outside a part's pool has a rank above ``P`` there, so its fused
score lies in an interval; the top ``depth`` and the best target's fused rank
are settled by those intervals, counting the exact rank of the few chunks whose
interval straddles the decision (one pass over that part's scores), and
deepening the pools when a chunk outside every pool could still compete. The
result is exactly that of fusing the full rankings (:func:`rrf_fuse`, same ties).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import QueryBatch, Ranking, Retriever, top_k_desc
from .search import BLOCK_ELEMENTS, Search, full_scores

__all__ = ["rrf_fuse", "rrf_scores", "ranks_from_orders", "fuse_pools", "RemotePart", "HybridRetriever"]

_POOL = 1024  # the first pool depth of each part (at least 4 x depth): RRF's top rarely needs more
_FULL_UP_TO = 32768  # up to this many chunks, fusing full rankings (vectorised over queries) is the faster way
_RESOLVE = 24  # chunks whose exact rank is counted (a pass over the scores each) before deepening instead


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


def _stable_top(row: np.ndarray, depth: int) -> np.ndarray:
    """The first ``depth`` positions of the stable descending sort of ``row`` (a partition, then a small sort)."""
    n = row.size
    if depth >= n:
        return np.argsort(-row, kind="stable")
    kth = np.partition(row, n - depth)[n - depth]
    cand = np.flatnonzero(row >= kth)
    return cand[np.lexsort((cand, -row[cand]))][:depth]


class _PartRanks:
    """One part's scores for one query: exact ranks of its top pool, and of any chunk counted on demand."""

    def __init__(self, row: np.ndarray):
        self.row, self.n, self.depth = row, row.size, 0
        self.pos = np.zeros(0, dtype=np.int64)  # positions whose rank is known (pool and counted), sorted
        self.rank = np.zeros(0, dtype=np.int64)  # their ranks
        self._above: dict[float, int] = {}  # score -> chunks scoring higher

    def _merge(self, pos: np.ndarray, rank: np.ndarray) -> None:
        pos, rank = np.concatenate([self.pos, pos]), np.concatenate([self.rank, rank])
        o = np.argsort(pos, kind="stable")
        pos, rank = pos[o], rank[o]
        first = np.ones(pos.size, dtype=bool)
        first[1:] = pos[1:] != pos[:-1]
        self.pos, self.rank = pos[first], rank[first]

    def deepen(self, depth: int) -> None:
        """Know the ranks of the top ``depth`` (no-op when the pool is that deep already)."""
        depth = min(depth, self.n)
        if depth > self.depth:
            order = _stable_top(self.row, depth)
            self._merge(order, np.arange(1, order.size + 1))
            self.depth = depth

    def known(self, pos: np.ndarray) -> np.ndarray:
        """Ranks of ``pos`` where known, 0 elsewhere (a rank beyond the pool)."""
        if not self.pos.size:
            return np.zeros(pos.size, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.pos, pos), self.pos.size - 1)
        return np.where(self.pos[at] == pos, self.rank[at], 0)

    def count(self, pos: np.ndarray) -> None:
        """Count the exact rank of each chunk of ``pos``: 1 + chunks scoring higher + the same at a lower position."""
        ranks = np.empty(pos.size, dtype=np.int64)
        for j, c in enumerate(pos.tolist()):
            v = self.row[c]
            above = self._above.get(float(v))
            if above is None:
                above = self._above[float(v)] = int(np.count_nonzero(self.row > v))
            ranks[j] = above + int(np.count_nonzero(self.row[:c] == v)) + 1
        self._merge(pos, ranks)


class RemotePart(_PartRanks):
    """A part whose score row is held elsewhere (by shards), for :func:`fuse_pools`.

    ``top(depth)`` gives the first ``depth`` positions of the row's stable descending
    sort (score desc, position asc); ``ranks(pos)`` the exact 1-based ranks of ``pos``
    in that sort. Only the pool and the counted ranks are held here, never the row.
    """

    def __init__(self, n: int, top, ranks):
        self.n, self.depth = int(n), 0
        self.pos = np.zeros(0, dtype=np.int64)
        self.rank = np.zeros(0, dtype=np.int64)
        self._top, self._ranks = top, ranks

    def deepen(self, depth: int) -> None:
        """Know the ranks of the top ``depth`` (one call to ``top``; no-op when the pool is that deep already)."""
        depth = min(depth, self.n)
        if depth > self.depth:
            order = np.asarray(self._top(depth), dtype=np.int64)
            self._merge(order, np.arange(1, order.size + 1))
            self.depth = depth

    def count(self, pos: np.ndarray) -> None:
        """The exact ranks of ``pos`` (one call to ``ranks``)."""
        self._merge(pos, np.asarray(self._ranks(pos), dtype=np.int64))


def fuse_pools(rows: Sequence[np.ndarray | RemotePart], depth: int, targets: np.ndarray, *, k: int = 60,
               pool: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """One query's RRF top ``depth`` and best target's fused rank, from each part's score row.

    Exactly the first ``depth`` of :func:`rrf_fuse` over the full rankings of ``rows``
    (each ranked by score descending, ties by position), and the 1-based fused rank
    of the best of ``targets`` (0 when there is none), computed from top pools.

    Parameters
    ----------
    rows : sequence of numpy.ndarray or RemotePart
        One score row per fused part (higher is better), all of the same length; or a
        :class:`RemotePart` giving that row's pools and ranks (a row held by shards).
    depth : int
        How many fused chunks to return.
    targets : numpy.ndarray of int
        Chunk positions whose best fused rank is wanted.
    k : int, keyword-only
        The RRF constant.
    pool : int, keyword-only
        The first pool depth per part (deepened as needed; default 1024, at least 4 x depth).

    Returns
    -------
    order, scores, target_rank
        The top ``depth`` positions in fused order, their RRF scores, the target's rank.

    Notes
    -----
    With pools of depth ``P``, a chunk outside part ``p``'s pool has rank > ``P`` there,
    so its fused score lies in ``[lo, hi]`` (rank ``n`` or ``P + 1`` in the parts where it
    is unknown), and a chunk outside every pool scores at most ``L / (k + P + 1)``.
    The ``depth``-th largest ``lo`` bounds the ``depth``-th best score from below: only
    chunks whose ``hi`` reaches it can be in the top, and their unknown ranks are counted
    exactly. The target's rank counts the chunks ahead of it; those whose interval
    contains its score are counted exactly. When too many need counting, or a chunk
    outside every pool could still compete, the pools are deepened (at ``P = n`` every
    rank is known).

    Examples
    --------
    Chunk 0 ranks (1, 3) and chunk 2 ranks (3, 1): a tie on score broken by position;
    chunk 1 ranks (2, 2) and comes last (as in :func:`rrf_fuse`):

    >>> order, s, r = fuse_pools([np.array([0.9, 0.5, 0.1]), np.array([1.0, 2.0, 3.0])], 3, np.array([1]))
    >>> order.tolist(), r
    ([0, 2, 1], 3)
    """
    parts = [r if isinstance(r, _PartRanks) else _PartRanks(r) for r in rows]
    n = parts[0].n
    L = len(parts)
    depth = min(depth, n)
    targets = np.unique(np.asarray(targets, dtype=np.int64))
    P = min(n, max(_POOL, 4 * depth) if pool is None else max(pool, 1))

    def state():
        """The candidates (every pool, every counted chunk, the targets) and their fused bounds."""
        for p in parts:
            p.deepen(P)
        cand = np.sort(np.concatenate([p.pos for p in parts] + [targets]))
        cand = cand[np.concatenate([[True], cand[1:] != cand[:-1]])] if cand.size else cand
        known = np.stack([p.known(cand) for p in parts])
        exact = (known > 0).all(axis=0)
        # Summed over the parts in order, as rrf_scores does: the exact scores are the same bits.
        lo = (1.0 / (k + np.where(known > 0, known, n))).sum(axis=0)
        hi = (1.0 / (k + np.where(known > 0, known, P + 1))).sum(axis=0)
        best = np.where(known > 0, known, n + 1).min(axis=0)  # an unknown rank is > P >= every known one
        return cand, known, exact, lo, hi, best

    def settle(todo: np.ndarray, cand: np.ndarray, known: np.ndarray) -> None:
        """Count the unknown ranks of ``todo`` (a mask), or deepen the pools when there are too many."""
        nonlocal P
        if todo.sum() > _RESOLVE and P < n:
            P = min(n, P * 4)
        else:
            for li, p in enumerate(parts):
                pick = todo & (known[li] == 0)
                if pick.any():
                    p.count(cand[pick])

    order, scores = np.zeros(0, dtype=np.int64), np.zeros(0)
    while depth:  # the top depth
        cand, known, exact, lo, hi, best = state()
        theta = np.partition(lo, lo.size - depth)[lo.size - depth] if lo.size >= depth else -np.inf
        if L / (k + P + 1) >= theta and P < n:  # a chunk outside every pool could be in the top
            P = min(n, P * 4)
            continue
        contenders = hi >= theta  # the others score below theta <= the depth-th best score
        if (contenders & ~exact).any():
            settle(contenders & ~exact, cand, known)
            continue
        c = np.flatnonzero(contenders)
        o = c[np.lexsort((cand[c], best[c], -lo[c]))][:depth]
        order, scores = cand[o], lo[o]
        break

    rank = 0
    while targets.size:  # the best target's fused rank
        cand, known, exact, lo, hi, best = state()
        ti = np.searchsorted(cand, targets)
        if not exact[ti].all():
            for li, p in enumerate(parts):
                pick = ti[known[li, ti] == 0]
                if pick.size:
                    p.count(cand[pick])
            continue
        i = ti[np.lexsort((targets, best[ti], -lo[ti]))[0]]
        t, f, b = cand[i], lo[i], best[i]
        if L / (k + P + 1) >= f and P < n:  # a chunk outside every pool could come first
            P = min(n, max(P * 4, int(L / f - k) + 2))
            continue
        unsure = ~exact & (hi >= f) & (lo <= f)
        if unsure.any():
            settle(unsure, cand, known)
            continue
        # exact chunks ahead by (score desc, best rank, position); the others are settled by their bounds
        ahead = np.where(exact, (lo > f) | ((lo == f) & ((best < b) | ((best == b) & (cand < t)))), lo > f)
        rank = int(ahead.sum()) + 1
        break
    return order, scores, rank


class HybridRetriever:
    """RRF over the full rankings of its parts (default: dense and BM25), k = 60."""

    name = "hybrid"
    pool: int | None = None  # the first pool depth of bounded_search (None: 1024, at least 4 x depth)

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

    def _rows(self, part: Retriever, sub: QueryBatch, n: int):
        """Per query of ``sub``, the part's score row (None when the part cannot give scores)."""
        if callable(getattr(part, "query_scores", None)):
            return part.query_scores(sub)
        if callable(getattr(part, "scorer", None)):
            return iter(full_scores(part.scorer(sub), n, len(sub)))
        return None

    def bounded_search(self, batch: QueryBatch, *, depth: int, targets=None, budget: int = 32 * BLOCK_ELEMENTS) -> Search:
        """Top ``depth`` and the targets' rank from the parts' top pools (:func:`fuse_pools`).

        The parts' score rows are computed for as many queries as ``budget`` values
        allow (``budget // chunks``, at least one: 134 queries at a million chunks, 512 MB
        of float32 dense scores) and fused a query at a time: memory grows with the corpus,
        never with queries x corpus. Each such batch reads every chunk vector once, so the
        budget is what keeps hybrid at the cost of dense search on large corpora (at 1M
        chunks, 32 queries per batch read the vectors four times: 4.6x dense + BM25). Same fusion and ties
        as :meth:`rank`; a part silent on a query (BM25 with no known token) is left
        out of that query's fusion. Up to 32,768 chunks (unless ``pool`` is set), and
        for parts that give no scores (``scorer`` or ``query_scores``), the full
        rankings are fused instead (:meth:`_bounded_full`): the same result.
        """
        n = self._size(batch)
        nq = len(batch)
        targets = list(targets) if targets is not None else [np.zeros(0, dtype=np.int64)] * nq
        if (n <= _FULL_UP_TO and self.pool is None) or not all(
                callable(getattr(p, "query_scores", None)) or callable(getattr(p, "scorer", None)) for p in self.parts):
            return self._bounded_full(batch, depth=depth, targets=targets, budget=budget // 32)
        step = max(1, budget // max(n, 1))
        depth_ = min(depth, n)
        orders = np.zeros((nq, depth_), dtype=np.int64)
        scores = np.zeros((nq, depth_))
        ranks = np.zeros(nq, dtype=np.int64)
        quiet = [getattr(p, "zero_is_unmatched", False) for p in self.parts]
        for a in range(0, nq, step):
            sub = QueryBatch(batch.texts[a : a + step], None if batch.vectors is None else batch.vectors[a : a + step])
            streams = [self._rows(p, sub, n) for p in self.parts]
            for q in range(len(sub)):
                rows = [next(s) for s in streams]
                silent = [z and not rows[i].any() for i, z in enumerate(quiet)]
                if any(silent) and not all(silent):  # as in rank(): a part with no evidence is left out
                    rows = [r for r, s in zip(rows, silent) if not s]
                o, s, r = fuse_pools(rows, depth_, np.asarray(targets[a + q], dtype=np.int64), k=self.k, pool=self.pool)
                orders[a + q], scores[a + q], ranks[a + q] = o, s, r
        return Search(orders, scores, ranks)

    def _bounded_full(self, batch: QueryBatch, *, depth: int, targets, budget: int) -> Search:
        """Top ``depth`` and the targets' rank from every part's full ranking, a few queries at a time."""
        n = self._size(batch)
        nq = len(batch)
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
