"""Tests for ragdiag.analyses.funnel: one stage per answerable query, in pipeline order.

Table-driven: each row of ``CASES`` is one question with one phrasing, placed
by hand in FAKE rankings (a synthetic evaluation: hand-set ranks and
distances, not produced by any retriever). Integration: the tiny corpus with
the FAKE encoder (conftest.py), and a reranker driven by a FAKE pair scorer.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.evaluation.records import Config
from ragdiag.evaluation.evaluate import _config_result, evaluate
from ragdiag.core.gate import Gate
from ragdiag.analyses.outcomes import LADDER
from ragdiag.core.words import count_rate_text
from ragdiag.analyses.funnel import format_funnel, funnel, funnel_long, funnel_rows, funnels, needle_ranks
from ragdiag.core.metrics import hits_at_k

from funnel_cases import CASES, synthetic_eval


def row_of(f, query_id: str):
    """The funnel row of one answerable query (the test's lookup; the library has no use for one)."""
    return next(r for r in f.rows if r.query_id == query_id)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_stage_table(case):
    ev = synthetic_eval()
    name = case[0]
    hybrid, rerank = funnel(ev, "E/hybrid"), funnel(ev, "E/rerank-maxsim")
    assert row_of(hybrid, f"{name}:course").stage == case[9]
    r = row_of(rerank, f"{name}:course")
    assert (r.stage, r.rerank) == (case[10], case[11])


def test_stage_ranks_are_the_sibling_needle_ranks():
    ev = synthetic_eval()
    rows = {r.query_id: r for r in funnel(ev, "E/rerank-maxsim").rows}
    for c in CASES:
        r = rows[f"{c[0]}:course"]
        expected = (c[3] or None, c[4] or None, c[5] or None, c[6] or None) if c[1] else (None,) * 4
        assert (r.dense_rank, r.bm25_rank, r.pool_rank, r.final_rank) == expected
    dense = {r.query_id: r for r in funnel(ev, "E/dense").rows}["ranked-low:course"]
    assert (dense.dense_rank, dense.bm25_rank, dense.pool_rank, dense.final_rank) == (8, None, 8, 8)


def test_hybrid_not_in_pool_says_which_input_had_it():
    ev = synthetic_eval()
    r = row_of(funnel(ev, "E/hybrid"), "not-in-pool:course")
    assert "dense rank 40" in r.detail and "bm25 rank 3 (in its top 25)" in r.detail and "bm25 had it" in r.detail


def test_counts_sum_to_queries_and_promoted_minus_demoted_is_the_recall_change():
    ev = synthetic_eval()
    fs = funnels(ev)
    for f in fs:
        assert sum(f.counts().values()) == len(f.rows) == len(CASES)
    rows = {r["config"]: r for r in funnel_rows(fs)}
    assert rows["E/rerank-maxsim"]["promoted"] == 1 and rows["E/rerank-maxsim"]["demoted"] == 1
    assert rows["E/hybrid"]["promoted"] is None
    hk = hits_at_k(ev.results[Config("E", "hybrid")].needle_rank, 4).sum()
    rk = hits_at_k(ev.results[Config("E", "rerank-maxsim")].needle_rank, 4).sum()
    assert rows["E/rerank-maxsim"]["promoted"] - rows["E/rerank-maxsim"]["demoted"] == rk - hk


def test_gate_stage_follows_the_cut():
    ev = synthetic_eval()
    assert row_of(funnel(ev, "E/hybrid", gate=Gate(cut=0.8)), "refused:course").stage == "answered"
    assert row_of(funnel(ev, "E/hybrid", gate=Gate(cut=0.2)), "answered:course").stage == "refused"


def test_intervals_resample_questions_and_bracket_the_share():
    ev = synthetic_eval()
    f = funnel(ev, "E/hybrid")
    long = funnel_long([f])
    assert [r["stage"] for r in long] == list(LADDER)
    assert sum(r["queries"] for r in long) == len(CASES)
    for r in long:
        assert r["low"] <= r["share"] <= r["high"]
        assert r["share"] == pytest.approx(r["queries"] / len(CASES))
    assert funnel_long([f]) == long  # fixed seed: reproducible
    text = format_funnel([f])
    assert "E/hybrid" in text and "interval over questions: clustered Wilson" in text
    ivs = f.intervals()  # each rung as every surface writes a rate: "3 = 38% (14–69)", never "0.38 [0.14, 0.69]"
    shown = [count_rate_text(ivs[s]) for s in LADDER if ivs[s].trials and ivs[s].successes]
    assert shown and all(cell in text for cell in shown) and " [" not in text.split("\n", 1)[1]


def test_bad_arguments_say_what_to_do():
    ev = synthetic_eval()
    with pytest.raises(ValueError, match="k must be a whole number from 1 to 20"):
        funnel(ev, "E/hybrid", gate=Gate(k=0))
    with pytest.raises(ValueError, match="pool"):
        funnel(ev, "E/hybrid", gate=Gate(k=10), pool=5)
    with pytest.raises(ValueError, match="unknown stage"):
        funnel(ev, "E/hybrid").queries("lost")


def test_a_plugin_reranker_is_funnelled_against_the_pool_its_spec_names():
    """``word-rerank`` (tests/helpers/plugin_example.py) rescores BM25's head: its pool ranks are BM25's, not hybrid's."""
    import plugin_example  # noqa: F401 - registers word-rerank (pool: bm25)

    ev = synthetic_eval(columns=((4, "bm25"), (6, "word-rerank")))
    f = funnel(ev, "E/word-rerank")
    assert f.reranker and not funnel(ev, "E/bm25").reranker
    k = f.k
    for c in CASES:
        r = row_of(f, f"{c[0]}:course")
        bm25, final = c[4] or None, c[6] or None
        assert (r.dense_rank, r.bm25_rank, r.pool_rank, r.final_rank) == ((None,) * 4 if not c[1] else
                                                                          (None, bm25, bm25, final))
        if c[1]:
            inside_before, inside_after = bool(bm25) and bm25 <= k, bool(final) and final <= k
            assert r.rerank == ("demoted" if inside_before and not inside_after else
                                "promoted" if inside_after and not inside_before else "")
    # BM25 had the holder at rank 3, the reranker sank it to 31: in its pool, so ranked low, not "not in pool"
    lost = row_of(f, "not-in-pool:course")
    assert (lost.stage, lost.rerank) == ("ranked-low", "demoted") and "bm25 rank 3" in lost.detail
    assert row_of(funnel(synthetic_eval(), "E/rerank-maxsim"), "not-in-pool:course").stage == "not-in-pool"
    row = {r["config"]: r for r in funnel_rows([f])}["E/word-rerank"]
    m = ev.in_domain
    delta = int(hits_at_k(ev.results[Config("E", "word-rerank")].needle_rank[m], k).sum()
                - hits_at_k(ev.results[Config("E", "bm25")].needle_rank[m], k).sum())
    assert row["promoted"] - row["demoted"] == delta and row["promoted"] >= 1 and row["demoted"] >= 2
    assert "+%d/-%d" % (row["promoted"], row["demoted"]) in format_funnel([f])


# ----- the tiny corpus (FAKE encoder) ---------------------------------------------------------------


def test_tiny_corpus_stages(tiny_eval):
    fs = {f.config.label: f for f in funnels(tiny_eval, gate=Gate(k=2))}
    n_in = int(tiny_eval.in_domain.sum())
    for f in fs.values():
        assert sum(f.counts().values()) == n_in
    dense = {r.query_id: r.stage for r in fs["C/dense"].rows}
    # see test_evaluate.py: q3 destroyed, q4:course truncated (dense), q1:ticket rank 4 > k
    assert dense["q3:course"] == dense["q3:ticket"] == "destroyed"
    assert dense["q4:course"] == "truncated"
    assert dense["q1:ticket"] == "ranked-low"
    assert {r.query_id: r.stage for r in fs["C/bm25"].rows}["q4:course"] != "truncated"  # BM25 found it


def test_missing_siblings_are_computed_with_the_same_retrievers(tiny_corpus, tiny_truth, fake_encoder, tiny_eval):
    only = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C", retrievers="hybrid")
    with pytest.raises(ValueError, match="encoder"):
        needle_ranks(only, "C")
    ranks = needle_ranks(only, "C", encoder=fake_encoder)
    for name in ("dense", "bm25", "hybrid"):
        assert ranks[name].tolist() == tiny_eval.result(f"C/{name}").needle_rank.tolist()


def test_a_text_only_reranker_needs_no_encoder_for_its_pool(tiny_corpus, tiny_truth, fake_encoder, tiny_eval):
    import plugin_example  # noqa: F401 - registers word-rerank (pool: bm25, embeds nothing)

    only = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C", retrievers="word-rerank")
    f = funnel(only, "C/word-rerank", gate=Gate(k=2))  # no encoder: BM25's ranks need no query vectors
    bm25 = tiny_eval.result("C/bm25").needle_rank
    pools = {q.id: int(r) or None for q, r in zip(tiny_eval.queries, bm25)}
    assert [r.pool_rank for r in f.rows] == [r.bm25_rank for r in f.rows] == [pools[r.query_id] for r in f.rows]
    assert any(r.stage == "not-in-pool" for r in f.rows)  # a holder BM25 does not retrieve is outside the pool


def test_errors_collects_configurations_without_ranks_and_keeps_the_rest(tiny_corpus, tiny_truth, fake_encoder):
    mixed = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A,C", retrievers="dense,hybrid")
    # hybrid's funnel needs the dense ranks: without C/dense (and no encoder) C/hybrid cannot be had
    partial = dataclasses.replace(mixed, results={k: v for k, v in mixed.results.items() if k.label != "C/dense"})
    with pytest.raises(ValueError, match="encoder"):
        funnels(partial, gate=Gate(k=2))
    errors: dict[str, str] = {}
    got = {f.config.label for f in funnels(partial, gate=Gate(k=2), errors=errors)}
    assert set(errors) == {"C/hybrid"} and "encoder" in errors["C/hybrid"]
    assert got == {"A/dense", "A/hybrid"}

class _FakeScorer:
    """A FAKE pair scorer: fixed pseudo-random scores per (query, text)."""

    identity = "fake"

    def __init__(self, seed):
        self.seed = seed

    def score(self, query, texts):
        import zlib

        return np.array([zlib.crc32(f"{self.seed}|{query}|{t}".encode()) % 1000 for t in texts], dtype=float)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 6))
