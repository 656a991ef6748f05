"""Tests for ragdiag.retrieval: BM25 against rank-bm25, RRF by hand, dense, rerankers.

Fakes are named as such and test plumbing only; the real model is used in
tests marked ``model``.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ragdiag.index.chunking import STRATEGIES, chunk_corpus
from ragdiag.retrieval.bm25 import BM25Index, BM25Retriever, lucene_idf, tokenize
from ragdiag.retrieval.rerank import CrossEncoderScorer, MaxSimScorer, RerankRetriever, maxsim
from ragdiag.retrieval.dense import DenseRetriever, normalisation_check
from ragdiag.retrieval.hybrid import HybridRetriever, ranks_from_orders, rrf_fuse
from ragdiag.retrieval.base import QueryBatch, Ranking, Retriever, Unavailable, top_k_desc

# ---------------------------------------------------------------------------
# BM25
# ---------------------------------------------------------------------------


class LuceneBM25Okapi:
    """rank_bm25.BM25Okapi with the Lucene idf: the oracle for our BM25 (built lazily: optional import)."""

    @staticmethod
    def build(tokenized_docs, *, k1=1.2, b=0.75):
        from rank_bm25 import BM25Okapi

        class _Lucene(BM25Okapi):
            def _calc_idf(self, nd):
                # ln(1 + (N - n + 0.5) / (n + 0.5)), no epsilon floor (it is never negative)
                for word, n in nd.items():
                    self.idf[word] = math.log(1 + (self.corpus_size - n + 0.5) / (n + 0.5))

        return _Lucene(tokenized_docs, k1=k1, b=b)


def test_bm25_equals_rank_bm25_with_lucene_idf_on_bundled_corpus(corpus, truth):
    texts = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES["C"])]
    queries = [q.text for q in truth.queries]
    assert len(queries) == 94
    ours = BM25Index(texts).scores(queries)
    oracle = LuceneBM25Okapi.build([tokenize(t) for t in texts])
    expected = np.stack([oracle.get_scores(tokenize(q)) for q in queries])
    assert ours.shape == (94, len(texts))
    np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=0)
    assert (expected > 0).any(axis=1).all()  # the comparison is not vacuous: every query matches something


# Three documents: d0 "cat dog" (2 tokens), d1 "cat cat fish" (3), d2 "bird" (1); avgdl = 6 / 3 = 2.
TINY = ["Cat dog.", "cat, CAT fish", "bird"]
IDF_FISH = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))  # n = 1: ln(1 + 2.5/1.5) = ln(8/3) = 0.980829
IDF_CAT = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))  # n = 2: ln(1 + 1.5/2.5) = ln(1.6) = 0.470004
# length norms k1 * (1 - b + b * |d| / avgdl): d0 1.2 * (0.25 + 0.75) = 1.2; d1 1.2 * (0.25 + 1.125) = 1.65
BM25_CASES = {
    # fish: only d1, tf 1: idf * 1 * 2.2 / (1 + 1.65)
    "fish": [0.0, IDF_FISH * 2.2 / 2.65, 0.0],
    # cat: d0 tf 1: idf * 2.2 / (1 + 1.2) = idf; d1 tf 2: idf * 2 * 2.2 / (2 + 1.65) = idf * 4.4 / 3.65
    "cat": [IDF_CAT, IDF_CAT * 4.4 / 3.65, 0.0],
    # the sum of both
    "cat fish": [IDF_CAT, IDF_CAT * 4.4 / 3.65 + IDF_FISH * 2.2 / 2.65, 0.0],
    # a repeated query token counts twice (as in rank_bm25)
    "cat cat": [2 * IDF_CAT, 2 * IDF_CAT * 4.4 / 3.65, 0.0],
    # unknown words score nothing, and change nothing next to known ones
    "zebra": [0.0, 0.0, 0.0],
    "zebra fish": [0.0, IDF_FISH * 2.2 / 2.65, 0.0],
    "": [0.0, 0.0, 0.0],
}


@pytest.mark.parametrize(("query", "expected"), BM25_CASES.items(), ids=list(BM25_CASES))
def test_bm25_hand_computed(query, expected):
    assert BM25Index(TINY).scores([query])[0] == pytest.approx(expected, rel=1e-12, abs=0)


def test_bm25_hand_values_in_numbers():
    # the arithmetic above, written out once
    assert IDF_FISH == pytest.approx(0.980829, abs=1e-6)
    assert IDF_CAT == pytest.approx(0.470004, abs=1e-6)
    assert lucene_idf(3, np.array([1, 2, 3])) == pytest.approx([IDF_FISH, IDF_CAT, math.log(1 + 0.5 / 3.5)])


def test_bm25_retriever_ranks_by_score_ties_by_position():
    (r,) = BM25Retriever(TINY).rank(QueryBatch(("cat",)))
    # d1 (0.5666) > d0 (0.4700) > d2 (0)
    assert r.order.tolist() == [1, 0, 2]
    (r,) = BM25Retriever(TINY).rank(QueryBatch(("zebra",)), depth=2)
    assert r.order.tolist() == [0, 1] and r.scores.tolist() == [0.0, 0.0]


def test_bm25_rejects_bad_parameters():
    with pytest.raises(ValueError, match="k1"):
        BM25Index(TINY, k1=-1)
    with pytest.raises(ValueError, match="b="):
        BM25Index(TINY, b=1.5)


def test_tokenize():
    assert tokenize("SGDClassifier's l1_ratio=0.15") == ["sgdclassifier", "s", "l1", "ratio", "0", "15"]
    assert tokenize("Ünïcode — and   CAPS") == ["ünïcode", "and", "caps"]


# ---------------------------------------------------------------------------
# top_k_desc and ranks_from_orders
# ---------------------------------------------------------------------------

TOPK_CASES = [
    ([[0.5, 0.9, 0.5, 0.1]], 3, [[1, 0, 2]]),
    ([[0.5, 0.9, 0.5, 0.1]], None, [[1, 0, 2, 3]]),
    ([[1.0, 1.0, 1.0]], 2, [[0, 1]]),  # all tied: position order
    ([[0.0, 2.0], [3.0, 3.0]], 5, [[1, 0], [0, 1]]),  # depth past the end: everything
]


@pytest.mark.parametrize(("scores", "depth", "expected"), TOPK_CASES)
def test_top_k_desc_hand_cases(scores, depth, expected):
    assert top_k_desc(np.array(scores), depth).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 12)), elements=st.sampled_from([0.0, 0.25, 0.5, 1.0])),
       st.integers(1, 15))
def test_top_k_desc_is_a_stable_descending_sort(scores, depth):
    out = top_k_desc(scores, depth)
    for row, got in zip(scores, out):
        expected = sorted(range(len(row)), key=lambda i: (-row[i], i))[:depth]
        assert got.tolist() == expected


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4).flatmap(lambda q: st.integers(1, 15).flatmap(
    lambda n: st.lists(st.permutations(list(range(n))), min_size=q, max_size=q))))
def test_ranks_from_orders_inverts_rankings(orders):
    orders = np.array(orders)
    ranks = ranks_from_orders(orders)
    n = orders.shape[1]
    for o, r in zip(orders, ranks):
        assert sorted(r.tolist()) == list(range(1, n + 1))
        assert r[o].tolist() == list(range(1, n + 1))  # the chunk at place i has rank i + 1
        assert np.argsort(r).tolist() == o.tolist()  # and sorting by rank gives the order back


# ---------------------------------------------------------------------------
# RRF
# ---------------------------------------------------------------------------


def test_rrf_hand_computed_four_chunks():
    dense = np.array([[1, 2, 3, 4]])  # ranks of chunks 0..3
    bm25 = np.array([[4, 3, 1, 2]])
    order, scores = rrf_fuse([dense, bm25])
    # c0 1/61 + 1/64 = 0.0320184; c1 1/62 + 1/63 = 0.0320020; c2 1/63 + 1/61 = 0.0322665; c3 1/64 + 1/62 = 0.0317540
    expected = {0: 1 / 61 + 1 / 64, 1: 1 / 62 + 1 / 63, 2: 1 / 63 + 1 / 61, 3: 1 / 64 + 1 / 62}
    assert order.tolist() == [[2, 0, 1, 3]]
    assert scores[0] == pytest.approx([expected[c] for c in (2, 0, 1, 3)], rel=1e-15)


def test_rrf_tie_broken_by_position_when_best_rank_ties_too():
    # c0 (1, 3) and c2 (3, 1) score exactly alike (1/61 + 1/63) with the same best rank 1:
    # position decides, c0 first. c1 (2, 2) = 2/62 = 0.0322581 < 0.0322665.
    for a, b in ([[1, 2, 3]], [[3, 2, 1]]), ([[3, 2, 1]], [[1, 2, 3]]):
        order, scores = rrf_fuse([np.array(a), np.array(b)])
        assert scores[0, 0] == scores[0, 1]
        assert order.tolist() == [[0, 2, 1]]


def test_rrf_tie_broken_by_best_single_rank_before_position():
    # k = 0 makes an exact tie between different rank pairs: c0 (3, 3) -> 1/3 + 1/3 = 2/3 and
    # c1 (2, 6) -> 1/2 + 1/6 = 2/3. c1 has the better single rank (2) and goes first although c0 comes first by position.
    a = np.array([[3, 2, 1, 4, 5, 6]])
    b = np.array([[3, 6, 5, 1, 2, 4]])
    order, scores = rrf_fuse([a, b], k=0)
    # c3 1/4 + 1 = 1.25; c2 1 + 1/5 = 1.2; c4 1/5 + 1/2 = 0.7; c1, c0 2/3; c5 1/6 + 1/4 = 0.4167
    assert order.tolist() == [[3, 2, 4, 1, 0, 5]]
    assert scores[0] == pytest.approx([1.25, 1.2, 0.7, 2 / 3, 2 / 3, 5 / 12])
    assert scores[0, 3] == scores[0, 4]  # an exact tie in floating point, not a near one


def test_rrf_tie_at_k60_between_different_rank_pairs():
    # At the default k = 60: (3, 24) -> 1/63 + 1/84 = 7/252 = 1/36 and (12, 12) -> 2/72 = 1/36.
    n = 24
    a = np.arange(1, n + 1)[None, :].copy()
    b = a[:, ::-1].copy()  # chunk i has ranks (i + 1, n - i)
    # chunk 2 has (3, 22); make it (3, 24) by swapping with chunk 0's bm25 rank; chunk 11 has (12, 13) -> (12, 12)
    b[0, [0, 2]] = b[0, [2, 0]]
    b[0, [11, 12]] = b[0, [12, 11]]
    assert (a[0, 2], b[0, 2], a[0, 11], b[0, 11]) == (3, 24, 12, 12)
    order, scores = rrf_fuse([a, b])
    s = dict(zip(order[0].tolist(), scores[0].tolist()))
    assert s[2] == s[11]
    assert order[0].tolist().index(2) < order[0].tolist().index(11)  # best single rank 3 beats 12


def test_rrf_needs_a_ranking():
    with pytest.raises(ValueError):
        rrf_fuse([])


class FakeRetriever:
    """A FAKE retriever for plumbing: returns fixed full orders, scores = -place."""

    def __init__(self, name, orders):
        self.name = name
        self.orders = [np.asarray(o) for o in orders]

    def rank(self, batch, *, depth=None):
        out = []
        for o in self.orders[: len(batch)]:
            o = o if depth is None else o[:depth]
            out.append(Ranking(o, -np.arange(len(o), dtype=np.float64)))
        return out


def test_hybrid_retriever_is_rrf_over_its_parts():
    parts = [FakeRetriever("a", [[0, 1, 2, 3]]), FakeRetriever("b", [[2, 3, 1, 0]])]
    assert isinstance(parts[0], Retriever)
    (r,) = HybridRetriever(parts).rank(QueryBatch(("q",)), depth=3)
    # the four-chunk hand example above: ranks a (1, 2, 3, 4), b (4, 3, 1, 2)
    assert r.order.tolist() == [2, 0, 1]
    with pytest.raises(ValueError, match="at least two"):
        HybridRetriever(parts[:1])


# ---------------------------------------------------------------------------
# Dense
# ---------------------------------------------------------------------------


def _unit(rng, n, d=8):
    v = rng.normal(size=(n, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_dense_rank_order_is_argsort_of_dot():
    rng = np.random.default_rng(0)
    chunks, queries = _unit(rng, 30), _unit(rng, 5)
    rankings = DenseRetriever(chunks).rank(QueryBatch(tuple("abcde"), queries))
    dots = queries.astype(np.float32) @ chunks.astype(np.float32).T
    for r, d in zip(rankings, dots):
        assert r.order.tolist() == np.argsort(-d, kind="stable").tolist()
        assert r.scores == pytest.approx(d[r.order])
    (r,) = DenseRetriever(chunks).rank(QueryBatch(("a",), queries[:1]), depth=4)
    assert len(r.order) == 4


def test_dense_ties_keep_position_order():
    chunks = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    (r,) = DenseRetriever(chunks).rank(QueryBatch(("q",), np.array([[1.0, 0.0]])))
    assert r.order.tolist() == [0, 2, 1]


def test_dense_without_query_vectors_says_what_to_do():
    with pytest.raises(ValueError, match="query vectors"):
        DenseRetriever(np.eye(3)).rank(QueryBatch(("q",)))


def test_normalisation_check():
    rng = np.random.default_rng(1)
    unit = _unit(rng, 50, 16)
    assert normalisation_check(unit) < 1e-12
    # ||a-b||^2/2 = (|a|^2 + |b|^2)/2 - a.b; with |a| = |b| = 3 that is 9 - a.b, not 1 - a.b: off by 8
    assert normalisation_check(3 * unit) == pytest.approx(8.0)


# ---------------------------------------------------------------------------
# Reranking: plumbing with a FAKE scorer
# ---------------------------------------------------------------------------


class FakeScorer:
    """A FAKE pair scorer for plumbing: score = a fixed number per text (unknown texts 0)."""

    identity = "fake"

    def __init__(self, table):
        self.table = table
        self.calls = []

    def score(self, query, texts):
        self.calls.append((query, list(texts)))
        return np.array([self.table.get(t, 0.0) for t in texts])


TEXTS = ["t0", "t1", "t2", "t3", "t4", "t5"]


def test_rerank_reorders_head_and_keeps_tail():
    base = FakeRetriever("base", [[5, 4, 3, 2, 1, 0]])
    scorer = FakeScorer({"t5": 0.1, "t4": 0.9, "t3": 0.5, "t2": 99.0})
    (r,) = RerankRetriever("rerank-fake", base, scorer, TEXTS, head=3).rank(QueryBatch(("q",)))
    # head (5, 4, 3) rescored 0.1, 0.9, 0.5 -> 4, 3, 5; the tail (2, 1, 0) keeps the base order, t2's 99 is never asked
    assert r.order.tolist() == [4, 3, 5, 2, 1, 0]
    assert r.scores[:3].tolist() == [0.9, 0.5, 0.1]
    assert np.isnan(r.scores[3:]).all()
    assert scorer.calls == [("q", ["t5", "t4", "t3"])]


def test_rerank_ties_keep_base_order_and_depth_cuts():
    base = FakeRetriever("base", [[2, 0, 1, 3, 4, 5]])
    scorer = FakeScorer({"t2": 1.0, "t0": 1.0, "t1": 2.0})
    (r,) = RerankRetriever("rerank-fake", base, scorer, TEXTS, head=3).rank(QueryBatch(("q",)), depth=4)
    # t1 (2.0) first; t2 and t0 tie at 1.0 and keep base order (2 before 0)
    assert r.order.tolist() == [1, 2, 0, 3]
    assert len(r.scores) == 4 and np.isnan(r.scores[3])


class FakeScoreCache:
    """A FAKE in-memory score cache (the store's protocol): get -> NaN where unknown, put stores."""

    def __init__(self):
        self.data = {}
        self.puts = []

    def get(self, identity, query, texts):
        return np.array([self.data.get((identity, query, t), np.nan) for t in texts], dtype=np.float64)

    def put(self, identity, query, texts, scores):
        self.puts.append((identity, query, list(texts)))
        for t, s in zip(texts, scores):
            self.data[(identity, query, t)] = float(s)


def test_rerank_scores_only_what_the_cache_lacks():
    cache = FakeScoreCache()
    cache.data[("fake", "q", "t0")] = 5.0  # cached earlier: must be used, not recomputed
    base = FakeRetriever("base", [[0, 1, 2, 3, 4, 5]])
    scorer = FakeScorer({"t0": -1.0, "t1": 1.0, "t2": 7.0})
    rr = RerankRetriever("rerank-fake", base, scorer, TEXTS, head=3, cache=cache)
    (r,) = rr.rank(QueryBatch(("q",)))
    # t0 from the cache (5.0), t1 and t2 scored (1.0, 7.0): 2, 0, 1
    assert r.order.tolist()[:3] == [2, 0, 1]
    assert r.scores[:3].tolist() == [7.0, 5.0, 1.0]
    assert scorer.calls == [("q", ["t1", "t2"])]
    assert cache.puts == [("fake", "q", ["t1", "t2"])]
    # a second run is served from the cache entirely
    (r2,) = rr.rank(QueryBatch(("q",)))
    assert r2.order.tolist() == r.order.tolist()
    assert len(scorer.calls) == 1


# ---------------------------------------------------------------------------
# Cross-encoder
# ---------------------------------------------------------------------------


def test_cross_encoder_not_available_offline_fails_fast_and_says_how_to_fix(monkeypatch):
    import socket

    name = "nobody-here/no-such-cross-encoder-xyz"
    box = {}
    attempts = []

    def no_network(self, address):  # any connection attempt is the bug: record it and refuse it
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", no_network)

    def load():
        try:
            CrossEncoderScorer(name)
        except BaseException as exc:  # noqa: BLE001 - recorded and checked below
            box["exc"] = exc

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=60)  # a guard against a hang, not a speed assertion
    assert not worker.is_alive(), "CrossEncoderScorer hangs on a model that is not available offline"
    assert attempts == [], f"tried to reach the network: {attempts}"
    exc = box.get("exc")
    assert isinstance(exc, Unavailable), exc
    assert exc.name == "rerank-ce"
    assert name in exc.reason
    assert "folder" in exc.reason and "cache" in exc.reason


