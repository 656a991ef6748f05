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
    (``header-bm25``, ``word-rerank`` of tests/plugin_example.py) no embedding, hybrid and rerankers both."""
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
