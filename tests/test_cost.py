"""Tests for ragdiag.cost: prompt tokens, the Pareto front, and the measured rows (values, never timings)."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.cost import cost_rows, costs, machine, pareto, prompt_tokens

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
    from ragdiag.citations import Answer, cite
    from ragdiag.threshold import gate

    res = tiny_eval.result("C/dense")
    chunks = tiny_eval.indexes["C"].chunks
    got = prompt_tokens(tiny_eval, "C/dense", fake_encoder, cut=0.6, keep=2)
    for i, q in enumerate(tiny_eval.queries):
        kept = [(chunks[p], d) for p, d in gate(res, i, cut=0.6, keep=2)]
        answer = cite(q.text, kept, tiny_eval.corpus, cut=0.6, keep=2)
        expected = int(fake_encoder.count_tokens([answer.prompt])[0]) if isinstance(answer, Answer) else 0
        assert got[i] == expected
    assert (prompt_tokens(tiny_eval, "C/dense", fake_encoder, cut=0.0) == 0).all()  # nothing passes: no prompt
    assert (prompt_tokens(tiny_eval, "C/dense", fake_encoder, cut=1.01, keep=2) > 0).all()


def test_cost_rows_on_the_tiny_corpus(tiny_eval, fake_encoder):
    rows = costs(tiny_eval, fake_encoder, sample=4, cut=0.6, keep=2, k=2)
    assert [r.config for r in rows] == [c.label for c in tiny_eval.results]
    for r in rows:
        assert r.latency_queries == 4
        assert np.isfinite(r.latency_median_ms) and 0 <= r.latency_median_ms <= r.latency_p95_ms
        assert r.build_s >= 0 and r.build_basis
        tokens = tiny_eval.indexes["C"].report.audit.total_tokens
        assert r.embedded_tokens == (0 if r.config == "C/bm25" else tokens)
        assert r.prompt_tokens == pytest.approx(prompt_tokens(tiny_eval, r.config, fake_encoder, cut=0.6,
                                                              keep=2).mean())
    on = pareto([r.recall.estimate for r in rows], [r.latency_median_ms for r in rows])
    assert [r.pareto_latency for r in rows] == on.tolist()
    assert any(r.pareto_latency for r in rows) and any(r.pareto_prompt for r in rows)
    table = cost_rows(rows)
    assert {"ms/query median", "ms/query p95", "prompt tokens/query", "build s"} <= set(table[0])
    assert {"platform", "cpus", "python"} <= set(machine())
