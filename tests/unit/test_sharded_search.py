"""Search over shards equals the single process: every rank, every score, every tie (no Ray needed here).

The shards run in this process (:class:`~ragdiag.retrieval.sharded.LocalShards`);
``tests/ray/test_ray_search.py`` runs the same engine on Ray actors. The oracle is
:func:`ragdiag.retrieval.search.search` in one process. The world of
``test_hybrid_pools`` repeats every text and vector, so ties in BM25 and dense
cross shard boundaries.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.retrieval.base import QueryBatch, top_k_desc
from ragdiag.retrieval.bm25 import BM25Retriever
from ragdiag.retrieval.dense import DenseRetriever
from ragdiag.retrieval.hybrid import HybridRetriever
from ragdiag.retrieval.search import block_size, search
from ragdiag.retrieval.sharded import HALO, LocalShards, ShardedSearch, merge_tops, shard_bounds
from searchworld import assert_same, world as _world


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("shards", [1, 2, 3, 7])
def test_sharded_equals_single_process(seed, shards):
    texts, vecs, batch, targets = _world(240, seed)
    dense, bm25 = DenseRetriever(vecs), BM25Retriever(texts)
    engine = ShardedSearch(LocalShards(shards))
    for retriever in (dense, bm25, HybridRetriever([dense, bm25])):
        for depth in (1, 20, 500):  # 500 > chunks: every chunk ranked
            assert_same(search(retriever, batch, depth=depth, targets=targets),
                        engine.search(retriever, batch, depth=depth, targets=targets))


def test_dense_blocks_cross_shard_boundaries():
    """40,000 chunks, 200 queries: blocks of 20,971 chunks (the single process's grid), shards cut mid-block.

    A shard scores the blocks that start in its range, whole (it holds the next HALO rows), so the
    products have the single process's shapes and their last bits; repeated vectors tie across shards.
    """
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((40_000, 8)).astype(np.float32)
    vecs[20_000:20_500] = vecs[:500]  # ties between shard 0 and shard 1
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    qv = rng.standard_normal((200, 8)).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    batch = QueryBatch(tuple(f"q{i}" for i in range(200)), qv)
    targets = [rng.choice(40_000, size=int(rng.integers(0, 3)), replace=False) for _ in range(200)]
    assert block_size(200, 40_000) == 20_971  # 2**22 // 200: blocks [0, 20971) and [20971, 40000)
    dense = DenseRetriever(vecs)
    engine = ShardedSearch(LocalShards(3))  # shards [0, 13333), [13333, 26666), [26666, 40000)
    assert_same(search(dense, batch, depth=20, targets=targets), engine.search(dense, batch, depth=20, targets=targets))
    rows = [m.vector_bytes // (8 * 4) for m in engine.memory()]
    assert rows == [min(40_000, b + HALO) - a for a, b in zip([0, 13_333, 26_666], [13_333, 26_666, 40_000])]


def test_postings_are_split_not_copied():
    """Every BM25 posting is held by exactly one shard: the shards' postings add up to the index's."""
    texts, _, batch, targets = _world(240, 0)
    bm25 = BM25Retriever(texts)
    engine = ShardedSearch(LocalShards(3))
    engine.search(bm25, batch, depth=5, targets=targets)
    held = [h.weights for h in engine.shards.handles]
    assert sum(w.nnz for w in held) == bm25.index.weights.nnz
    assert [w.shape[1] for w in held] == np.diff(shard_bounds(len(texts), 3)).tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=40), st.integers(1, 5), st.integers(1, 45), st.data())
def test_top_of_tops_is_the_top(values, shards, depth, data):
    """Scores with many ties, cut into contiguous shards: the merged tops are the stable sort's first ``depth``."""
    row = np.array(values, dtype=np.float64)
    cuts = sorted(data.draw(st.lists(st.integers(0, row.size), min_size=shards - 1, max_size=shards - 1)))
    bounds = [0, *cuts, row.size]
    pos, sc = [], []
    for a, b in zip(bounds[:-1], bounds[1:]):
        local = top_k_desc(row[a:b][None], depth)[0] if b > a else np.zeros(0, dtype=np.int64)
        pos.append((local + a)[None])
        sc.append(row[local + a][None])
    order, scores = merge_tops(pos, sc, depth)
    np.testing.assert_array_equal(order[0], top_k_desc(row[None], depth)[0])
    np.testing.assert_array_equal(scores[0], row[order[0]])


def test_shard_bounds_checked():
    with pytest.raises(ValueError, match="shards must be at least 1"):
        shard_bounds(10, 0)


def test_a_sharded_run_is_stamped_and_gives_the_single_process_results(tiny_corpus, tiny_truth, fake_encoder):
    # stamp what ran: each sharded configuration's stamp says where its search ran; results are the same
    from ragdiag.evaluation.evaluate import evaluate

    kw = dict(encoder=fake_encoder, strategies="C", retrievers="dense,bm25,hybrid")
    local = evaluate(tiny_corpus, tiny_truth, **kw)
    sharded = evaluate(tiny_corpus, tiny_truth, engine=ShardedSearch(LocalShards(2)), **kw)
    for label in ("C/dense", "C/bm25", "C/hybrid"):
        assert sharded.retriever_stamps[label]["search"] == "2 shards (this process)", label
        assert "search" not in local.retriever_stamps.get(label, {}), label
    for cfg, res in local.results.items():
        other = sharded.results[cfg]
        np.testing.assert_array_equal(res.needle_rank, other.needle_rank)
        np.testing.assert_array_equal(res.top_order, other.top_order)


def test_the_stamp_names_only_what_ran_on_shards():
    texts, vecs, _, _ = _world(40, 0)
    dense, bm25 = DenseRetriever(vecs), BM25Retriever(texts)
    engine = ShardedSearch(LocalShards(3))
    assert engine.stamp(dense) == engine.stamp(bm25) == engine.stamp(HybridRetriever([dense, bm25])) \
        == "3 shards (this process)"
    assert engine.stamp(HybridRetriever([bm25, dense])) is None  # another fusion order runs in this process
