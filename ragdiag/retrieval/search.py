"""Bounded-memory search: the top k of every query, and the rank of given chunks, by blocks of chunks.

No (queries x all chunks) array is ever held. A retriever that can score
any subset of chunks for a batch of queries (``scorer(batch)(cols)``) is
searched block by block:

- **top k**: within a block, the ``k`` best chunks of each query are picked
  with ``np.partition`` (ties at the cut resolved to the lowest positions), then
  merged with the best so far by (score desc, position asc) -- exactly the
  first ``k`` of the stable descending sort of the full row
  (:func:`ragdiag.retrieval.base.top_k_desc`);
- **target rank** (the needle holders): the best target of a query is the one
  the stable sort puts first (highest score, then lowest position); its rank is
  1 + the chunks scoring above it + the chunks scoring the same at a lower
  position, counted block by block.

Target scores are computed up front and checked against the scores the blocks
compute for the same chunks; if a BLAS gave a different last bit for another
matrix shape, the counts are redone with the block scores, so the result is
always that of the full stable sort of the scores the blocks computed. When the
targets lie in few blocks (a single query's), their blocks are scored up front
instead, the same call as the pass's, so no second pass is needed.

``workers`` threads each take a run of consecutive blocks of the same grid; their
tops are merged by (score desc, position asc) and their counts added, so the
result does not depend on their number (the dense search runs one per BLAS thread,
each product on one thread: :func:`ragdiag.retrieval.dense.search_workers`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import numpy as np

from .base import QueryBatch, Retriever

__all__ = ["Search", "SearchEngine", "LocalSearch", "BLOCK_ELEMENTS", "MAX_BLOCK_CHUNKS", "block_size", "block_search", "search",
           "full_scores", "target_ranks_from_orders", "from_full"]

#: Scores held at once, (queries x chunks of one block): 4M values, 32 MB in float64.
BLOCK_ELEMENTS = 1 << 22
#: At most this many chunks per block (their vectors are read at once: 48 MB at 384 float32 dimensions).
MAX_BLOCK_CHUNKS = 1 << 15

#: A block's chunks that beat a query's best so far are merged with them when at most this many times the depth
#: (in a second block, often a little more than the depth); more, and the block is selected in full.
FEW = 4

Scorer = Callable[[slice | np.ndarray], np.ndarray]  # cols -> (queries x len(cols)) scores


@dataclass(frozen=True)
class Search:
    """One batch's top ``depth`` per query and the rank of each query's best target."""

    order: np.ndarray  # (queries, depth) chunk positions, best first
    scores: np.ndarray  # (queries, depth) the retriever's scores
    target_rank: np.ndarray  # (queries,) 1-based rank of the best-ranked target; 0 when a query has none
    target_score: np.ndarray | None = None  # (queries,) that target's score (nan: none); None if not known


def block_size(n_queries: int, n_chunks: int, budget: int = BLOCK_ELEMENTS) -> int:
    """Chunks per block so that one block's scores hold about ``budget`` values.

    >>> block_size(100, 10**6), block_size(100, 918)
    (32768, 918)
    """
    return int(max(1, min(max(n_chunks, 1), MAX_BLOCK_CHUNKS, budget // max(n_queries, 1))))


def _select(S: np.ndarray, depth: int) -> np.ndarray:
    """Column indices of each row's ``depth`` best values, ties at the cut to the lowest columns.

    The result is in column order (not sorted by score).

    >>> _select(np.array([[0.5, 0.9, 0.5, 0.5, 0.1]]), 2).tolist()
    [[0, 1]]
    """
    nq, b = S.shape
    if depth >= b:
        return np.broadcast_to(np.arange(b), (nq, b))
    kth = np.partition(S, b - depth, axis=1)[:, b - depth]  # the depth-th largest value of each row
    keep = S >= kth[:, None]
    extra = keep.sum(axis=1) - depth  # ties at the cut beyond what is needed
    for i in np.flatnonzero(extra):  # keep only the lowest columns among them (rare but for all-zero rows)
        tied = np.flatnonzero(S[i] == kth[i])
        keep[i, tied[len(tied) - extra[i]:]] = False
    return np.nonzero(keep)[1].reshape(nq, depth)


def _row_counts(B: np.ndarray) -> np.ndarray:
    """Each row's ``True`` count of a (rows x cols) boolean array, as int64 (summed as bytes: no int64 pass).

    >>> _row_counts(np.array([[True, False, True], [False, False, False]])).tolist()
    [2, 0]
    """
    if B.shape[1] < 1 << 32:
        return B.view(np.uint8).sum(axis=1, dtype=np.uint32).astype(np.int64)
    return B.sum(axis=1, dtype=np.int64)


def _above(S: np.ndarray, best_sc: np.ndarray, depth: int):
    """The block's chunks that beat each query's ``depth``-th best so far, when at most ``FEW * depth`` per query.

    Blocks come in position order, so a chunk that only ties the ``depth``-th best loses to it (a lower
    position) and only a strictly higher score can enter: ``(rows, cols, slot, width)`` of those
    (``slot``: each one's place among its query's, ``width``: the most of any query); they are merged with
    the best so far, however many. None when a query has more than ``FEW * depth`` of them (the early
    blocks) or a score is not a number: the block is then selected in full.
    """
    beats = S > best_sc[:, -1:]
    per = _row_counts(beats)
    width = int(per.max()) if per.size else 0
    # S.max() is nan when any score is (one read of S, no boolean array); best_sc is (queries x depth).
    if width > FEW * depth or np.isnan(best_sc).any() or (S.size and np.isnan(S.max())):
        return None
    rows, cols = np.divmod(np.flatnonzero(beats), S.shape[1])  # row by row, columns ascending
    slot = np.arange(rows.size) - np.repeat(np.cumsum(per) - per, per)
    return rows, cols, slot, width


def _merge(pos: np.ndarray, sc: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``depth`` of each row ordered by (score desc, position asc)."""
    o = np.lexsort((pos, -sc), axis=-1)[:, :depth]
    return np.take_along_axis(pos, o, axis=1), np.take_along_axis(sc, o, axis=1)


