"""The regression gate's statistics checked by seeded simulations of hundreds of data sets (slow; the rest of
``test_regression_stats.py``'s checks run in the fast loop)."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.present.regression.stats import false_pass_rate, paired_gate


@pytest.mark.slow
@pytest.mark.parametrize("units, phrasings, strict", [(32, 2, False), (32, 1, True), (60, 2, False)])
def test_false_pass_rate_agrees_with_a_simulation_of_the_gate(units, phrasings, strict):
    # candidates truly 5 points worse: each question lost whole with chance 0.05, never won; the gate itself decides
    rng = np.random.default_rng(units + phrasings)
    groups = [f"q{i // phrasings}" for i in range(units * phrasings)]
    base = [1] * (units * phrasings)
    passed = 0
    runs = 250
    for _ in range(runs):
        lost = np.repeat(rng.random(units) < 0.05, phrasings)
        passed += paired_gate(base, (~lost).astype(int).tolist(), groups, strict=strict).verdict == "pass"
    expected = false_pass_rate((phrasings,) * units, 0.05, 0.05, strict=strict)
    assert abs(passed / runs - expected) <= 3 * np.sqrt(expected * (1 - expected) / runs) + 0.01


@pytest.mark.slow
@pytest.mark.parametrize("p_loss", [0.1, 0.2])
def test_worse_test_under_a_skewed_difference_of_mean_zero(p_loss):
    # the worse test is a sign-flip test: it tests that each question's difference is as likely up as down, not only
    # that the mean is 0. Against a candidate that loses one phrasing on a share p_loss of questions and wins both on
    # half as many (mean difference exactly 0, skewed), it fails a little more often than alpha, as its note says
    rng = np.random.default_rng(int(100 * p_loss))
    n, runs, fails = 32, 600, 0
    groups = np.repeat([f"q{i}" for i in range(n)], 2)
    for _ in range(runs):
        u = rng.random(n)
        base = (rng.random((n, 2)) < 0.6).astype(int)
        cand = base.copy()
        lose, win = u < p_loss, (u >= p_loss) & (u < 1.5 * p_loss)
        base[lose, 0], cand[lose, 0] = 1, 0  # d = -1
        base[win], cand[win] = 0, 1  # d = +2
        fails += paired_gate(base.ravel(), cand.ravel(), groups).verdict == "fail"
    print(p_loss, fails / runs)
    assert fails / runs <= 0.08, fails / runs  # about 0.05-0.06 (the note: "about 6% at 5%")