def test_cross_encoder_folder_without_config_is_unavailable(tmp_path):
    with pytest.raises(Unavailable, match="config.json"):
        CrossEncoderScorer(str(tmp_path))


@pytest.fixture(scope="module")
def random_cross_encoder_dir(tmp_path_factory):
    """A cross-encoder with RANDOM weights built from the MiniLM config: for plumbing only."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from ragdiag.index.encoder.resolve import ModelUnavailable, resolve_model_dir

    try:
        minilm = resolve_model_dir(None)
    except ModelUnavailable as exc:
        pytest.skip(str(exc))
    out = tmp_path_factory.mktemp("random-cross-encoder")
    torch.manual_seed(0)
    config = transformers.BertConfig.from_pretrained(minilm, num_labels=1)
    transformers.BertForSequenceClassification(config).save_pretrained(out)
    transformers.AutoTokenizer.from_pretrained(minilm).save_pretrained(out)
    return out


@pytest.mark.model
def test_cross_encoder_scorer_plumbing_with_random_weights(random_cross_encoder_dir):
    """PLUMBING ONLY: random weights, so the scores mean nothing; shapes, determinism and stamps do."""
    scorer = CrossEncoderScorer(str(random_cross_encoder_dir), batch_size=2)
    texts = ["Zebras graze near rivers.", "Volcanic ash covers plateaus.", "Ferns have spores."]
    s1 = scorer.score("where do zebras graze?", texts)
    s2 = scorer.score("where do zebras graze?", texts)
    assert s1.shape == (3,) and s1.dtype == np.float64 and np.isfinite(s1).all()
    np.testing.assert_array_equal(s1, s2)
    assert scorer.score("q", []).shape == (0,)
    assert scorer.identity.startswith(f"ce:{random_cross_encoder_dir}:") and len(scorer.identity.rsplit(":", 1)[1]) == 16
    # and it plugs into the reranker
    base = FakeRetriever("base", [[0, 1, 2]])
    (r,) = RerankRetriever("rerank-ce", base, scorer, texts, head=3).rank(QueryBatch(("where do zebras graze?",)))
    assert r.order.tolist() == np.argsort(-s1, kind="stable").tolist()


# ---------------------------------------------------------------------------
# MaxSim
# ---------------------------------------------------------------------------

MAXSIM_CASES = [
    # rows: query tokens; each takes its best chunk token: 1.0 + 0.8
    ([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.6, 0.8]], 1.8),
    # one chunk token serves both query tokens: 0.6 + 0.8
    ([[1.0, 0.0], [0.0, 1.0]], [[0.6, 0.8]], 1.4),
    # a query token pointing away still adds its best (negative) cosine: 1.0 + (-0.6)
    ([[1.0, 0.0], [-1.0, 0.0]], [[1.0, 0.0], [0.6, 0.8]], 0.4),
    ([], [[1.0, 0.0]], 0.0),
    ([[1.0, 0.0]], [], 0.0),
]


@pytest.mark.parametrize(("q", "c", "expected"), MAXSIM_CASES)
def test_maxsim_hand_computed(q, c, expected):
    assert maxsim(np.array(q).reshape(-1, 2), np.array(c).reshape(-1, 2)) == pytest.approx(expected)


@pytest.mark.model
def test_maxsim_scorer_with_real_encoder_prefers_the_chunk_with_the_query_words(encoder):
    scorer = MaxSimScorer(encoder)
    on_topic = "Support vector machines use a kernel to separate classes with a maximum margin."
    off_topic = "Bake the bread at two hundred degrees until the crust is golden brown."
    scores = scorer.score("kernel support vector machine margin", [off_topic, on_topic])
    assert scores.shape == (2,)
    assert scores[1] > scores[0]
    assert scorer.identity.startswith("maxsim:")
    assert {on_topic, off_topic} <= set(scorer._tokens)  # token vectors are cached ...
    scorer.forget()
    assert not scorer._tokens  # ... until forgotten