def test_promoted_minus_demoted_reproduces_recall_change(tiny_eval, fake_encoder, seed, k):
    from dataclasses import replace

    from ragdiag.retrieval.bm25 import BM25Retriever
    from ragdiag.retrieval.dense import DenseRetriever
    from ragdiag.retrieval.hybrid import HybridRetriever
    from ragdiag.retrieval.base import QueryBatch
    from ragdiag.retrieval.rerank import RerankRetriever
    from ragdiag.retrieval.dense import cosine_distances

    ev = tiny_eval
    index = ev.indexes["C"]
    texts = [c.embed_text for c in index.chunks]
    hybrid_res = ev.result("C/hybrid")
    qv = fake_encoder.encode([q.text for q in ev.queries])  # the encoder tiny_eval was built with
    batch = QueryBatch(tuple(q.text for q in ev.queries), qv)
    hybrid = HybridRetriever([DenseRetriever(index.vectors), BM25Retriever(texts)])
    rr = RerankRetriever("rerank-maxsim", hybrid, _FakeScorer(seed), texts, head=5)
    rankings = rr.rank(batch)
    orders = np.stack([r.order for r in rankings])
    dist = cosine_distances(qv, index.vectors)
    cfg = Config("C", "rerank-maxsim")
    res = _config_result(cfg, index, ev.truth, ev.queries, orders, np.stack([r.scores for r in rankings]), dist, seconds=0.0)
    view = replace(ev, results={**ev.results, cfg: res})
    f = funnel(view, cfg, Gate(k=k), pool=max(5, k))
    m = ev.in_domain
    delta = int(hits_at_k(res.needle_rank[m], k).sum() - hits_at_k(hybrid_res.needle_rank[m], k).sum())
    assert f.promoted - f.demoted == delta
    assert sum(f.counts().values()) == int(m.sum())


def test_per_query_records_carry_the_funnel_stage_as_outcome_and_ranks(tiny_eval):
    from ragdiag.present.per_query import PER_QUERY_COLUMNS, per_query_frame

    df = per_query_frame(tiny_eval)
    for col in ("outcome", "kept", "dense_rank", "bm25_rank", "pool_rank", "final_rank"):
        assert col in PER_QUERY_COLUMNS and col in df.columns
    assert "stage" not in df.columns and "diagnosis" not in df.columns  # one vocabulary
    fs = {f.config.label: f for f in funnels(tiny_eval)}
    for _, row in df.iterrows():
        label = f"{row['strategy']}/{row['retriever']}"
        if row["phrasing"] == "ood":
            assert row["outcome"] == ("bluff" if row["kept"] else "abstained")
            continue
        expected = row_of(fs[label], row["query_id"])
        assert row["outcome"] == expected.stage
        final = None if row["final_rank"] is pd.NA else int(row["final_rank"])
        assert final == expected.final_rank
