"""Tests for ragdiag.evaluation.evaluate and ragdiag.core.metrics.

Plumbing: the tiny hand-made corpus of conftest.py evaluated with the FAKE
bag-of-words encoder (cosines countable by hand). The integration path,
the bundled corpus with the real model (``bundled_eval_c``, whose recall and MRR
are also checked against pytrec_eval in test_export.py), is in test_evaluate_real_model.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragdiag.analyses.gate_table import query_outcomes
from ragdiag.core.gate import Gate
from ragdiag.evaluation.records import Config
from ragdiag.evaluation.evaluate import evaluate
from ragdiag.evaluation.rows import interval_cells
from ragdiag.analyses.summary import summary_rows
from ragdiag.retrieval.registry import parse_retrievers
from ragdiag.core.metrics import hits_at_k, reciprocal_rank
from ragdiag.retrieval.dense import cosine_distances
from ragdiag.analyses.compare.intervals import clustered_rate
from ragdiag.core.stats import Interval, wilson

QUERY_IDS = ["q1:course", "q1:ticket", "q2:course", "q2:ticket", "q3:course", "q3:ticket", "q4:course",
             "q4:ticket", "o1", "o2"]

# C chunk positions (see TINY_DOCS in conftest.py): 0 animal preamble, 1 zebras, 2 volcanoes, 3 long P1,
# 4 long P2, 5 antarctica (krill x40 + penguin needle), 6 plant preamble, 7 ferns.
# Dense with the FAKE encoder (window 38 words); the outcome ladder at k = keep = 2 and cut 2 (the gate keeps
# every chunk of the window: a needle in the top 2 is answered; out-of-domain queries all get sources):
#  q1:course "Where do zebras graze?"  shares zebras (x2 in chunk 1) and graze     -> chunk 1 first      rank 1 answered
#  q1:ticket "volcanic ferns"          matches chunks 7 and 2 only; zeros by position: 0, then 1  rank 4 ranked-low
#  q2:course / q2:ticket               only chunk 2 shares words                                  rank 1 answered
#  q3:*                                the needle straddles chunks 3 and 4 (P1 | P2)              rank 0 destroyed
#  q4:course "penguins huddle in storms": the needle words are past chunk 5's window; all scores 0,
#                                      position order puts chunk 5 sixth                          rank 6 truncated
#  q4:ticket "krill"                   krill x36 inside chunk 5's window                          rank 1 answered
DENSE_RANKS = [1, 4, 1, 1, 0, 0, 6, 1, 0, 0]
DENSE_OUTCOMES = ("answered", "ranked-low", "answered", "answered", "destroyed", "destroyed", "truncated", "answered",
                  "bluff", "bluff")
# BM25 reads the whole chunk (no window): q4:course finds the penguin sentence first -> answered.
# q1:ticket "volcanic ferns" shares no word with the zebras chunk: its BM25 score is 0, so BM25 does not
# retrieve it at all (chunk order among zero scores is no evidence)              -> rank 0 not-in-pool
BM25_RANKS = [1, 0, 1, 1, 0, 0, 1, 1, 0, 0]
BM25_OUTCOMES = ("answered", "not-in-pool", "answered", "answered", "destroyed", "destroyed", "answered", "answered",
                 "bluff", "bluff")
# Hybrid, q4:course: dense ranks chunks 0..7 as 1..8 (all tied at 0); BM25 ranks chunk 5 first, then 0, 1, 2, 3, 4, 6, 7.
#  RRF: c0 1/61 + 1/62 = 0.032522, c1 1/62 + 1/63 = 0.032002, c5 1/66 + 1/61 = 0.031545, c2 1/63 + 1/64 = 0.031498 -> rank 3
HYBRID_RANKS = [1, 4, 1, 1, 0, 0, 3, 1, 0, 0]

# Cosines (bag-of-words counts): chunk 1 = {zebras: 2, graze, quietly, near, riverbanks, every, single, morning: 1},
# |chunk 1|^2 = 4 + 7 = 11; chunk 2 = 9 distinct words, |chunk 2|^2 = 9; chunk 7 = {ferns: 2, 6 words: 1}, |.|^2 = 10.
NEEDLE_DISTANCE = {
    "q1:course": 1 - 3 / (2 * math.sqrt(11)),  # q = {where, do, zebras, graze}: dot 2 + 1 = 3, |q| = 2 -> 0.547733
    "q1:ticket": 1.0,  # no word shared with chunk 1
    "q2:course": 1 - 3 / (math.sqrt(3) * 3),  # {volcanic, ash, eruption}: dot 3 -> 0.422650
    "q2:ticket": 1 - 4 / (math.sqrt(5) * 3),  # {what, covers, plateaus, after, eruption}: dot 4 -> 0.403715
    "q4:course": 1.0,  # the needle words are past the window
    "q4:ticket": 1 - 36 / math.sqrt(1 + 36**2),  # window of chunk 5: {antarctica: 1, krill: 36} -> 0.000386
}
TOP1_DISTANCE = {
    "q1:ticket": 1 - 2 / (math.sqrt(2) * math.sqrt(10)),  # the ferns chunk: dot 2 (ferns x2) -> 0.552786
    "o1": 1 - 2 / (2 * math.sqrt(11)),  # "what do zebras drink" -> zebras chunk, dot 2 -> 0.698489
    "o2": 1.0,  # shares nothing: every distance is 1, the first chunk is top
}


def outcomes(ev, config, k: int = 2) -> tuple[str, ...]:
    """Every query's rung of the ladder at k = keep = ``k``, cut 2 (the window kept whole)."""
    return tuple(o.outcome for o in query_outcomes(ev, config, Gate(keep=k, cut=2.0)))


