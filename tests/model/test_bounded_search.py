"""Bounded-memory search (ragdiag.retrieval.search) against the full-matrix path it replaces.

The REFERENCE below is the evaluation as it was before blocks: every retriever
ranks all chunks (a stable argsort of the full queries x chunks scores), the
ranks matrix is inverted, the cosine distances of all chunks are computed, and
the per-query outcome read from those. The bounded path must give the same
ranks, top lists, scores and distances, ties included.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ragdiag.core.defaults import TOP
from ragdiag.evaluation.records import Config, ConfigResult
from ragdiag.evaluation.evaluate import _config_result, evaluate
from ragdiag.retrieval.bm25 import BM25Retriever
from ragdiag.retrieval.dense import DenseRetriever, cosine_distances
from ragdiag.retrieval.hybrid import HybridRetriever, ranks_from_orders
from ragdiag.retrieval.base import QueryBatch
from ragdiag.retrieval.rerank import RerankRetriever
from ragdiag.retrieval.search import Search, _select, block_search, search, target_ranks_from_orders
from ragdiag.retrieval.vectors import VectorFile, save_vectors

# ---------------------------------------------------------------------------
# The reference: today's full-matrix path, kept here verbatim in spirit
# ---------------------------------------------------------------------------


def ref_orders(scores: np.ndarray) -> np.ndarray:
    return np.argsort(-scores, axis=1, kind="stable")


def ref_config_result(config, index, truth, queries, orders, scores, dist, *,
                      zero_is_unretrieved=False) -> ConfigResult:
    """The old ``_config_result``: full orders, full scores, full distance matrix."""
    nq = len(queries)
    ranks = ranks_from_orders(orders)
    needle_rank = np.zeros(nq, dtype=np.int64)
    needle_distance = np.full(nq, np.nan)
    top_order = orders[:, :TOP]
    top_holds = np.zeros(top_order.shape, dtype=bool)
    for i, q in enumerate(queries):
        h = index.holders[q.question_id] if q.in_domain else np.zeros(0, dtype=np.int64)
        if h.size:
            needle_rank[i] = ranks[i, h].min()
            needle_distance[i] = dist[i, h].min()
            top_holds[i] = np.isin(top_order[i], h)
            if zero_is_unretrieved and scores[i, needle_rank[i] - 1] == 0:
                needle_rank[i] = 0
                top_holds[i] &= scores[i, :TOP] != 0
    rows = np.arange(nq)[:, None]
    return ConfigResult(config, needle_rank, needle_distance, dist[np.arange(nq), orders[:, 0]], top_order,
                        scores[:, :TOP], dist[rows, top_order], top_holds)


def reference_results(ev, query_vectors) -> dict:
    """Every dense/bm25/hybrid configuration of ``ev`` recomputed by the full-matrix path:
    each retriever's full ``rank`` (all chunks), the full distance matrix."""
    out = {}
    batch = QueryBatch(tuple(q.text for q in ev.queries), query_vectors)
    for name, index in ev.indexes.items():
        dense = DenseRetriever(index.vectors)
        bm25 = BM25Retriever([c.embed_text for c in index.chunks])
        dist = cosine_distances(query_vectors, index.vectors)
        for retriever in (dense, bm25, HybridRetriever([dense, bm25])):
            rankings = retriever.rank(batch)
            order = np.stack([r.order for r in rankings])
            scores = np.stack([r.scores for r in rankings])
            assert order.shape[1] == len(index.chunks)  # the full ranking
            cfg = Config(name, retriever.name)
            out[cfg] = ref_config_result(cfg, index, ev.truth, ev.queries, order, scores, dist, zero_is_unretrieved=retriever.name == "bm25")
    return out


def assert_same_result(new: ConfigResult, ref: ConfigResult) -> None:
    label = new.config.label
    np.testing.assert_array_equal(new.needle_rank, ref.needle_rank, err_msg=label)
    np.testing.assert_array_equal(new.top_order, ref.top_order, err_msg=label)
    np.testing.assert_array_equal(new.top_scores, ref.top_scores, err_msg=label)
    np.testing.assert_array_equal(new.top_holds, ref.top_holds, err_msg=label)
    # Distances: the same float64 product on a subset of columns; bit-identical with this BLAS,
    # and never further apart than a rounding of the last bit.
    for field in ("needle_distance", "top1_distance", "top_distance"):
        np.testing.assert_allclose(getattr(new, field), getattr(ref, field), rtol=0, atol=1e-15, err_msg=label)


