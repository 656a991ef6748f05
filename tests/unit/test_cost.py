"""Tests for ragdiag.analyses.cost: prompt tokens, the Pareto front, and the measured rows (values, never timings)."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.analyses.cost import at_gate, cost_rows, costs, machine, pareto, prompt_tokens
from ragdiag.core.gate import Gate

FRONT = [
    ("one point", [0.5], [1.0], [True]),
    ("dominated by better and cheaper", [0.5, 0.6], [2.0, 1.0], [False, True]),
    ("trade-off", [0.5, 0.6, 0.7], [1.0, 2.0, 3.0], [True, True, True]),
    ("equal points both stay", [0.5, 0.5], [1.0, 1.0], [True, True]),
    ("same recall, cheaper wins", [0.5, 0.5], [1.0, 2.0], [True, False]),
    ("nan cost never optimal", [0.9, 0.5], [float("nan"), 1.0], [False, True]),
]


@pytest.mark.parametrize("name,q,c,expected", FRONT, ids=[f[0] for f in FRONT])
def test_pareto(name, q, c, expected):
    assert pareto(q, c).tolist() == expected


def test_prompt_tokens_count_the_gates_prompt(tiny_eval, fake_encoder):
    from ragdiag.index.citations import Answer, cite
    from ragdiag.analyses.threshold import kept_chunks
    from ragdiag.core.gate import Gate

    res = tiny_eval.result("C/dense")
    chunks = tiny_eval.indexes["C"].chunks
    got = prompt_tokens(tiny_eval, "C/dense", fake_encoder, Gate(2, 0.6))
    for i, q in enumerate(tiny_eval.queries):
        kept = [(chunks[p], d) for p, d in kept_chunks(res, i, Gate(2, 0.6))]
        answer = cite(q.text, kept, tiny_eval.corpus, Gate(2, 0.6))
        expected = int(fake_encoder.count_tokens([answer.prompt])[0]) if isinstance(answer, Answer) else 0
        assert got[i] == expected
    assert (prompt_tokens(tiny_eval, "C/dense", fake_encoder, Gate(cut=0.0)) == 0).all()  # nothing passes: no prompt
    assert (prompt_tokens(tiny_eval, "C/dense", fake_encoder, Gate(2, 1.01)) > 0).all()


def test_cost_rows_on_the_tiny_corpus(tiny_eval, fake_encoder):
    rows = costs(tiny_eval, fake_encoder, Gate(2, 0.6, 2), sample=4)
    assert [r.config for r in rows] == [c.label for c in tiny_eval.results]
    for r in rows:
        assert r.latency_queries == 4
        assert np.isfinite(r.latency_median_ms) and 0 <= r.latency_median_ms <= r.latency_p95_ms
        assert r.build_s >= 0 and r.build_basis
        tokens = tiny_eval.indexes["C"].report.audit.total_tokens
        assert r.embedded_tokens == (0 if r.config == "C/bm25" else tokens)
        assert r.prompt_tokens == pytest.approx(prompt_tokens(tiny_eval, r.config, fake_encoder, Gate(2, 0.6)).mean())
    on = pareto([r.recall.estimate for r in rows], [r.latency_median_ms for r in rows])
    assert [r.pareto_latency for r in rows] == on.tolist()
    assert any(r.pareto_latency for r in rows) and any(r.pareto_prompt for r in rows)
    table = cost_rows(rows)
    assert {"ms/query median", "ms/query p95", "prompt tokens/query", "build s"} <= set(table[0])
    assert {"platform", "cpus", "python"} <= set(machine())


def test_build_time_charges_what_each_spec_builds(tiny_corpus, tiny_truth, fake_encoder):
    """Cost asks the registry: a quantised dense variant is not charged a BM25 index, a text-only plugin
    (``header-bm25``, ``word-rerank`` of tests/helpers/plugin_example.py) no embedding, hybrid and rerankers both."""
    import plugin_example  # noqa: F401 - registers header-bm25 and word-rerank

    from ragdiag.evaluation.evaluate import evaluate

    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C",
                  retrievers="dense,bm25,hybrid,dense-int8,header-bm25,word-rerank")
    rows = {r.config: r for r in costs(ev, fake_encoder, Gate(2, 0.6, 2), sample=2)}
    covers = {c: r.build_covers for c, r in rows.items()}
    assert covers == {
        "C/dense": ("chunking", "embedding"),
        "C/bm25": ("chunking", "bm25"),
        "C/hybrid": ("chunking", "embedding", "bm25"),
        "C/dense-int8": ("chunking", "embedding"),
        "C/header-bm25": ("chunking", "bm25"),
        "C/word-rerank": ("chunking", "bm25"),
    }
    tokens = ev.indexes["C"].report.audit.total_tokens
    assert {c: r.embedded_tokens for c, r in rows.items()} == {
        c: (tokens if "embedding" in covers[c] else 0) for c in covers}
    assert {c for c, r in rows.items() if r.build_basis == "measured"} == {"C/bm25", "C/header-bm25", "C/word-rerank"}
    assert rows["C/word-rerank"].latency_queries == 2  # timed without query vectors: it embeds nothing
    assert cost_rows([rows["C/hybrid"]])[0]["build covers"] == "chunking + embedding + bm25"


@pytest.mark.parametrize("n", range(1, 41))
def test_median_interval_against_the_binomial_oracle(n):
    """[x_(j), x_(n+1-j)] with the largest j whose coverage 1 - 2 P(Bin(n, 1/2) <= j - 1) is >= 95%
    (the range below n = 6), checked with scipy's binomial distribution; values 1..n shuffled, so a bound
    is its rank."""
    from scipy.stats import binom

    from ragdiag.analyses.cost import median_interval

    values = np.random.default_rng(n).permutation(np.arange(1.0, n + 1))
    low, high, coverage = median_interval(values)
    reach = [j for j in range(1, (n + 1) // 2 + 1) if 1 - 2 * binom.cdf(j - 1, n, 0.5) >= 0.95]
    j = max(reach, default=1)
    assert (low, high) == (j, n + 1 - j)
    assert coverage == pytest.approx(1 - 2 * binom.cdf(j - 1, n, 0.5))
    assert low <= np.median(values) <= high


def test_the_latency_interval_and_sample_are_in_each_row(tiny_eval, fake_encoder):
    from ragdiag.analyses.cost import median_interval

    rows = costs(tiny_eval, fake_encoder, Gate(2, 0.6, 2), sample=6)
    for r in rows:
        assert r.latency_queries == 6
        assert r.latency_low_ms <= r.latency_median_ms <= r.latency_high_ms
        assert r.latency_coverage == median_interval(np.zeros(6))[2] == 1 - 2 / 2**6  # the range of 6
        assert cost_rows([r])[0]["ms/query median low"] == round(r.latency_low_ms, 3)


def test_each_strategy_builds_its_bm25_once(tiny_eval, fake_encoder, monkeypatch):
    """The timed build is the index every configuration of the strategy is timed with: C/bm25 and C/hybrid
    (which fuses it) share it, so BM25 is built once, not once per configuration."""
    import ragdiag.retrieval.builtin as builtin

    built = []

    class Counting(builtin.BM25Retriever):
        def __init__(self, *args, **kwargs):
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(builtin, "BM25Retriever", Counting)
    rows = costs(tiny_eval, fake_encoder, Gate(2, 0.6, 2), sample=2)
    assert [r.config for r in rows] == ["C/dense", "C/bm25", "C/hybrid"]
    assert len(built) == 1


def test_costs_report_their_progress(tiny_eval, fake_encoder):
    events = []
    costs(tiny_eval, fake_encoder, Gate(2, 0.6, 2), sample=2, progress=events.append)
    assert {e.stage for e in events} == {"time"}
    assert [(e.done, e.total) for e in events] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert [e.label for e in events[:3]] == ["timing C/dense", "timing C/bm25", "timing C/hybrid"]


def test_unpriced_rows_are_priced_at_the_gate_later(tiny_eval, fake_encoder):
    gate = Gate(2, 0.6, 2)
    rows = costs(tiny_eval, fake_encoder, gate, sample=2, priced=False)
    assert all(np.isnan(r.prompt_tokens) and not r.pareto_prompt for r in rows)
    priced = at_gate(rows, tiny_eval, fake_encoder, gate)
    for r in priced:
        assert r.prompt_tokens == pytest.approx(prompt_tokens(tiny_eval, r.config, fake_encoder, gate).mean())


def test_extrapolated_embedding_is_the_runs_rate_times_the_wordpieces_read(tiny_eval, fake_encoder):
    """Vectors from the store (no embedding timing in the evaluation): the strategy is charged the run's rate
    per wordpiece times the wordpieces its chunks put in the window (the audit's counts cut at 40 here)."""
    from dataclasses import replace

    from ragdiag.analyses.cost import EmbeddingRate, embedding_rate, measure_build

    ev = replace(tiny_eval, timings={})
    rate = EmbeddingRate(0.001, 32, 1000)
    audit = ev.indexes["C"].report.audit
    read = int(np.minimum(audit.tokens, audit.max_seq_length).sum())
    b = measure_build(ev, "C", fake_encoder, rate=rate)
    assert b["embedding"] == pytest.approx(0.001 * read)
    assert b["basis"] == "embedding extrapolated from 32 chunks (1,000 wordpieces)"
    measured = embedding_rate(ev, fake_encoder, ["C"], sample=3)
    assert measured.chunks == 3 and measured.seconds_per_token > 0


def test_a_reranker_is_timed_on_its_sample_with_token_vectors_kept_in_the_memo(tiny_corpus, tiny_truth,
                                                                              fake_encoder, tmp_path, monkeypatch):
    from ragdiag.analyses.cost import TOKENS_MEMO, _keep_tokens, measure_latency
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.index.store.memo import Memo
    from ragdiag.retrieval.rerank import MaxSimScorer

    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C",
                  retrievers="dense,bm25,hybrid,rerank-maxsim")
    chunk_texts = {c.embed_text for c in ev.indexes["C"].chunks}
    prepared = []
    real = fake_encoder.token_embeddings

    def counting(texts, **kw):
        if set(texts) <= chunk_texts:
            prepared.append(len(texts))
        return real(texts, **kw)

    monkeypatch.setattr(fake_encoder, "token_embeddings", counting)
    memo = Memo(tmp_path)
    first = measure_latency(ev, "C/rerank-maxsim", fake_encoder, sample=4, rerank_sample=2, memo=memo)
    assert first.size == 2 and len(prepared) == 1  # the first 2 of the sample of 4; the heads embedded once
    assert len(list((tmp_path / "memo" / TOKENS_MEMO).glob("*.npz"))) == 1
    again = measure_latency(ev, "C/rerank-maxsim", fake_encoder, sample=4, rerank_sample=2, memo=memo)
    assert again.size == 2 and len(prepared) == 1  # read from the memo: no model work
    assert measure_latency(ev, "C/dense", fake_encoder, sample=4, rerank_sample=2).size == 4

    texts = sorted(chunk_texts)[:3]
    kept = MaxSimScorer(fake_encoder)
    _keep_tokens(kept, texts, fake_encoder, memo)  # computed, then stored
    read = MaxSimScorer(fake_encoder)
    _keep_tokens(read, texts, fake_encoder, memo)  # read back
    for t, v in zip(texts, real(texts)):
        assert np.array_equal(read._tokens[t], v.astype(np.float16))
        assert np.array_equal(kept._tokens[t], read._tokens[t])