def test_needle_ranks_and_outcomes_dense(tiny_eval):
    res = tiny_eval.result("C/dense")
    assert [q.id for q in tiny_eval.queries] == QUERY_IDS
    assert res.needle_rank.tolist() == DENSE_RANKS
    assert outcomes(tiny_eval, "C/dense") == DENSE_OUTCOMES


@pytest.mark.parametrize(("config", "ranks"), [("C/bm25", BM25_RANKS), ("C/hybrid", HYBRID_RANKS)])
def test_needle_ranks_bm25_and_hybrid(tiny_eval, config, ranks):
    assert tiny_eval.result(config).needle_rank.tolist() == ranks


def test_truncation_hurts_only_the_encoder(tiny_eval):
    i = QUERY_IDS.index("q4:course")
    assert outcomes(tiny_eval, "C/dense")[i] == "truncated"
    assert outcomes(tiny_eval, "C/bm25") == BM25_OUTCOMES
    assert outcomes(tiny_eval, "C/hybrid")[i] == "truncated"  # rank 3 > k = 2, window cut before the needle


def test_distances_hand_computed(tiny_eval):
    res = tiny_eval.result("C/dense")
    for qid, expected in NEEDLE_DISTANCE.items():
        assert res.needle_distance[QUERY_IDS.index(qid)] == pytest.approx(expected, abs=1e-6), qid
    for qid in ("q3:course", "q3:ticket", "o1", "o2"):  # destroyed or ood: no needle distance
        assert np.isnan(res.needle_distance[QUERY_IDS.index(qid)])
    for qid, expected in TOP1_DISTANCE.items():
        assert res.top1_distance[QUERY_IDS.index(qid)] == pytest.approx(expected, abs=1e-6), qid
    # a hit at rank 1: the top-1 distance is the needle's
    assert res.top1_distance[0] == pytest.approx(NEEDLE_DISTANCE["q1:course"], abs=1e-6)


def test_distances_are_the_same_whatever_ranked_the_chunks(tiny_eval, fake_encoder):
    dense, bm25 = tiny_eval.result("C/dense"), tiny_eval.result("C/bm25")
    np.testing.assert_array_equal(dense.needle_distance, bm25.needle_distance)
    # the top lists differ in order, but each distance belongs to its chunk
    dist = cosine_distances(fake_encoder.encode([q.text for q in tiny_eval.queries]), tiny_eval.indexes["C"].vectors)
    rows = np.arange(len(QUERY_IDS))[:, None]
    for res in (dense, bm25):
        np.testing.assert_allclose(res.top_distance, dist[rows, res.top_order], atol=1e-12)


def test_top_holds_marks_the_needle_chunks(tiny_eval):
    res = tiny_eval.result("C/dense")
    holders = tiny_eval.indexes["C"].holders
    assert {k: v.tolist() for k, v in holders.items()} == {"q1": [1], "q2": [2], "q3": [], "q4": [5]}
    for i, q in enumerate(tiny_eval.queries):
        expected = np.isin(res.top_order[i], holders[q.question_id]) if q.in_domain else np.zeros(8, bool)
        assert res.top_holds[i].tolist() == expected.tolist()
        if res.needle_rank[i]:
            assert res.top_holds[i, res.needle_rank[i] - 1]


