"""Search over shards of the chunks: each shard returns its top pool per query, merged exactly.

The chunks ``0..n`` are cut into contiguous row ranges, one per shard. A shard
holds its rows' unit vectors and its documents' BM25 postings (the columns of
the index's weights: term weights computed with the *corpus's* idf and average
length, so a shard's scores are the single index's) and answers, per query, its
top ``depth`` by (score desc, position asc) and counts for the needle's rank.
The driver merges (:func:`merge_tops`): the first ``depth`` of the union of
every shard's first ``depth``, in the same total order, is the first ``depth``
of all chunks -- top-k of top-k is exact because the order is total (ties are
broken by chunk position, as :func:`~ragdiag.retrieval.base.top_k_desc` does).

What makes the results *identical* to the single process, not just close:

- **dense scores bit for bit.** A float32 product's last bit depends on the
  shape of the product OpenBLAS computes (and on its thread count): measured,
  ``q @ V[0:10000].T`` differs from the first 10,000 columns of ``q @ V[0:20971].T``.
  So a shard computes exactly the single process's blocks (the grid of
  :func:`~ragdiag.retrieval.search.block_size` for the same queries), the blocks
  whose start lies in its range, with the driver's BLAS thread count. A block may
  run past the range's end: a shard also holds the next :data:`HALO` rows
  (one block at most), so memory per shard is its rows plus one block.
- **BM25 scores bit for bit**: a document's score adds its terms' weights in
  ascending global term id, whatever shard holds it (float64, element by element).
- **needle ranks**: 1 + the chunks ahead of the best holder (higher score, or the
  same score at a lower position), counted by each shard and added.
- **hybrid**: the pooled fusion (:func:`~ragdiag.retrieval.hybrid.fuse_pools`)
  runs in the driver on :class:`~ragdiag.retrieval.hybrid.RemotePart`\\ s: a part's
  pool is the merged top of the shards' rows, an exact rank is counted by the
  shards. The score rows are computed for the same query batches as
  :meth:`~ragdiag.retrieval.hybrid.HybridRetriever.bounded_search` uses.

Shards run in this process (:class:`LocalShards`, for tests) or as Ray actors
(:mod:`ragdiag.retrieval.ray_search`). A retriever other than ``dense``,
``bm25`` and ``hybrid`` of those two is searched in this process.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .base import QueryBatch
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .hybrid import _FULL_UP_TO, HybridRetriever, RemotePart, _stable_top, fuse_pools
from .search import (BLOCK_ELEMENTS, MAX_BLOCK_CHUNKS, Search, _best_targets, _blocks, _pass, _target_positions,
                     block_size, search)
from .vectors import rows_of

__all__ = ["HALO", "Shard", "ShardMemory", "LocalShards", "ShardedSearch", "shard_bounds", "merge_tops"]

#: Rows a shard holds past its range: the rest of a block that starts in the range (blocks hold at most this).
HALO = MAX_BLOCK_CHUNKS


def shard_bounds(n: int, shards: int) -> np.ndarray:
    """``shards + 1`` row offsets cutting ``n`` chunks into contiguous ranges of near-equal size.

    >>> shard_bounds(10, 3).tolist()
    [0, 3, 6, 10]
    """
    if shards < 1:
        raise ValueError(f"shards must be at least 1, got {shards}")
    return (np.arange(shards + 1) * n) // shards


def merge_tops(pos: Sequence[np.ndarray], scores: Sequence[np.ndarray], depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``depth`` per query of the shards' tops, by (score desc, position asc).

    ``pos`` and ``scores``: one (queries x up to depth) array per shard, global positions.

    >>> o, s = merge_tops([np.array([[0, 1]]), np.array([[5, 6]])], [np.array([[0.5, 0.2]]), np.array([[0.5, 0.4]])], 3)
    >>> o.tolist(), s.tolist()
    ([[0, 5, 6]], [[0.5, 0.5, 0.4]])
    """
    p = np.concatenate([np.asarray(a, dtype=np.int64) for a in pos], axis=1)
    s = np.concatenate(list(scores), axis=1)
    # lexsort: the last key is primary -> score desc, then position asc (the stable sort's tie-break).
    o = np.lexsort((p, -s), axis=-1)[:, :depth]
    return np.take_along_axis(p, o, axis=1), np.take_along_axis(s, o, axis=1)