# ---------------------------------------------------------------------------
# block_search against the stable sort, on scores full of ties
# ---------------------------------------------------------------------------

tied_scores = hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 60)),
                         elements=st.integers(-3, 3).map(float))


@settings(max_examples=200, deadline=None)
@given(tied_scores, st.integers(1, 25), st.integers(1, 17), st.data())
def test_block_search_equals_the_stable_sort(S, depth, block, data):
    nq, n = S.shape
    targets = [np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=3))), dtype=np.int64)
               for _ in range(nq)]
    found = block_search(lambda cols: S[:, cols], n, nq, depth, targets, block=block)
    order = ref_orders(S)
    np.testing.assert_array_equal(found.order, order[:, :depth])
    np.testing.assert_array_equal(found.scores, np.take_along_axis(S, order[:, :depth], axis=1))
    ranks = ranks_from_orders(order)
    expected = [ranks[i, t].min() if t.size else 0 for i, t in enumerate(targets)]
    np.testing.assert_array_equal(found.target_rank, expected)


def test_block_search_hand_case_ties_go_to_the_lowest_position():
    # Scores tie at 1.0 across the block boundary (block 2): positions 1, 2, 4 tie; 3 is best.
    S = np.array([[0.0, 1.0, 1.0, 2.0, 1.0]])
    found = block_search(lambda cols: S[:, cols], 5, 1, 3, [np.array([4])], block=2)
    assert found.order.tolist() == [[3, 1, 2]]
    assert found.target_rank.tolist() == [4]  # 3, 1, 2 come first
    found = block_search(lambda cols: S[:, cols], 5, 1, 3, [np.array([4, 0])], block=2)
    assert found.target_rank.tolist() == [4]  # the better of the two targets


def test_select_keeps_exactly_depth_with_ties_to_lowest_columns():
    S = np.array([[1.0, 1.0, 1.0, 1.0], [4.0, 1.0, 3.0, 3.0]])
    assert _select(S, 2).tolist() == [[0, 1], [0, 2]]


class _OffByOneBit:
    """A FAKE scorer whose scores of an index array differ in the last bit from a slice's (as BLAS kernels may)."""

    def __init__(self, S):
        self.S = S

    def __call__(self, cols):
        if isinstance(cols, slice):
            return self.S[:, cols]
        return np.nextafter(self.S[:, cols], np.inf)


def test_target_scores_rechecked_against_the_blocks():
    S = np.array([[0.5, 0.5, 0.5, 0.2]])
    found = block_search(_OffByOneBit(S), 4, 1, 2, [np.array([2])], block=2)
    assert found.target_rank.tolist() == [3]  # not 1: the up-front score was one bit too high


def test_targets_are_checked():
    with pytest.raises(ValueError, match="one array of chunk positions per query"):
        block_search(lambda c: np.zeros((2, 3))[:, c], 3, 2, 1, [np.array([0])])
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        block_search(lambda c: np.zeros((1, 3))[:, c], 3, 1, 1, [np.array([3])])


# ---------------------------------------------------------------------------
# Retrievers: search() against rank() / the reference, with small blocks
# ---------------------------------------------------------------------------

WORDS = "alpha beta gamma delta epsilon zeta eta theta".split()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=6), min_size=1, max_size=30),
       st.lists(st.lists(st.sampled_from(WORDS + ["omega"]), min_size=1, max_size=3), min_size=1, max_size=5),
       st.integers(1, 7), st.integers(1, 12))
def test_bm25_search_equals_the_full_scores(docs, queries, block, depth):
    texts = [" ".join(d) for d in docs]
    qs = tuple(" ".join(q) for q in queries)
    r = BM25Retriever(texts)
    full = r.index.scores(qs)
    targets = [np.array([i % len(texts)]) for i in range(len(qs))]
    found = r.bounded_search(QueryBatch(qs), depth=depth, targets=targets, block=block)
    order = ref_orders(full)
    np.testing.assert_array_equal(found.order, order[:, :depth])
    np.testing.assert_array_equal(found.scores, np.take_along_axis(full, order[:, :depth], axis=1))
    np.testing.assert_array_equal(found.target_rank, target_ranks_from_orders(order, targets))


