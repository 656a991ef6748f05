"""Hsu's constant from the pooled permutation distribution, and ``compare X X``'s interval."""

from __future__ import annotations

import numpy as np
import pytest

import ragdiag.analyses.compare.simultaneous as sim
from ragdiag.analyses.compare.simultaneous import with_best


def _values(seed=3, systems=3, questions=6):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.3, 0.8, size=questions)
    return (rng.random((systems, questions)) < p).astype(float), [f"q{i}" for i in range(questions)]


def test_monte_carlo_constant_is_close_to_the_exact_one(monkeypatch):
    # 3 systems, 6 questions: 6^6 = 46,656 arrangements, enumerated; then the same by 20,000 seeded shuffles
    v, g = _values()
    exact = with_best(v, g)
    assert exact.method.startswith("exact")
    monkeypatch.setattr(sim, "EXACT_LIMIT", 0)
    mc = with_best(v, g, draws=20_000)
    assert mc.method.startswith("monte carlo")
    # pooled over the 3 possible bests: 60,003 values of one distribution; the exact quantile is a support point
    assert mc.critical == pytest.approx(exact.critical, abs=0.15)


def test_pooled_constant_is_never_above_the_largest_per_system_quantile(monkeypatch):
    """The largest of k Monte Carlo quantiles of one distribution is biased up; the pooled one is not."""
    monkeypatch.setattr(sim, "EXACT_LIMIT", 0)
    v, g = _values(seed=5, systems=6, questions=30)
    r = with_best(v, g, draws=2_000)
    Y, _ = sim._question_sums(v.astype(np.int64), np.asarray(g, dtype=object))
    import itertools

    pairs = np.array(list(itertools.combinations(range(6), 2)))
    stats, method = sim.pair_null(Y, [list(range(6))], pairs, draws=2_000)
    rival = np.full((stats.shape[0], 6), -np.inf)
    for p, (i, j) in enumerate(pairs.tolist()):
        rival[:, j] = np.maximum(rival[:, j], stats[:, p])
        rival[:, i] = np.maximum(rival[:, i], -stats[:, p])
    per_best = [sim._from_samples(rival[:, b], method, 0.05).critical for b in range(6)]
    assert min(per_best) <= r.critical <= max(per_best)


def test_compare_a_configuration_with_itself_prints_its_interval(corpus, truth):
    from fakes import FakeEncoder

    from ragdiag.analyses.compare import compare
    from ragdiag.evaluation.evaluate import evaluate

    ev = evaluate(corpus, truth, encoder=FakeEncoder(), strategies="C", retrievers="bm25")
    c = compare(ev, "C/bm25", "C/bm25")
    assert c.interval.estimate == 0 and c.interval.low == pytest.approx(-c.interval.high)
    assert round(100 * c.interval.high, 1) == 10.7  # 0 discordant of 32 questions: the score interval, not 0
