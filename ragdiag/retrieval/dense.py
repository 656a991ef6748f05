"""Exact dense search on unit vectors: score = dot, cosine distance = 1 - dot.

At this scale exact search is both fastest and loses no recall; an ANN index
would plug in behind the same protocol for millions of chunks.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from .base import QueryBatch, Ranking, top_k_desc
from .search import Search, block_search, block_size
from .vectors import rows_of

__all__ = ["DenseRetriever", "cosine_distances", "normalisation_check", "search_workers"]


def cosine_distances(queries: np.ndarray, chunks: np.ndarray) -> np.ndarray:
    """1 - q.c for unit vectors, (queries x chunks), float64 for stable thresholds.

    >>> cosine_distances(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.6, 0.8], [-1.0, 0.0]])).round(4).tolist()
    [[0.0, 0.4, 2.0]]
    """
    return 1.0 - np.asarray(queries, dtype=np.float64) @ np.asarray(chunks, dtype=np.float64).T


def normalisation_check(vectors: np.ndarray, *, sample: int = 200, seed: int = 0) -> float:
    """max |‖a-b‖²/2 - (1 - a·b)| over a sample of pairs: ~1e-7 for unit vectors.

    Without normalisation the identity fails and a distance threshold means nothing.

    >>> v = np.eye(3)
    >>> normalisation_check(v) < 1e-12
    True
    >>> normalisation_check(2 * v) > 1
    True
    """
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(vectors), size=min(sample, len(vectors)), replace=False)
    s = np.asarray(rows_of(vectors, idx), dtype=np.float64)  # only the sample is read (vectors may be on disk)
    cos = 1 - s @ s.T
    worst = 0.0
    for i in range(0, len(s), 25):  # blocks keep the pairwise differences small in memory
        sq = ((s[i : i + 25, None, :] - s[None, :, :]) ** 2).sum(-1) / 2
        worst = max(worst, float(np.abs(sq - cos[i : i + 25]).max()))
    return worst


def search_workers(n_queries: int, n_blocks: int) -> int:
    """Threads for a dense search: as many as OpenBLAS has now, at most one per block; 1 for a single query.

    Every thread computes its blocks on one BLAS thread. A matrix product (two queries or more) gives each
    score the same bits on one thread or several (OpenBLAS splits the output, not the sum over dimensions:
    checked by ``tests/unit/test_dense_search.py``); a single query's matrix-vector product may not, so one
    query keeps the one pass with the BLAS's own threads. 1 without threadpoolctl (nothing can pin BLAS
    to one thread), or when OpenBLAS runs on one thread (a small corpus's search, :mod:`ragdiag.core.blas`).
    """
    if n_queries < 2 or n_blocks < 2:
        return 1
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return 1
    threads = next((i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"), 1)
    return max(1, min(int(threads), n_blocks))


def one_blas_thread():
    """A context manager: BLAS on one thread (threadpoolctl, which :func:`search_workers` found installed)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


class DenseRetriever:
    """Exact search; ``chunk_vectors`` may be an array, a ``np.memmap`` or a :class:`VectorFile` (on disk).

    ``search`` reads the vectors block by block and never holds a (queries x
    chunks) array; ``rank`` (all chunks, or ``depth``) holds the full matrix.
    """

    name = "dense"

    def __init__(self, chunk_vectors: np.ndarray):
        if isinstance(chunk_vectors, np.ndarray) and not isinstance(chunk_vectors, np.memmap):
            chunk_vectors = np.ascontiguousarray(chunk_vectors, dtype=np.float32)
        self.vectors = chunk_vectors

    @property
    def n_chunks(self) -> int:
        """Chunks in the index."""
        return len(self.vectors)

    def scorer(self, batch: QueryBatch):
        """``cols -> (queries x len(cols))`` scores of a slice or array of chunk positions."""
        if batch.vectors is None:
            raise ValueError("dense retrieval needs query vectors: embed the queries first (QueryBatch.vectors)")
        q = np.asarray(batch.vectors, dtype=np.float32)
        return lambda cols: q @ np.asarray(rows_of(self.vectors, cols), dtype=np.float32).T

    def bounded_search(self, batch: QueryBatch, *, depth: int, targets=None, block: int | None = None,
                       workers: int | None = None) -> Search:
        """Top ``depth`` and the targets' rank by blocks of chunks: no (queries x chunks) array.

        ``workers`` (None: :func:`search_workers`): threads over runs of consecutive blocks, each product on one
        BLAS thread, so both the products and the selection after them use every core; one (queries x block)
        array per thread.
        """
        n, nq = len(self.vectors), len(batch)
        block = block or block_size(nq, n)
        workers = search_workers(nq, -(-n // block)) if workers is None else workers
        with one_blas_thread() if workers > 1 else nullcontext():
            return block_search(self.scorer(batch), n, nq, depth, targets, block=block, workers=workers)

    def scores(self, batch: QueryBatch) -> np.ndarray:
        """Dense (queries x chunks) cosine similarities of the unit query and chunk vectors."""
        if batch.vectors is None:
            raise ValueError("dense retrieval needs query vectors: embed the queries first (QueryBatch.vectors)")
        return self.scorer(batch)(slice(0, len(self.vectors)))

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        """Per query, chunk positions by descending cosine similarity (the top ``depth``; all when None)."""
        scores = self.scores(batch)
        order = top_k_desc(scores, depth)
        return [Ranking(o, s[o]) for o, s in zip(order, scores)]