def _blocks(n: int, block: int, lo: int = 0, hi: int | None = None):
    """The blocks ``[start, start + block)`` (cut at ``n``) of the grid of ``block`` whose start is in ``[lo, hi)``."""
    first = -(-lo // block) * block
    for start in range(first, n if hi is None else min(n, hi), block):
        yield start, min(n, start + block)


def _pass(score: Scorer, n: int, nq: int, depth: int, thresholds, *, block: int, watch=None,
          lo: int = 0, hi: int | None = None):
    """One pass over the blocks: top ``depth`` (if depth) and counts above ``thresholds`` (if given).

    ``thresholds`` is ``(score, position)`` per query; ``watch`` is ``(rows, cols)``
    of chunks whose block scores are returned (to check the targets' scores; nan for
    a chunk outside the blocks passed). ``lo``, ``hi``: only the blocks of the grid
    whose start lies in ``[lo, hi)`` (a shard's part of the pass; positions stay global).
    """
    depth = min(depth, n)
    cut = {}  # the thresholds in each score dtype met (float32 scores are compared with float32 values)
    best_pos = np.zeros((nq, 0), dtype=np.int64)
    best_sc = np.zeros((nq, 0))
    counts = np.zeros(nq, dtype=np.int64)
    seen = None if watch is None else np.full(len(watch[0]), np.nan)
    for start, stop in _blocks(n, block, lo, hi):
        S = np.ascontiguousarray(score(slice(start, stop)))
        if depth:
            few = _above(S, best_sc, depth) if best_pos.shape[1] == depth else None
            if few is None:
                idx = _select(S, depth)
                pos = np.concatenate([best_pos, idx + start], axis=1)
                sc = np.concatenate([best_sc.astype(S.dtype, copy=False), np.take_along_axis(S, idx, axis=1)], axis=1)
                best_pos, best_sc = _merge(pos, sc, depth)
            elif few[0].size:
                rows, cols, slot, width = few
                pos = np.full((nq, width), n, dtype=np.int64)  # padding: past every chunk, scored -inf
                sc = np.full((nq, width), -np.inf, dtype=S.dtype)
                pos[rows, slot], sc[rows, slot] = cols + start, S[rows, cols]
                best_pos, best_sc = _merge(np.concatenate([best_pos, pos], axis=1),
                                           np.concatenate([best_sc.astype(S.dtype, copy=False), sc], axis=1), depth)
        if thresholds is not None:
            thr, tpos = thresholds
            if S.dtype not in cut:
                cut[S.dtype] = _exactly_in(thr, S.dtype)
            thr = cut[S.dtype]
            above = _row_counts(S > thr[:, None])
            at_least = _row_counts(S >= thr[:, None])
            counts += above
            for i in np.flatnonzero(at_least > above):  # ties with the target (rare): those at a lower position
                counts[i] += int(((S[i] == thr[i]) & (np.arange(start, stop) < tpos[i])).sum())
        if watch is not None:
            rows, wcols = watch
            inside = (wcols >= start) & (wcols < stop)
            seen[inside] = S[rows[inside], wcols[inside] - start]
    return best_pos, best_sc, counts, seen


def _exactly_in(values: np.ndarray, dtype) -> np.ndarray:
    """``values`` converted to the float ``dtype`` when every one converts exactly, else as they are.

    A float32 block compared with float64 thresholds is converted to float64 element by element; with
    float32 thresholds of the same values every comparison has the same outcome, without the conversion.

    >>> _exactly_in(np.array([0.5, np.inf]), np.float32).dtype, _exactly_in(np.array([0.1]), np.float32).dtype
    (dtype('float32'), dtype('float64'))
    """
    dtype = np.dtype(dtype)
    if values.dtype == dtype or dtype.kind != "f" or values.dtype.kind != "f":
        return values
    with np.errstate(over="ignore"):
        cast = values.astype(dtype)
    return cast if np.array_equal(cast.astype(values.dtype), values, equal_nan=True) else values


def _best_targets(nq: int, rows: np.ndarray, cols: np.ndarray, values: np.ndarray):
    """Per query the target the stable sort puts first: highest score, then lowest position."""
    thr = np.full(nq, np.inf)
    tpos = np.full(nq, -1, dtype=np.int64)
    if rows.size:
        o = np.lexsort((cols, -values, rows))  # by query, then score desc, then position
        first = np.ones(o.size, dtype=bool)
        first[1:] = rows[o][1:] != rows[o][:-1]
        thr[rows[o][first]] = values[o][first]
        tpos[rows[o][first]] = cols[o][first]
    return thr, tpos


def _target_positions(targets: Sequence[np.ndarray] | None, nq: int, n: int):
    """``(targets, rows, cols)``: one array of chunk positions per query (none given: empty ones), and every
    target as its query's row and its chunk's column; a count or position out of range is a ValueError."""
    targets = list(targets) if targets is not None else [np.zeros(0, dtype=np.int64)] * nq
    if len(targets) != nq:
        raise ValueError(f"targets: one array of chunk positions per query ({nq}), got {len(targets)}")
    rows = np.concatenate([np.full(len(t), i, dtype=np.int64) for i, t in enumerate(targets)] or [np.zeros(0, int)])
    cols = np.concatenate([np.asarray(t, dtype=np.int64) for t in targets] or [np.zeros(0, int)])
    if cols.size and (cols.min() < 0 or cols.max() >= n):
        raise ValueError(f"target positions must be in [0, {n})")
    return targets, rows, cols


def _target_values(score: Scorer, n: int, block: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The targets' scores: from their own blocks when those are few, else from one product over them.

    A block's scores are the ones the pass computes (the same call), so the counts need no second pass;
    when the targets lie in more than an eighth of the blocks (at least one), one product over the targets
    costs less, and the pass checks its scores (a BLAS may round another shape differently).
    """
    if not cols.size:
        return np.zeros(0)
    starts = np.unique(cols // block) * block
    if len(starts) > max(1, -(-n // block) // 8):
        union, inv = np.unique(cols, return_inverse=True)
        return np.asarray(score(union))[rows, inv]
    values = None
    for start in starts.tolist():
        S = np.asarray(score(slice(start, min(n, start + block))))
        values = np.empty(cols.size, dtype=S.dtype) if values is None else values
        inside = (cols >= start) & (cols < start + block)
        values[inside] = S[rows[inside], cols[inside] - start]
    return values


def _passes(score: Scorer, n: int, nq: int, depth: int, thresholds, *, block: int, watch=None, workers: int = 1):
    """:func:`_pass` over all the blocks, split into ``workers`` runs of consecutive blocks, one thread each.

    Each run's top is exact in its range (score desc, position asc), so the first ``depth`` of the runs' tops
    merged the same way are the whole pass's; the counts add up, and each watched chunk lies in one run.
    """
    starts = list(range(0, n, block))
    workers = max(1, min(workers, len(starts)))
    if workers == 1:
        return _pass(score, n, nq, depth, thresholds, block=block, watch=watch)
    cuts = [starts[len(starts) * g // workers] for g in range(workers)] + [n]
    with ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(lambda r: _pass(score, n, nq, depth, thresholds, block=block, watch=watch,
                                               lo=r[0], hi=r[1]), zip(cuts[:-1], cuts[1:])))
    pos, sc = _merge(np.concatenate([p[0] for p in parts], axis=1), np.concatenate([p[1] for p in parts], axis=1),
                     min(depth, n))
    counts = np.sum([p[2] for p in parts], axis=0)
    seen = None
    if watch is not None:
        seen = parts[0][3]
        for p in parts[1:]:
            seen = np.where(np.isnan(p[3]), seen, p[3])
    return pos, sc, counts, seen


def block_search(score: Scorer, n: int, n_queries: int, depth: int, targets: Sequence[np.ndarray] | None = None,
                 *, block: int | None = None, workers: int = 1) -> Search:
    """Top ``depth`` and the best target's rank for ``n_queries`` queries over ``n`` chunks, by blocks.

    ``workers``: threads, each over a run of consecutive blocks of the same grid (:func:`_passes`); the same
    result whatever their number, provided ``score`` gives a block the same scores in any thread.
    """
    nq = n_queries
    block = block or block_size(nq, n)
    targets, rows, cols = _target_positions(targets, nq, n)
    values = _target_values(score, n, block, rows, cols)
    thr, tpos = _best_targets(nq, rows, cols, values)
    if not cols.size:  # no targets: nothing to count
        order, scores = _passes(score, n, nq, depth, None, block=block, workers=workers)[:2]
        return Search(order, scores, np.zeros(nq, dtype=np.int64), np.full(nq, np.nan))
    order, scores, counts, seen = _passes(score, n, nq, depth, (thr, tpos), block=block, watch=(rows, cols),
                                          workers=workers)
    if cols.size and not np.array_equal(seen, values):
        # The up-front scores differ in the last bit from the blocks' (BLAS kernels differ by shape): recount.
        thr, tpos = _best_targets(nq, rows, cols, seen)
        counts = _passes(score, n, nq, 0, (thr, tpos), block=block, workers=workers)[2]
    rank = np.where(tpos >= 0, counts + 1, 0)
    return Search(order, scores, rank.astype(np.int64), np.where(tpos >= 0, thr, np.nan))


def full_scores(score: Scorer, n: int, n_queries: int, *, block: int | None = None) -> np.ndarray:
    """The (queries x n) scores assembled block by block (for a small batch of queries)."""
    block = block or block_size(n_queries, n)
    parts = [np.asarray(score(slice(a, b))) for a, b in _blocks(n, block)]
    return np.concatenate(parts, axis=1) if parts else np.zeros((n_queries, 0))


def target_ranks_from_orders(orders: np.ndarray, targets: Sequence[np.ndarray]) -> np.ndarray:
    """1-based rank of each query's best target in full rankings ``orders`` (0: no target).

    >>> target_ranks_from_orders(np.array([[3, 1, 0, 2], [0, 1, 2, 3]]), [np.array([0, 2]), np.array([], dtype=int)]).tolist()
    [3, 0]
    """
    out = np.zeros(len(targets), dtype=np.int64)
    for i, t in enumerate(targets):
        t = np.asarray(t, dtype=np.int64)
        if t.size:
            out[i] = int(np.flatnonzero(np.isin(orders[i], t))[0]) + 1
    return out


class SearchEngine(Protocol):
    """Where a retriever's search runs: :class:`LocalSearch` (this process) or shards
    (:class:`~ragdiag.retrieval.sharded.ShardedSearch`, on Ray with ``eval --engine ray``); the same result."""

    def search(self, retriever: Retriever, batch: QueryBatch, *, depth: int,
               targets: Sequence[np.ndarray] | None = None) -> Search:
        """:func:`search`'s result: the top ``depth`` per query and the best target's rank."""


class LocalSearch:
    """The search engine of a single process: :func:`search`."""

    def search(self, retriever: Retriever, batch: QueryBatch, *, depth: int,
               targets: Sequence[np.ndarray] | None = None) -> Search:
        """:func:`search` of ``retriever`` in this process."""
        return search(retriever, batch, depth=depth, targets=targets)


def search(retriever: Retriever, batch: QueryBatch, *, depth: int,
           targets: Sequence[np.ndarray] | None = None) -> Search:
    """``retriever.bounded_search`` when it has one (bounded memory), else its full ``rank`` (all chunks held)."""
    if callable(getattr(retriever, "bounded_search", None)):
        return retriever.bounded_search(batch, depth=depth, targets=targets)
    rankings = retriever.rank(batch)
    orders = np.stack([r.order for r in rankings])
    scores = np.stack([r.scores for r in rankings])
    targets = targets if targets is not None else [np.zeros(0, dtype=np.int64)] * len(batch)
    return from_full(orders, scores, targets, depth=depth)


def from_full(orders: np.ndarray, scores: np.ndarray, targets: Sequence[np.ndarray], *, depth: int | None = None) -> Search:
    """A :class:`Search` read from full rankings (every chunk ranked) and their scores."""
    depth = orders.shape[1] if depth is None else depth
    ranks = target_ranks_from_orders(orders, targets)
    at = np.take_along_axis(scores, np.maximum(ranks - 1, 0)[:, None], axis=1)[:, 0] if scores.size else ranks * 0.0
    return Search(orders[:, :depth], scores[:, :depth], ranks, np.where(ranks > 0, at, np.nan))