def test_needle_distance_is_the_minimum_over_holders(tiny_corpus, tiny_truth, fake_encoder):
    # With overlap (D) the zebra needle sits in two chunks: chunk 1 "# Animal Notes ## Zebras ..." and
    # chunk 2, which copies it in front of the volcano section.
    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="D", retrievers="dense")
    index, res = ev.indexes["D"], ev.result("D/dense")
    assert index.holders["q1"].tolist() == [1, 2]
    i = QUERY_IDS.index("q1:course")
    # chunk 1: {animal, notes, zebras x2, 7 words}, |.|^2 = 13, dot 3 -> 1 - 3/(2 sqrt 13) = 0.583975
    # chunk 2: 18 distinct words (a cut "bras", the zebra sentence, the volcano section), dot 2 -> 1 - 2/(2 sqrt 18) = 0.764298
    assert res.needle_distance[i] == pytest.approx(1 - 3 / (2 * math.sqrt(13)), abs=1e-6)
    dist = cosine_distances(fake_encoder.encode([q.text for q in ev.queries]), index.vectors)
    assert dist[i, 2] == pytest.approx(1 - 2 / (2 * math.sqrt(18)), abs=1e-6)
    for j, q in enumerate(ev.queries):
        h = index.holders.get(q.question_id) if q.in_domain else None
        if h is not None and h.size:
            assert res.needle_distance[j] == pytest.approx(dist[j, h].min(), abs=1e-9)
            assert res.needle_rank[j] == min(res.top_order[j].tolist().index(p) for p in h) + 1
    # overlap rescues the needle C destroyed
    assert ev.indexes["D"].report.destroyed == ()


# R@k and MRR over the 8 in-domain queries, dense ranks [1, 4, 1, 1, 0, 0, 6, 1]:
#   R@1 4/8, R@4 5/8, R@8 6/8, R@20 6/8, MRR (1 + 1/4 + 1 + 1 + 0 + 0 + 1/6 + 1) / 8 = 4.41667 / 8 = 0.552083
# course [1, 1, 0, 6]: R@1 2/4, R@4 2/4, R@8 3/4, R@20 3/4, MRR (1 + 1 + 1/6) / 4 = 0.541667
# ticket [4, 1, 0, 1]: R@1 2/4, R@4 3/4, R@8 3/4, R@20 3/4, MRR (1/4 + 1 + 1) / 4 = 0.5625
SUMMARY_CASES = {
    "all": (8, {1: 4, 4: 5, 8: 6, 20: 6}, 4.25 / 8 + 1 / 48),
    "course": (4, {1: 2, 4: 2, 8: 3, 20: 3}, (2 + 1 / 6) / 4),
    "ticket": (4, {1: 2, 4: 3, 8: 3, 20: 3}, 2.25 / 4),
}


@pytest.mark.parametrize(("phrasing", "case"), SUMMARY_CASES.items(), ids=list(SUMMARY_CASES))
def test_summary_rows_hand_computed(tiny_eval, phrasing, case):
    n, hits, mrr = case
    (row,) = [r for r in summary_rows(tiny_eval, phrasing=phrasing) if r.config == "C/dense"]
    assert row.queries == n and row.phrasing == phrasing
    for k, h in hits.items():
        iv = row.recall[k]
        assert isinstance(iv, Interval)
        # questions are the unit: the interval is the clustered one over the questions of these queries
        ids = [q.question_id for q, m in zip(tiny_eval.queries, tiny_eval.mask(phrasing)) if m]
        ranks = tiny_eval.result("C/dense").needle_rank[tiny_eval.mask(phrasing)]
        assert iv == clustered_rate(hits_at_k(ranks, k), ids)
        assert (iv.successes, iv.trials) == (h, n)
        if phrasing != "all":  # one query per question: Wilson's interval, with t(G-1) in place of z (wider)
            assert iv.low <= wilson(h, n).low and iv.high >= wilson(h, n).high
        assert iv.estimate == pytest.approx(h / n)
        assert 0 <= iv.low <= iv.estimate <= iv.high <= 1
    assert row.mrr.estimate == pytest.approx(mrr)
    # chunk facts: 8 chunks, q3 destroyed, 3 chunks past the 40-token window (P1 46, P2 51, antarctica 52 tokens)
    assert (row.chunks, row.destroyed, row.truncated) == (8, 1, 3)
    cells = interval_cells(row)
    assert cells["R@1"] == pytest.approx(hits[1] / n) and cells["R@1_low"] == row.recall[1].low
    assert cells == row.cells() and list(cells)[:8] == ["config", "strategy", "retriever", "phrasing", "queries",
                                                         "R@1", "R@1_low", "R@1_high"]


def test_summary_mrr_equals_metrics_module(tiny_eval):
    mask = tiny_eval.mask()
    for row in summary_rows(tiny_eval):
        ranks = tiny_eval.result(row.config).needle_rank[mask]
        assert row.mrr.estimate == pytest.approx(reciprocal_rank(ranks).mean())
        assert row.recall[4].estimate == pytest.approx(hits_at_k(ranks, 4).mean())


