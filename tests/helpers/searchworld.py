"""A seeded search world for the retrievers' exactness tests (:func:`world`: texts with ties in BM25 and in dense,
queries and their targets) and the check that two searches agree bit for bit (:func:`assert_same`)."""

from __future__ import annotations

import numpy as np

from ragdiag.retrieval.base import QueryBatch

def world(n: int, seed: int):
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(400)])
    p = 1.0 / np.arange(1, 401)
    p /= p.sum()
    half = [" ".join(rng.choice(words, size=int(rng.integers(2, 12)), p=p)) for _ in range(n // 2)]
    texts = half + half  # repeated texts tie in BM25
    vecs = rng.standard_normal((len(texts), 16)).astype(np.float32)
    vecs[len(half):] = vecs[: len(half)]  # ... and in dense
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    queries = [" ".join(rng.choice(words, size=3)) for _ in range(12)] + ["nothing matches", "w0"]
    qv = rng.standard_normal((len(queries), 16)).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    targets = [rng.choice(len(texts), size=int(rng.integers(0, 4)), replace=False) for _ in queries]
    return texts, vecs, QueryBatch(tuple(queries), qv), targets


def assert_same(a, b) -> None:
    """Two searches give the same orders, scores (bit for bit, same dtype), needle ranks and needle scores."""
    np.testing.assert_array_equal(a.order, b.order)
    assert a.scores.dtype == b.scores.dtype
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.target_rank, b.target_rank)
    assert (a.target_score is None) == (b.target_score is None)
    if a.target_score is not None:
        np.testing.assert_array_equal(a.target_score, b.target_score)


_world = world  # the name the retrievers' tests knew it by
