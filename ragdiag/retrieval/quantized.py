"""Lower-precision copies of a dense index: 8-bit scalar and binary (sign) codes.

``dense-int8``: every dimension is mapped to 256 levels between its minimum and
maximum over the corpus's own chunk vectors (scalar quantisation calibrated on
the corpus, the encoding of FAISS's ``ScalarQuantizer`` ``QT_8bit``); a query
stays in float and is scored against the decoded codes (asymmetric distance).
One byte per dimension.

``dense-binary``: one bit per dimension, the sign; queries are binarised too
and chunks ranked by Hamming distance (fewest differing bits first). One bit
per dimension: 32 times smaller than float32.

With ``rescore``, a shortlist of the best ``rescore`` chunks by the codes is
re-ranked by the full float vectors (kept beside the codes, often on disk);
the chunks after the shortlist keep the codes' order. Ties are broken by chunk
position, as everywhere.

Truncated dimensions (Matryoshka) are not offered: all-MiniLM-L6-v2 was not
trained for them, so a prefix of its vector is not a smaller embedding of the
same text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import QueryBatch, Ranking, top_k_desc

__all__ = [
    "ScalarQuantizer8",
    "binary_codes",
    "hamming_distances",
    "rescore_shortlist",
    "Int8Retriever",
    "BinaryRetriever",
    "DEFAULT_RESCORE",
    "top_k_exact",
    "ExactRetriever",
]

#: How many chunks a rescoring variant re-ranks by the full vectors.
DEFAULT_RESCORE = 50


@dataclass(frozen=True)
class ScalarQuantizer8:
    """Per-dimension affine 8-bit codes: ``code = floor(255 * (x - lo) / (hi - lo))``, clipped.

    Decoding takes the middle of the code's bin: ``lo + (code + 0.5) / 255 * (hi - lo)``.
    Computed in float32 like FAISS's ``QT_8bit`` with min-max training, so the codes agree.

    >>> sq = ScalarQuantizer8.fit(np.array([[0.0, -1.0], [1.0, 1.0]]))
    >>> sq.encode(np.array([[0.5, 0.0]])).tolist()
    [[127, 127]]
    """

    lo: np.ndarray  # (dim,) float32
    width: np.ndarray  # (dim,) float32, hi - lo (> 0)

    @classmethod
    def fit(cls, vectors: np.ndarray) -> "ScalarQuantizer8":
        """Calibrate ``lo`` and ``width`` per dimension on ``vectors`` (min-max; a constant dimension gets width 1)."""
        v = np.asarray(vectors, dtype=np.float32)
        if v.ndim != 2 or len(v) == 0:
            raise ValueError(f"calibrating 8-bit codes needs a non-empty (n, dim) matrix, got shape {v.shape}")
        lo = v.min(axis=0)
        width = v.max(axis=0) - lo
        # A constant dimension carries no information; any positive width encodes it exactly as lo + width/510.
        width = np.where(width > 0, width, np.float32(1.0)).astype(np.float32)
        return cls(lo.astype(np.float32), width)

    @property
    def dim(self) -> int:
        """Dimensions of the vectors it encodes."""
        return int(self.lo.size)

    def encode(self, vectors: np.ndarray) -> np.ndarray:
        """uint8 codes of ``vectors`` (values outside the calibrated range clipped to 0 or 255)."""
        v = np.asarray(vectors, dtype=np.float32)
        x = np.clip((v - self.lo) / self.width, np.float32(0), np.float32(1))
        return (x * np.float32(255)).astype(np.uint8)  # truncation, as FAISS does

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """float32 vectors at the middle of each code's bin.

        >>> sq = ScalarQuantizer8.fit(np.array([[0.0], [255.0]]))  # width 255: bin n is [n, n + 1)
        >>> sq.decode(np.array([[0], [127]], dtype=np.uint8)).tolist()
        [[0.5], [127.5]]
        """
        c = np.asarray(codes, dtype=np.float32)
        return self.lo + (c + np.float32(0.5)) / np.float32(255) * self.width


def top_k_exact(scores: np.ndarray, depth: int | None) -> np.ndarray:
    """Same result as :func:`~ragdiag.retrieval.base.top_k_desc` (ties by position) without a full sort.

    Every score at or above the ``depth``-th largest is a candidate (all ties
    at the boundary included), and only the candidates are sorted.

    >>> top_k_exact(np.array([[0.5, 0.9, 0.5, 0.1]]), 2).tolist()
    [[1, 0]]
    """
    scores = np.atleast_2d(scores)
    n = scores.shape[1]
    if depth is None or depth >= n:
        return top_k_desc(scores, depth)
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    kth = -np.partition(-scores, depth - 1, axis=1)[:, depth - 1]
    out = np.empty((scores.shape[0], depth), dtype=np.int64)
    for i, row in enumerate(scores):
        cand = np.flatnonzero(row >= kth[i])
        out[i] = cand[np.argsort(-row[cand], kind="stable")[:depth]]
    return out


def binary_codes(vectors: np.ndarray) -> np.ndarray:
    """One bit per dimension (1 where the value is > 0), packed 8 to a byte.

    >>> binary_codes(np.array([[0.3, -0.1, 0.0, 2.0, -1, -1, -1, 1]])).tolist()
    [[145]]
    """
    v = np.asarray(vectors)
    if v.ndim != 2:
        raise ValueError(f"binary codes need an (n, dim) matrix, got shape {v.shape}")
    return np.packbits(v > 0, axis=1)


def hamming_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bits that differ between every packed code of ``a`` and every one of ``b``: (len(a), len(b)).

    >>> hamming_distances(np.array([[0b1010]], dtype=np.uint8), np.array([[0b1001], [0b1010]], dtype=np.uint8)).tolist()
    [[2, 0]]
    """
    a = np.asarray(a, dtype=np.uint8)
    b = np.asarray(b, dtype=np.uint8)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"codes of different lengths: {a.shape[1]} and {b.shape[1]} bytes")
    if a.shape[1] % 8 == 0:  # 64 bits per XOR and popcount instead of 8
        a = np.ascontiguousarray(a).view(np.uint64)
        b = np.ascontiguousarray(b).view(np.uint64)
    words = np.ascontiguousarray(b.T)  # word-major: each pass reads one contiguous word of every chunk
    out = np.empty((len(a), words.shape[1]), dtype=np.int32)
    for i in range(len(a)):
        acc = np.zeros(words.shape[1], dtype=np.uint16)
        for w in range(words.shape[0]):
            acc += np.bitwise_count(np.bitwise_xor(words[w], a[i, w]))
        out[i] = acc
    return out