def _exact_vectors(rng, n, dim=8):
    """Small-integer vectors scaled by a power of two: every dot product is exact in float32, whatever the BLAS."""
    v = rng.integers(-2, 3, size=(n, dim)).astype(np.float32) / 4
    v[rng.integers(0, n, size=n // 3)] = v[0]  # duplicates: exact ties
    return v


@pytest.mark.parametrize("seed", range(5))
def test_dense_and_hybrid_search_with_small_blocks(seed, tmp_path):
    rng = np.random.default_rng(seed)
    chunks = _exact_vectors(rng, 97)
    queries = _exact_vectors(rng, 9)
    texts = [" ".join(rng.choice(WORDS, size=rng.integers(0, 5))) for _ in range(97)]
    qtexts = tuple(" ".join(rng.choice(WORDS, size=2)) for _ in range(9))
    batch = QueryBatch(qtexts, queries)
    targets = [rng.choice(97, size=rng.integers(0, 3), replace=False) for _ in range(9)]
    dense_full = queries @ chunks.T
    for vectors in (chunks, VectorFile(_saved(tmp_path, chunks))):
        dense = DenseRetriever(vectors)
        found = dense.bounded_search(batch, depth=TOP, targets=targets, block=7)
        order = ref_orders(dense_full)
        np.testing.assert_array_equal(found.order, order[:, :TOP])
        np.testing.assert_array_equal(found.target_rank, target_ranks_from_orders(order, targets))
        bm25 = BM25Retriever(texts)
        hybrid = HybridRetriever([dense, bm25])
        full = hybrid.rank(batch)  # the full-matrix path
        ref_order, ref_scores = np.stack([r.order for r in full]), np.stack([r.scores for r in full])
        for budget in (97, 300, 10**6):  # one query at a time, three, all
            found = hybrid.bounded_search(batch, depth=TOP, targets=targets, budget=budget)
            np.testing.assert_array_equal(found.order, ref_order[:, :TOP])
            np.testing.assert_array_equal(found.scores, ref_scores[:, :TOP])
            np.testing.assert_array_equal(found.target_rank, target_ranks_from_orders(ref_order, targets))


def _saved(tmp_path, v):
    path = tmp_path / "v.npy"
    save_vectors(path, v, block=10)
    return path


class FakePairScorer:
    """A FAKE pair scorer: the number of characters shared with the query, many ties."""

    identity = "fake"

    def score(self, query, texts):
        return np.array([float(len(set(query) & set(t))) for t in texts])


def test_rerank_search_equals_rank():
    rng = np.random.default_rng(3)
    chunks, queries = _exact_vectors(rng, 60), _exact_vectors(rng, 6)
    texts = [" ".join(rng.choice(WORDS, size=3)) for _ in range(60)]
    batch = QueryBatch(tuple(" ".join(rng.choice(WORDS, size=2)) for _ in range(6)), queries)
    hybrid = HybridRetriever([DenseRetriever(chunks), BM25Retriever(texts)])
    rr = RerankRetriever("rerank-fake", hybrid, FakePairScorer(), texts, head=10)
    targets = [rng.choice(60, size=2, replace=False) for _ in range(6)]
    full = rr.rank(batch)
    orders = np.stack([r.order for r in full])
    found = rr.bounded_search(batch, depth=8, targets=targets)
    np.testing.assert_array_equal(found.order, orders[:, :8])
    np.testing.assert_array_equal(found.scores, np.stack([r.scores[:8] for r in full]))
    np.testing.assert_array_equal(found.target_rank, target_ranks_from_orders(orders, targets))


def test_search_falls_back_to_rank_for_a_plain_retriever():
    class Plain:  # only the Retriever protocol's rank()
        name = "plain"

        def rank(self, batch, *, depth=None):
            return DenseRetriever(np.eye(3)).rank(batch, depth=depth)

    found = search(Plain(), QueryBatch(("a",), np.array([[0.0, 1.0, 0.0]])), depth=2, targets=[np.array([2])])
    assert isinstance(found, Search)
    assert found.order.tolist() == [[1, 0]] and found.target_rank.tolist() == [3]


def test_vector_file_reads_only_what_is_asked(tmp_path):
    v = np.arange(24, dtype=np.float32).reshape(6, 4)
    vf = VectorFile(_saved(tmp_path, v))
    assert len(vf) == 6 and vf.shape == (6, 4)
    np.testing.assert_array_equal(vf[2:5], v[2:5])
    np.testing.assert_array_equal(vf[np.array([5, 0, -1])], v[[5, 0, -1]])
    with pytest.raises(TypeError, match="not loaded whole"):
        np.asarray(vf)
    with pytest.raises(IndexError):
        vf[np.array([6])]


# ---------------------------------------------------------------------------
# The evaluation: bounded path == reference, tiny corpus and the bundled corpus
# ---------------------------------------------------------------------------


def test_tiny_evaluation_equals_the_full_matrix_path(tiny_corpus, tiny_truth, fake_encoder):
    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, retrievers="dense,bm25,hybrid")
    qv = fake_encoder.encode([q.text for q in ev.queries])
    ref = reference_results(ev, qv)
    assert set(ref) == set(ev.results)
    for cfg, r in ref.items():
        assert_same_result(ev.results[cfg], r)


def test_config_result_reads_distances_of_on_disk_vectors(tiny_corpus, tiny_truth, fake_encoder, tmp_path):
    from dataclasses import replace

    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C", retrievers="dense")
    index = ev.indexes["C"]
    on_disk = replace(index, vectors=VectorFile(_saved(tmp_path, index.vectors)))
    qv = fake_encoder.encode([q.text for q in ev.queries])
    batch = QueryBatch(tuple(q.text for q in ev.queries), qv)
    targets = [index.holders[q.question_id] if q.in_domain else np.zeros(0, np.int64) for q in ev.queries]
    found = DenseRetriever(on_disk.vectors).bounded_search(batch, depth=TOP, targets=targets)
    res = _config_result(Config("C", "dense"), on_disk, ev.truth, ev.queries, found, qv, seconds=0.0)
    assert_same_result(res, ev.result("C/dense"))


@pytest.mark.model
def test_bundled_corpus_equals_the_full_matrix_path(corpus, truth, encoder, bundled_store):
    """All six strategies of the bundled corpus (vectors from the store), dense, BM25 and hybrid."""
    ev = evaluate(corpus, truth, encoder=encoder, retrievers="dense,bm25,hybrid", store=bundled_store)
    qv = bundled_store.embed(encoder, [q.text for q in ev.queries]).vectors
    from ragdiag.core.blas import blas_threads_for

    with blas_threads_for(corpus.n_chars):  # the evaluation's BLAS layout: float32 sums in the same order
        ref = reference_results(ev, qv)
    assert len(ref) == 18 and set(ref) == set(ev.results)
    for cfg, r in ref.items():
        assert_same_result(ev.results[cfg], r)
    # ties are present and were decided the same way: BM25 gives many chunks the same score
    assert any((np.diff(r.top_scores, axis=1) == 0).any() for cfg, r in ref.items() if cfg.retriever == "bm25")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=8), min_size=1, max_size=25),
       st.lists(st.lists(st.sampled_from(WORDS + ["omega"]), min_size=1, max_size=4), min_size=1, max_size=6))
