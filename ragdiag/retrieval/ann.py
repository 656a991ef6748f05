"""Approximate dense search: an HNSW graph (FAISS ``IndexHNSWFlat``, inner product).

FAISS (``faiss-cpu``, MIT, maintained by Meta) is an optional extra
(``requirements-variants.txt``); without it ``dense-hnsw`` is reported
unavailable with the install command. Builds are deterministic: FAISS draws
HNSW levels from a generator with a fixed seed, and the graph is built and
searched on one thread (insertion order then fixes the graph).

The index returns its best ``max(ef_search, TOP)`` chunks; the chunks it did not
return follow in position order with NaN scores, so a needle ranked there
counts as missed by the index at every reported k.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ..core.defaults import TOP
from .base import QueryBatch, Ranking, Unavailable

__all__ = ["HNSWParams", "HNSWRetriever", "faiss_module", "neighbour_overlap", "INSTALL_HINT"]

INSTALL_HINT = "pip install -r requirements-variants.txt (faiss-cpu)"


def faiss_module():
    """The ``faiss`` module, or :class:`Unavailable` naming the install command."""
    try:
        import faiss
    except ImportError:
        raise Unavailable("dense-hnsw", f"FAISS is not installed: {INSTALL_HINT}") from None
    return faiss


@dataclass(frozen=True)
class HNSWParams:
    """Graph degree ``m``, build beam ``ef_construction``, search beam ``ef_search``."""

    m: int = 16
    ef_construction: int = 200
    ef_search: int = 64

    def __post_init__(self):
        for name in ("m", "ef_construction", "ef_search"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"HNSW {name} must be >= 1, got {getattr(self, name)}")

    def as_dict(self) -> dict:
        """The parameters under FAISS's names (``M``, ``ef_construction``, ``ef_search``)."""
        return {"M": self.m, "ef_construction": self.ef_construction, "ef_search": self.ef_search}


@contextlib.contextmanager
def _one_thread(faiss):
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class HNSWRetriever:
    """HNSW over unit vectors with inner-product scores (= 1 - cosine distance)."""

    name = "dense-hnsw"

    def __init__(self, chunk_vectors: np.ndarray, params: HNSWParams = HNSWParams()):
        faiss = faiss_module()
        v = np.ascontiguousarray(chunk_vectors, dtype=np.float32)
        if v.ndim != 2 or len(v) == 0:
            raise ValueError(f"an HNSW index needs a non-empty (n, dim) matrix, got shape {v.shape}")
        self.params = params
        self.n, self.dim = v.shape
        self._faiss = faiss
        with _one_thread(faiss):
            index = faiss.IndexHNSWFlat(self.dim, params.m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = params.ef_construction
            index.hnsw.efSearch = params.ef_search
            index.add(v)
        self.index = index
        self.bytes_per_vector = int(faiss.serialize_index(index).nbytes) / self.n

    def stamp(self) -> dict:
        """What the run records about the index: library version, parameters, bytes per vector."""
        return {"index": "hnsw", "library": f"faiss {self._faiss.__version__}", **self.params.as_dict(),
                "bytes_per_vector": round(self.bytes_per_vector, 1)}

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """FAISS's own ``(scores, labels)`` for the top ``k`` (label -1 where fewer were found)."""
        q = np.ascontiguousarray(queries, dtype=np.float32)
        with _one_thread(self._faiss):
            return self.index.search(q, min(k, self.n))

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        """Per query, the graph search's top ``max(ef_search, TOP)`` by inner product, then the other chunks (score NaN)."""
        if batch.vectors is None:
            raise ValueError("dense-hnsw needs query vectors: embed the queries first (QueryBatch.vectors)")
        k = max(self.params.ef_search, TOP)
        scores, labels = self.search(batch.vectors, k)
        out = []
        for s, lab in zip(scores, labels):
            found = lab >= 0
            head = lab[found].astype(np.int64)
            if depth is not None and depth <= head.size:  # the index's own answer suffices
                out.append(Ranking(head[:depth], s[found][:depth].astype(np.float64)))
                continue
            rest = np.setdiff1d(np.arange(self.n), head, assume_unique=False)
            order = np.concatenate([head, rest])
            sc = np.concatenate([s[found].astype(np.float64), np.full(rest.size, np.nan)])
            if depth is not None:
                order, sc = order[:depth], sc[:depth]
            out.append(Ranking(order, sc))
        return out


def neighbour_overlap(approx_orders: np.ndarray, exact_distances: np.ndarray, k: int, *,
                      tol: float = 1e-6) -> np.ndarray:
    """Per query, recall@k of the approximate top ``k`` against the exact top ``k`` (ANN-benchmarks' rule).

    A returned chunk counts when its exact distance is within ``tol`` of the
    exact ``k``-th smallest distance, so chunks tied with the exact ``k``-th
    neighbour count whichever of them an index returns.

    >>> d = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.5, 0.1]])
    >>> neighbour_overlap(np.array([[0, 1, 2, 3], [3, 2, 0, 1]]), d, 2).tolist()
    [1.0, 1.0]
    >>> neighbour_overlap(np.array([[3, 0, 1, 2]]), d[:1], 2).tolist()
    [0.5]
    """
    a = np.asarray(approx_orders)[:, :k]
    d = np.asarray(exact_distances, dtype=np.float64)
    if a.shape[0] != d.shape[0]:
        raise ValueError(f"approximate rankings and exact distances differ in queries: {a.shape[0]} vs {d.shape[0]}")
    if not 1 <= k <= d.shape[1]:
        raise ValueError(f"k must be between 1 and the number of chunks ({d.shape[1]}), got {k}")
    kth = np.partition(d, k - 1, axis=1)[:, k - 1]
    got = np.take_along_axis(d, a, axis=1) <= kth[:, None] + tol
    return got.sum(axis=1) / k