def test_phrasing_masks(tiny_eval):
    assert tiny_eval.mask().tolist() == [True] * 8 + [False] * 2
    assert tiny_eval.mask("course").tolist() == [True, False] * 4 + [False, False]
    assert tiny_eval.mask("ticket").tolist() == [False, True] * 4 + [False, False]
    assert tiny_eval.mask("ood").tolist() == [False] * 8 + [True, True]
    assert tiny_eval.truth.phrasings == ("course", "ticket")


def test_top_lists_are_as_long_as_the_index(tiny_eval):
    res = tiny_eval.result("C/hybrid")
    assert res.top_order.shape == res.top_scores.shape == res.top_distance.shape == res.top_holds.shape == (10, 8)
    assert all(sorted(row) == list(range(8)) for row in res.top_order.tolist())
    assert (np.diff(res.top_scores, axis=1) <= 0).all()


def test_evaluation_bookkeeping(tiny_eval):
    assert list(tiny_eval.results) == [Config("C", "dense"), Config("C", "bm25"), Config("C", "hybrid")]
    assert tiny_eval.unavailable == {}
    assert tiny_eval.encoder_stamp["model"] == "FAKE-bag-of-words"
    assert "pipeline_version" in tiny_eval.encoder_stamp
    assert tiny_eval.query_index("o2") == 9
    with pytest.raises(KeyError, match="not evaluated"):
        tiny_eval.result("E/dense")
    with pytest.raises(KeyError):
        tiny_eval.query_index("nope")


# ---------------------------------------------------------------------------
# Config and retriever parsing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [("E/hybrid", Config("E", "hybrid")), ("c/bm25", Config("C", "bm25")),
                                                 ("A/rerank-ce", Config("A", "rerank-ce")), ("E/Dense", Config("E", "dense"))])
def test_config_parse(text, expected):
    cfg = Config.parse(text)
    assert cfg == expected
    assert str(cfg) == cfg.label == f"{expected.strategy}/{expected.retriever}"


@pytest.mark.parametrize("text", ["E-dense", "Z/dense", "E/colbert", "E/", "/dense", "", "E/dense/x"])
def test_config_parse_errors_say_how_to_write_it(text):
    with pytest.raises(ValueError, match="STRATEGY/RETRIEVER") as err:
        Config.parse(text)
    assert "E/hybrid" in str(err.value) and "dense" in str(err.value)


def test_parse_retrievers():
    assert parse_retrievers(None) == ["dense", "bm25", "hybrid", "rerank-maxsim", "rerank-ce"]
    assert parse_retrievers(" bm25, dense ,bm25") == ["bm25", "dense"]
    with pytest.raises(ValueError, match="colbert"):
        parse_retrievers("dense,colbert")
    with pytest.raises(ValueError, match="none"):
        parse_retrievers(" , ")


def test_unavailable_cross_encoder_is_reported_not_dropped(tiny_corpus, tiny_truth, fake_encoder):
    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C", retrievers="bm25,rerank-ce",
                  cross_encoder="nobody-here/no-such-cross-encoder-xyz")
    assert list(ev.results) == [Config("C", "bm25")]
    assert "no-such-cross-encoder-xyz" in ev.unavailable["rerank-ce"]
    with pytest.raises(KeyError, match="no-such-cross-encoder"):
        ev.result("C/rerank-ce")


def test_the_wordpiece_tap_keeps_the_encoders_session_for_the_whole_embed(tiny_corpus, tiny_truth, tmp_path):
    """FAKE (plumbing): with MaxSim's wordpieces kept, the wrapped encoder still gets one ``encoding_session`` around
    all the store's committed parts (Ray's pool is not started again for every part), and the tokens still flow."""
    from contextlib import contextmanager

    from fakes import FakeEncoder

    from ragdiag.evaluation.evaluate import build_index
    from ragdiag.index.chunking import STRATEGIES
    from ragdiag.index.store import Store

    class Sessions(FakeEncoder):
        texts_per_commit = 2

        def __init__(self):
            super().__init__(max_seq_length=40)
            self.log: list[str] = []

        @contextmanager
        def encoding_session(self):
            self.log.append("open")
            yield self
            self.log.append("close")

        def encode(self, texts, *, progress=None, token_sink=None):
            self.log.append("encode")
            return super().encode(texts, progress=progress, token_sink=token_sink)

    enc, kept = Sessions(), []
    with Store(tmp_path) as store:
        index = build_index(tiny_corpus, tiny_truth, STRATEGIES["A"], enc, store=store,
                            keep_tokens=lambda text, tokens: kept.append(text))
    parts = -(-index.embedded // 2)
    assert parts > 1
    assert enc.log == ["open"] + ["encode"] * parts + ["close"]
    assert sorted(kept) == sorted({c.embed_text for c in index.chunks})
