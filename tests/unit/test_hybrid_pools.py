"""Hybrid search from top pools equals RRF over the full rankings (every rank, score and tie).

The oracle is :func:`ragdiag.retrieval.hybrid.rrf_fuse` over the full rankings
(``HybridRetriever.rank`` and the full-ranking bounded search it replaced). Small
pools force every path: deepening, exact counts, ties at 0 (BM25 chunks sharing
no token) and between repeated texts, queries BM25 is silent on, deep targets.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.retrieval.bm25 import BM25Retriever
from ragdiag.retrieval.dense import DenseRetriever
from ragdiag.retrieval.hybrid import HybridRetriever, fuse_pools, ranks_from_orders, rrf_fuse
from ragdiag.retrieval.base import top_k_desc

from searchworld import world as _world


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("pool", [1, 3, 256])
def test_pools_equal_full_fusion(seed, pool, monkeypatch):
    import ragdiag.retrieval.hybrid as hybrid

    texts, vecs, batch, targets = _world(300, seed)
    h = HybridRetriever([DenseRetriever(vecs), BM25Retriever(texts)])
    h.pool = pool
    if pool < 10:  # few exact counts before deepening: both ways of settling a chunk are taken
        monkeypatch.setattr(hybrid, "_RESOLVE", 2)
    for depth in (1, 20, 300):
        got = h.bounded_search(batch, depth=depth, targets=targets)
        want = h._bounded_full(batch, depth=depth, targets=targets, budget=1 << 22)
        assert np.array_equal(got.order, want.order)
        assert np.array_equal(got.scores, want.scores)  # bit for bit
        assert np.array_equal(got.target_rank, want.target_rank)
    ranked = h.rank(batch, depth=20)
    got = h.bounded_search(batch, depth=20, targets=targets)
    assert np.array_equal(got.order, np.stack([r.order for r in ranked]))
    assert (got.target_rank > 20).any()  # deep targets are part of the check


def test_fuse_pools_by_hand():
    # k = 60. Part A ranks chunks 0,1,2,3; part B ranks 3,2,1,0 (scores distinct).
    # Chunk 0: 1/61 + 1/64; chunk 3: 1/64 + 1/61 (a tie: best single rank 1 for both, then position) ;
    # chunks 1 and 2: 1/62 + 1/63, which is less (1/61 + 1/64 = 0.032018 > 0.032002).
    a = np.array([4.0, 3.0, 2.0, 1.0])
    b = np.array([1.0, 2.0, 3.0, 4.0])
    order, scores, rank = fuse_pools([a, b], 4, np.array([2]), pool=1)
    assert order.tolist() == [0, 3, 1, 2]
    assert scores[0] == pytest.approx(1 / 61 + 1 / 64, abs=1e-15)
    assert rank == 4
    full, full_scores = rrf_fuse([ranks_from_orders(top_k_desc(a[None], None)), ranks_from_orders(top_k_desc(b[None], None))])
    assert order.tolist() == full[0].tolist() and np.array_equal(scores, full_scores[0])


def test_the_default_pool_path_beyond_small_indexes(monkeypatch):
    import ragdiag.retrieval.hybrid as hybrid

    texts, vecs, batch, targets = _world(3000, 5)
    h = HybridRetriever([DenseRetriever(vecs), BM25Retriever(texts)])
    calls = []
    monkeypatch.setattr(hybrid, "_FULL_UP_TO", 100)  # 3,000 chunks take the pool path, pools of 1,024 to start
    monkeypatch.setattr(hybrid, "fuse_pools", lambda *a, **kw: calls.append(1) or fuse_pools(*a, **kw))
    got = h.bounded_search(batch, depth=25, targets=targets)
    want = h._bounded_full(batch, depth=25, targets=targets, budget=1 << 22)
    assert len(calls) == len(batch)
    assert np.array_equal(got.order, want.order) and np.array_equal(got.scores, want.scores)
    assert np.array_equal(got.target_rank, want.target_rank)


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 3), st.integers(1, 60), st.integers(1, 70), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_fuse_pools_equals_rrf_over_full_rankings_with_ties(parts, n, depth, pool, seed):
    rng = np.random.default_rng(seed)
    rows = [rng.integers(0, 4, size=n).astype(np.float64) for _ in range(parts)]  # few values: ties everywhere
    targets = rng.choice(n, size=int(rng.integers(0, min(n, 4) + 1)), replace=False)
    order, scores, rank = fuse_pools(rows, depth, targets, pool=pool)
    ranks = [ranks_from_orders(top_k_desc(r[None], None)) for r in rows]
    full, full_scores = rrf_fuse(ranks)
    d = min(depth, n)
    assert order.tolist() == full[0, :d].tolist()
    assert np.array_equal(scores, full_scores[0, :d])
    want = int(np.flatnonzero(np.isin(full[0], targets))[0]) + 1 if targets.size else 0
    assert rank == want