def _blas_threads() -> int | None:
    """OpenBLAS's thread count in this process now (None without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return next((i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"), None)


def _threads(n: int | None):
    from contextlib import nullcontext

    if n is None:
        return nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(n, user_api="blas")


@dataclass(frozen=True)
class ShardMemory:
    """What one shard holds: its rows, the bytes of its vectors and postings, and its process's resident set."""

    start: int
    stop: int
    vector_bytes: int
    posting_bytes: int
    row_bytes: int  # score rows kept for the hybrid fusion of the current query batch
    rss_bytes: int  # the shard's process (a Ray worker), or 0 in the driver's own process
    pid: int


class Shard:
    """Rows ``[start, stop)`` of an index of ``n`` chunks: their vectors (+ the :data:`HALO`) and BM25 postings.

    Every position a method takes or returns is global (``0..n``).
    """

    def __init__(self) -> None:
        self.start = self.stop = self.n = 0
        self.vectors: np.ndarray | None = None  # rows [start, start + len(vectors))
        self.weights = None  # CSR, terms x documents [start, stop)
        self._rows: dict = {}  # hybrid: the dense rows of the current batch, and one query's BM25 row

    # -- data ---------------------------------------------------------------------------------------------
    def set_range(self, start: int, stop: int, n: int) -> None:
        """The rows this shard answers for; drops the data of another range."""
        if (start, stop, n) != (self.start, self.stop, self.n):
            self.vectors, self.weights, self._rows = None, None, {}
        self.start, self.stop, self.n = int(start), int(stop), int(n)

    def set_vectors(self, vectors: np.ndarray) -> None:
        """Rows ``[start, min(n, stop + HALO))`` of the chunk vectors."""
        want = min(self.n, self.stop + HALO) - self.start
        if len(vectors) != want:
            raise ValueError(f"shard [{self.start}, {self.stop}): expected {want} vector rows, got {len(vectors)}")
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._rows = {}

    def set_postings(self, weights) -> None:
        """The BM25 weights of documents ``[start, stop)``: CSR, terms x documents (local columns)."""
        if weights.shape[1] != self.stop - self.start:
            raise ValueError(f"shard [{self.start}, {self.stop}): postings for {weights.shape[1]} documents")
        self.weights = weights.tocsr()
        self._rows = {}

    def memory(self) -> ShardMemory:
        """The bytes this shard holds, and its process's resident set (when it is not the driver's)."""
        w = self.weights
        posting = 0 if w is None else int(w.data.nbytes + w.indices.nbytes + w.indptr.nbytes)
        rows = sum(int(v[1].nbytes if isinstance(v, tuple) else v.nbytes) for v in self._rows.values())
        try:
            with open("/proc/self/statm") as f:
                rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            rss = 0
        return ShardMemory(self.start, self.stop, 0 if self.vectors is None else int(self.vectors.nbytes), posting,
                           rows, rss, os.getpid())

    # -- dense --------------------------------------------------------------------------------------------
    def _scorer(self, q: np.ndarray):
        V, s0 = self.vectors, self.start

        def score(cols):
            if isinstance(cols, slice):
                if cols.stop - s0 > len(V):
                    raise ValueError(f"block [{cols.start}, {cols.stop}) runs past shard rows (block > HALO?)")
                return q @ V[cols.start - s0 : cols.stop - s0].T
            return q @ V[np.asarray(cols) - s0].T
        return score

    def dense_values(self, q: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Scores of the (query, chunk) pairs whose chunk is in this shard's range; nan for the others."""
        out = np.full(len(rows), np.nan)
        mine = (cols >= self.start) & (cols < self.stop)
        if mine.any():
            out[mine] = np.einsum("ij,ij->i", q[rows[mine]], self.vectors[cols[mine] - self.start])
        return out

    def dense_pass(self, q: np.ndarray, depth: int, block: int, thresholds, watch, threads: int | None):
        """:func:`~ragdiag.retrieval.search._pass` over the blocks of the grid that start in this shard's range."""
        if self.vectors is None:
            raise ValueError("this shard holds no vectors")
        with _threads(threads):
            return _pass(self._scorer(np.asarray(q, dtype=np.float32)), self.n, len(q), depth, thresholds,
                         block=block, watch=watch, lo=self.start, hi=self.stop)

    # -- BM25 ---------------------------------------------------------------------------------------------
    def bm25_row(self, terms: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """One query's scores of this shard's documents: posting lists added in ascending term order.

        The additions of :meth:`~ragdiag.retrieval.bm25.BM25Index.query_scores`, in the same order: equal bit for bit.
        """
        w, out = self.weights, np.zeros(self.stop - self.start)
        for t, c in zip(np.asarray(terms).tolist(), np.asarray(counts).tolist()):
            a, b = w.indptr[t], w.indptr[t + 1]
            out[w.indices[a:b]] += w.data[a:b] if c == 1 else w.data[a:b] * c
        return out

    def bm25_values(self, terms: Sequence, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """BM25 scores of the (query, chunk) pairs in this shard's range (the same additions); nan elsewhere."""
        out = np.full(len(rows), np.nan)
        w = self.weights
        for j in np.flatnonzero((cols >= self.start) & (cols < self.stop)):
            d, s = int(cols[j]) - self.start, 0.0
            t_ids, t_counts = terms[int(rows[j])]
            for t, c in zip(np.asarray(t_ids).tolist(), np.asarray(t_counts).tolist()):
                a, b = w.indptr[t], w.indptr[t + 1]
                at = a + np.searchsorted(w.indices[a:b], d)
                if at < b and w.indices[at] == d:
                    s += w.data[at] if c == 1 else w.data[at] * c
            out[j] = s
        return out

    def bm25_pass(self, terms: Sequence, depth: int, thresholds):
        """Per query: the top ``depth`` of this shard's documents and the count of those ahead of the threshold."""
        from .bm25 import _top

        nq, m = len(terms), self.stop - self.start
        d = min(depth, m)
        pos, sc = np.zeros((nq, d), dtype=np.int64), np.zeros((nq, d))
        counts = np.zeros(nq, dtype=np.int64)
        thr, tpos = thresholds
        for i, (t_ids, t_counts) in enumerate(terms):
            row = self.bm25_row(t_ids, t_counts)
            o = _top(row, d)
            pos[i], sc[i] = o + self.start, row[o]
            if tpos[i] >= 0:
                counts[i] = int((row > thr[i]).sum()) + int((row[: max(0, tpos[i] - self.start)] == thr[i]).sum())
        return pos, sc, counts

    # -- rows for the hybrid fusion -----------------------------------------------------------------------
    def load_dense_rows(self, q: np.ndarray, block: int, threads: int | None) -> None:
        """Keep the dense rows of a query batch over this shard's blocks of the grid (as ``full_scores`` computes)."""
        score = self._scorer(np.asarray(q, dtype=np.float32))
        with _threads(threads):
            parts = [(a, np.asarray(score(slice(a, b)))) for a, b in _blocks(self.n, block, self.start, self.stop)]
        lo = parts[0][0] if parts else self.start
        rows = np.concatenate([p for _, p in parts], axis=1) if parts else np.zeros((len(q), 0), dtype=np.float32)
        self._rows = {"dense": (lo, rows)}

    def _row(self, part: str, qi: int, terms) -> tuple[int, np.ndarray]:
        """``(first position, scores)`` of query ``qi``'s row over what this shard covers of ``part``."""
        if part == "dense":
            lo, rows = self._rows["dense"]
            return lo, rows[qi]
        key = ("bm25", qi)
        if key not in self._rows:
            self._rows = {k: v for k, v in self._rows.items() if k == "dense"}  # one BM25 row at a time
            self._rows[key] = self.bm25_row(*terms)
        return self.start, self._rows[key]

    def top(self, part: str, qi: int, depth: int, terms=None) -> tuple[np.ndarray, np.ndarray]:
        """The first ``depth`` of query ``qi``'s row by (score desc, position asc): global positions, scores."""
        lo, row = self._row(part, qi, terms)
        o = _stable_top(row, min(depth, row.size)) if row.size else np.zeros(0, dtype=np.int64)
        return o + lo, row[o]

    def values(self, part: str, qi: int, pos: np.ndarray, terms=None) -> np.ndarray:
        """Row values at ``pos`` where this shard covers them, nan elsewhere."""
        lo, row = self._row(part, qi, terms)
        pos = np.asarray(pos, dtype=np.int64)
        out = np.full(pos.size, np.nan)
        inside = (pos >= lo) & (pos < lo + row.size)
        out[inside] = row[pos[inside] - lo]
        return out

    def ahead(self, part: str, qi: int, values: np.ndarray, pos: np.ndarray, terms=None) -> np.ndarray:
        """Per (value, position): this shard's chunks scoring higher, or the same at a lower position."""
        lo, row = self._row(part, qi, terms)
        cols = np.arange(lo, lo + row.size)
        return np.array([int((row > v).sum()) + int(((row == v) & (cols < p)).sum()) for v, p in zip(values, pos)],
                        dtype=np.int64)


class LocalShards:
    """Shards in this process (tests, and a check of the merge without a cluster)."""

    where = "this process"

    def __init__(self, shards: int = 2):
        self.handles = [Shard() for _ in range(shards)]

    def __len__(self) -> int:
        return len(self.handles)

    def put(self, value):
        """A value shipped to every shard once (here: itself)."""
        return value

    def map(self, method: str, args: Sequence[tuple]) -> list:
        """``method(*args[i])`` on shard ``i``, every shard; the results in shard order."""
        return [getattr(h, method)(*a) for h, a in zip(self.handles, args)]

    def call(self, i: int, method: str, args: tuple):
        """``method(*args)`` on shard ``i`` alone."""
        return getattr(self.handles[i], method)(*args)


def _combine(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The one shard's non-nan value per entry (each entry belongs to exactly one shard)."""
    out = np.full(len(parts[0]), np.nan) if len(parts) else np.zeros(0)
    for p in parts:
        out = np.where(np.isnan(p), out, p)
    return out


class ShardedSearch:
    """The search engine over shards: :meth:`search` gives :func:`~ragdiag.retrieval.search.search`'s result.

    ``shards`` is :class:`LocalShards` or the Ray actors of :class:`~ragdiag.retrieval.ray_search.RayShards`.
    The data of the last index searched stays on the shards (the next strategy's replaces it).
    """

    def __init__(self, shards):
        self.shards = shards
        self._vectors = self._index = None  # what the shards hold now
        self._n = -1

    def _ranges(self, n: int) -> list[tuple[int, int]]:
        b = shard_bounds(n, len(self.shards))
        if n != self._n:
            self.shards.map("set_range", [(int(b[i]), int(b[i + 1]), n) for i in range(len(self.shards))])
            self._n, self._vectors, self._index = n, None, None
        return [(int(b[i]), int(b[i + 1])) for i in range(len(self.shards))]

    def _load_dense(self, dense: DenseRetriever) -> None:
        n = dense.n_chunks
        ranges = self._ranges(n)
        if self._vectors is not dense.vectors:
            for i, (a, b) in enumerate(ranges):  # one shard's rows in the driver at a time
                rows = self.shards.put(np.asarray(rows_of(dense.vectors, slice(a, min(n, b + HALO))), dtype=np.float32))
                self.shards.call(i, "set_vectors", (rows,))
            self._vectors = dense.vectors

    def _load_bm25(self, bm25: BM25Retriever) -> None:
        ranges = self._ranges(bm25.n_chunks)
        if self._index is not bm25.index:
            w = bm25.index.weights.tocsc()  # terms x documents: a shard's documents are a column range
            for i, (a, b) in enumerate(ranges):
                self.shards.call(i, "set_postings", (self.shards.put(w[:, a:b].tocsr()),))
            self._index = bm25.index

    def load(self, retriever) -> None:
        """Ship the data ``retriever`` searches to the shards now (else its first search does)."""
        for part in getattr(retriever, "parts", [retriever]):
            if type(part) is DenseRetriever:
                self._load_dense(part)
            elif type(part) is BM25Retriever:
                self._load_bm25(part)

    def memory(self) -> list[ShardMemory]:
        """What each shard holds now."""
        return self.shards.map("memory", [()] * len(self.shards))

    # -- search -------------------------------------------------------------------------------------------
    @staticmethod
    def _sharded(retriever) -> bool:
        kind = type(retriever)
        return kind in (DenseRetriever, BM25Retriever) or (
            kind is HybridRetriever and [type(p) for p in retriever.parts] == [DenseRetriever, BM25Retriever])

    def stamp(self, retriever) -> str | None:
        """Where ``retriever``'s search ran, for its stamp (``"2 shards (ray)"``); None when it ran in this process."""
        if not self._sharded(retriever):
            return None
        return f"{len(self.shards)} shards ({getattr(self.shards, 'where', 'ray')})"

    def search(self, retriever, batch: QueryBatch, *, depth: int, targets=None) -> Search:
        """Top ``depth`` and the best target's rank, as the single process finds them (every rank, every score)."""
        kind = type(retriever)
        if kind is DenseRetriever:
            return self._dense(retriever, batch, depth, targets)
        if kind is BM25Retriever:
            return self._bm25(retriever, batch, depth, targets)
        if kind is HybridRetriever and [type(p) for p in retriever.parts] == [DenseRetriever, BM25Retriever]:
            return self._hybrid(retriever, batch, depth, targets)
        return search(retriever, batch, depth=depth, targets=targets)  # anything else: in this process

    def _dense(self, dense: DenseRetriever, batch: QueryBatch, depth: int, targets) -> Search:
        """:func:`~ragdiag.retrieval.search.block_search` split by blocks over the shards (the same steps)."""
        if batch.vectors is None:
            raise ValueError("dense retrieval needs query vectors: embed the queries first (QueryBatch.vectors)")
        n, nq = dense.n_chunks, len(batch)
        self._load_dense(dense)
        q = self.shards.put(np.asarray(batch.vectors, dtype=np.float32))
        _, rows, cols = _target_positions(targets, nq, n)
        block, threads, k = block_size(nq, n), _blas_threads(), len(self.shards)
        depth_ = min(depth, n)
        if not cols.size:
            got = self.shards.map("dense_pass", [(q, depth_, block, None, None, threads)] * k)
            order, scores = merge_tops([g[0] for g in got], [g[1] for g in got], depth_)
            return Search(order, scores.astype(np.float32), np.zeros(nq, dtype=np.int64), np.full(nq, np.nan))
        values = _combine(self.shards.map("dense_values", [(q, rows, cols)] * k))
        thr, tpos = _best_targets(nq, rows, cols, values)
        got = self.shards.map("dense_pass", [(q, depth_, block, (thr, tpos), (rows, cols), threads)] * k)
        order, scores = merge_tops([g[0] for g in got], [g[1] for g in got], depth_)
        counts = np.sum([g[2] for g in got], axis=0)
        seen = _combine([g[3] for g in got])
        if not np.array_equal(seen, values):  # as block_search: the blocks' scores decide, recount with them
            thr, tpos = _best_targets(nq, rows, cols, seen)
            counts = np.sum([g[2] for g in self.shards.map("dense_pass", [(q, 0, block, (thr, tpos), None, threads)] * k)],
                            axis=0)
        rank = np.where(tpos >= 0, counts + 1, 0).astype(np.int64)
        return Search(order, scores.astype(np.float32), rank, np.where(tpos >= 0, thr, np.nan))

    def _bm25(self, bm25: BM25Retriever, batch: QueryBatch, depth: int, targets) -> Search:
        """:meth:`~ragdiag.retrieval.bm25.BM25Index.search` over the shards: tops merged, counts added."""
        n, nq = bm25.n_chunks, len(batch)
        bm25.index.scorer_used = "numpy"  # the shards add the posting lists with numpy (the retriever's stamp)
        self._load_bm25(bm25)
        _, rows, cols = _target_positions(targets, nq, n)
        terms = self.shards.put([bm25.index.query_terms(t) for t in batch.texts])
        k, depth_ = len(self.shards), min(depth, n)
        values = _combine(self.shards.map("bm25_values", [(terms, rows, cols)] * k)) if cols.size else np.zeros(0)
        thr, tpos = _best_targets(nq, rows, cols, values)
        got = self.shards.map("bm25_pass", [(terms, depth_, (thr, tpos))] * k)
        order, scores = merge_tops([g[0] for g in got], [g[1] for g in got], depth_)
        counts = np.sum([g[2] for g in got], axis=0)
        rank = np.where(tpos >= 0, counts + 1, 0).astype(np.int64)
        return Search(order, scores, rank, np.where(tpos >= 0, thr, np.nan))

    def _part(self, name: str, n: int, qi: int, terms=None) -> RemotePart:
        k = len(self.shards)

        def top(depth: int) -> np.ndarray:
            got = self.shards.map("top", [(name, qi, depth, terms)] * k)
            return merge_tops([g[0][None] for g in got], [g[1][None] for g in got], depth)[0][0]

        def ranks(pos: np.ndarray) -> np.ndarray:
            pos = np.asarray(pos, dtype=np.int64)
            v = _combine(self.shards.map("values", [(name, qi, pos, terms)] * k))
            return np.sum(self.shards.map("ahead", [(name, qi, v, pos, terms)] * k), axis=0) + 1

        return RemotePart(n, top, ranks)

    def _hybrid(self, hybrid: HybridRetriever, batch: QueryBatch, depth: int, targets,
                budget: int = 32 * BLOCK_ELEMENTS) -> Search:
        """:meth:`~ragdiag.retrieval.hybrid.HybridRetriever.bounded_search` with the parts' rows on the shards.

        The dense rows are computed for the query batches the single process uses
        (its full-ranking path up to 32,768 chunks, its pooled path above), so their
        bits are its bits; the fusion is always the pooled one, whose result is the
        full-ranking fusion's (same order, scores and ties).
        """
        dense, bm25 = hybrid.parts
        if batch.vectors is None:
            raise ValueError("dense retrieval needs query vectors: embed the queries first (QueryBatch.vectors)")
        n, nq = dense.n_chunks, len(batch)
        self._load_dense(dense)
        self._load_bm25(bm25)
        targets, _, _ = _target_positions(targets, nq, n)
        full = n <= _FULL_UP_TO and hybrid.pool is None
        step = max(1, (budget // 32 if full else budget) // max(n, 1))
        depth_, k, threads = min(depth, n), len(self.shards), _blas_threads()
        orders = np.zeros((nq, depth_), dtype=np.int64)
        scores = np.zeros((nq, depth_))
        ranks = np.zeros(nq, dtype=np.int64)
        for a in range(0, nq, step):
            sub = np.asarray(batch.vectors[a : a + step], dtype=np.float32)
            self.shards.map("load_dense_rows", [(self.shards.put(sub), block_size(len(sub), n), threads)] * k)
            for j in range(len(sub)):
                terms = bm25.index.query_terms(batch.texts[a + j])
                parts = [self._part("dense", n, j)]
                if terms[0].size:  # BM25 with no known token scores every chunk 0: silent, left out (as rank())
                    parts.append(self._part("bm25", n, a + j, terms))
                o, s, r = fuse_pools(parts, depth_, np.asarray(targets[a + j], dtype=np.int64), k=hybrid.k,
                                     pool=hybrid.pool)
                orders[a + j], scores[a + j], ranks[a + j] = o, s, r
        return Search(orders, scores, ranks)