def rescore_shortlist(coarse_order: np.ndarray, coarse_scores: np.ndarray, full_scores: np.ndarray,
                      shortlist: int) -> Ranking:
    """Re-rank the first ``shortlist`` of one query's ranking by ``full_scores``; the tail keeps its order.

    Ties among the shortlist are broken by chunk position. Tail scores are NaN
    (not comparable with the full scores).

    >>> r = rescore_shortlist(np.array([2, 0, 1]), np.array([3., 2., 1.]), np.array([0.9, 0.1, 0.5]), 2)
    >>> r.order.tolist(), r.scores.tolist()[:2]
    ([0, 2, 1], [0.9, 0.5])
    """
    head = coarse_order[:shortlist]
    s = full_scores[head]
    perm = np.lexsort((head, -s))
    order = np.concatenate([head[perm], coarse_order[shortlist:]])
    scores = np.concatenate([s[perm], np.full(len(coarse_order) - len(head), np.nan)])
    return Ranking(order, scores)


class _CodeRetriever:
    """Shared plumbing: a full ranking by the codes, optionally rescored by the float vectors."""

    name = "dense-codes"
    kind = ""

    def __init__(self, chunk_vectors: np.ndarray, *, rescore: int | None = None):
        v = np.ascontiguousarray(chunk_vectors, dtype=np.float32)
        if v.ndim != 2:
            raise ValueError(f"chunk vectors must be (n, dim), got shape {v.shape}")
        if rescore is not None and rescore < 1:
            raise ValueError(f"rescore must be a shortlist size >= 1 (or None for no rescoring), got {rescore}")
        self.rescore = rescore
        self.dim = v.shape[1]
        self._full = v if rescore else None

    def coarse_scores(self, queries: np.ndarray) -> np.ndarray:
        """(queries x chunks) scores computed from the codes (each subclass its own)."""
        raise NotImplementedError

    @property
    def bytes_per_vector(self) -> int:
        """Bytes of the searched codes per chunk (the full vectors for rescoring are not counted here)."""
        return int(self.codes.shape[1])  # each subclass keeps its codes as one uint8 row per chunk

    def stamp(self) -> dict:
        """What the run records about the index: precision, rescoring shortlist, bytes per vector."""
        return {"precision": self.kind, "rescore": self.rescore, "bytes_per_vector": self.bytes_per_vector}

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        """Per query, chunks by coarse score; with ``rescore``, that many at the head reordered by the float vectors."""
        if batch.vectors is None:
            raise ValueError(f"{self.name} needs query vectors: embed the queries first (QueryBatch.vectors)")
        q = np.asarray(batch.vectors, dtype=np.float32)
        coarse = self.coarse_scores(q)
        # With a depth, only the head is sorted (a serving system's cost); without, the full ranking.
        head = None if depth is None else max(depth, self.rescore or 0)
        order = top_k_exact(coarse, head)
        out = []
        for i, o in enumerate(order):
            if self.rescore:
                head = o[: self.rescore]
                full = np.zeros(len(self._full), dtype=np.float32)
                full[head] = self._full[head] @ q[i]  # only the shortlist's full vectors are read
                r = rescore_shortlist(o, coarse[i][o], full, self.rescore)
            else:
                r = Ranking(o, coarse[i][o].astype(np.float64))
            if depth is not None:
                r = Ranking(r.order[:depth], r.scores[:depth])
            out.append(r)
        return out