def test_bm25_block_scores_are_bitwise_those_of_the_dense_product(docs, queries):
    """Scores by blocks are bit for bit those of the dense product over all documents (the path before blocks)."""
    index = BM25Retriever([" ".join(d) for d in docs]).index
    qs = [" ".join(q) for q in queries]
    qm = index.query_matrix(qs).tocsc()
    used = np.flatnonzero(np.diff(qm.indptr))
    old = (index.weights[used].T.tocsr() @ qm[:, used].toarray().T).T  # the path before blocks
    np.testing.assert_array_equal(index.scores(qs), old)


def test_hybrid_search_over_a_part_that_only_ranks():
    """A plugin part with only ``rank`` (no scorer): its full rankings are used, a few queries at a time."""
    rng = np.random.default_rng(7)
    chunks, queries = _exact_vectors(rng, 40), _exact_vectors(rng, 5)
    texts = [" ".join(rng.choice(WORDS, size=3)) for _ in range(40)]
    batch = QueryBatch(tuple(" ".join(rng.choice(WORDS, size=2)) for _ in range(5)), queries)

    class RankOnly:
        name = "rank-only"

        def rank(self, b, *, depth=None):
            return DenseRetriever(chunks).rank(b, depth=depth)

    targets = [rng.choice(40, size=2, replace=False) for _ in range(5)]
    bm25 = BM25Retriever(texts)
    hybrid = HybridRetriever([RankOnly(), bm25])
    full = hybrid.rank(batch)
    ref_order, ref_scores = np.stack([r.order for r in full]), np.stack([r.scores for r in full])
    found = hybrid.bounded_search(batch, depth=TOP, targets=targets, budget=80)
    np.testing.assert_array_equal(found.order, ref_order[:, :TOP])
    np.testing.assert_array_equal(found.scores, ref_scores[:, :TOP])
    np.testing.assert_array_equal(found.target_rank, target_ranks_from_orders(ref_order, targets))