class Int8Retriever(_CodeRetriever):
    """8-bit scalar codes calibrated on these chunk vectors; float query against decoded codes."""

    kind = "int8"

    def __init__(self, chunk_vectors: np.ndarray, *, rescore: int | None = None):
        super().__init__(chunk_vectors, rescore=rescore)
        self.name = "dense-int8-rescore" if rescore else "dense-int8"
        self.quantizer = ScalarQuantizer8.fit(chunk_vectors)
        self.codes = self.quantizer.encode(chunk_vectors)  # only the codes are kept (uint8), not a decoded copy

    def coarse_scores(self, queries: np.ndarray) -> np.ndarray:
        """q . decode(c) = q . lo + (q * width / 255) . (c + 0.5), from the codes directly."""
        sq = self.quantizer
        qw = queries * (sq.width / np.float32(255))
        return (queries @ sq.lo)[:, None] + qw @ self.codes.T.astype(np.float32) + np.float32(0.5) * qw.sum(axis=1)[:, None]


class BinaryRetriever(_CodeRetriever):
    """Sign bits, Hamming distance; score = dim - 2 * Hamming (the dot product of the ±1 vectors)."""

    kind = "binary"

    def __init__(self, chunk_vectors: np.ndarray, *, rescore: int | None = None):
        super().__init__(chunk_vectors, rescore=rescore)
        self.name = "dense-binary-rescore" if rescore else "dense-binary"
        self.codes = binary_codes(chunk_vectors)

    def coarse_scores(self, queries: np.ndarray) -> np.ndarray:
        """``dim - 2 * Hamming`` between the queries' and the chunks' sign bits."""
        return (self.dim - 2 * hamming_distances(binary_codes(queries), self.codes)).astype(np.float32)


class ExactRetriever:
    """Exact float search, as :class:`~ragdiag.retrieval.dense.DenseRetriever` ranks, sorting only the head
    when a depth is asked for (so its time is comparable with the other variants')."""

    name = "dense"
    rescore = None

    def __init__(self, chunk_vectors: np.ndarray):
        self.vectors = np.ascontiguousarray(chunk_vectors, dtype=np.float32)
        self.bytes_per_vector = 4 * self.vectors.shape[1]

    def stamp(self) -> dict:
        """What the run records about the index: fp32, no rescoring, bytes per vector."""
        return {"precision": "fp32", "rescore": None, "bytes_per_vector": self.bytes_per_vector}

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        """Per query, chunk positions by descending cosine similarity (the top ``depth``; all when None)."""
        if batch.vectors is None:
            raise ValueError("dense retrieval needs query vectors: embed the queries first (QueryBatch.vectors)")
        scores = np.asarray(batch.vectors, dtype=np.float32) @ self.vectors.T
        order = top_k_exact(scores, depth)
        return [Ranking(o, s[o]) for o, s in zip(order, scores)]
