"""The pool curve (ragdiag.authoring.pool_curve): nested subsets of the chunks, a log-linear fit, its refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragdiag.authoring.pool_curve import MAX_EXTRAPOLATION, PoolPoint, fit_log_linear, subset_ranks


@pytest.mark.parametrize("distances, holders, keep, ranks", [
    # one query, chunks 0..3; the holder is chunk 2 (0.2); chunks 0 (0.1) and 3 (0.05) are closer
    ([[0.1, 0.3, 0.2, 0.05]], [[0, 0, 1, 0]], [1, 1, 1, 1], [3]),
    ([[0.1, 0.3, 0.2, 0.05]], [[0, 0, 1, 0]], [1, 1, 0, 0], [2]),  # the holder is kept even when "left out"
    ([[0.1, 0.3, 0.2, 0.05]], [[0, 0, 1, 0]], [0, 1, 1, 0], [1]),
    ([[0.1, 0.3, 0.2, 0.05]], [[0, 1, 1, 0]], [1, 1, 1, 1], [3]),  # the closest of two holders counts
    ([[0.2, 0.2]], [[0, 1]], [1, 1], [1]),  # a tie is not closer: the holder keeps its place
    ([[0.1, 0.3]], [[0, 0]], [1, 1], [0]),  # no holder (a destroyed needle): never found
])
def test_subset_ranks_table(distances, holders, keep, ranks):
    got, best = subset_ranks(np.array(distances), np.array(holders, dtype=bool), np.array(keep, dtype=bool))
    assert got.tolist() == ranks
    assert (ranks[0] == 0) == math.isinf(best[0])


def _points(rates, sizes=(100, 250, 500, 1000), fractions=(0.1, 0.25, 0.5, 1.0), half=0.02, noise=()):
    """One measure's points; the whole corpus (fraction 1) is one observation, repeated in every draw."""
    out = []
    for i, (f, s, r) in enumerate(zip(fractions, sizes, rates)):
        draws = (r,) * 3 if not noise or f == 1.0 else tuple(r + e for e in noise[i])
        out.append(PoolPoint("R@4", f, s, float(np.mean(draws)), r - half, r + half, draws))
    return out


def test_a_log_linear_curve_is_extrapolated_with_its_prediction_interval():
    # rate = 1.2 - 0.1 ln(size), with draws scattered by +/-0.01 around it
    sizes = (100, 250, 500, 1000)
    rates = [1.2 - 0.1 * math.log(s) for s in sizes]
    pts = _points(rates, noise=[(-0.01, 0.0, 0.01)] * 4)
    fit = fit_log_linear(pts, at_size=10_000, corpus_size=1000)
    assert fit.refused is None
    assert fit.slope == pytest.approx(-0.1) and fit.intercept == pytest.approx(1.2)
    assert fit.estimate == pytest.approx(1.2 - 0.1 * math.log(10_000))
    assert fit.low < fit.estimate < fit.high
    # 10 observations (3 draws at each of 3 sizes, the whole corpus once): residuals +/-0.01 at 3 sizes, so
    # s^2 = 3 * 2 * 0.01^2 / 8; the variance adds the draws' (t with 8 df, the leverage at 10,000) and the
    # questions' (the whole corpus's interval: +/-0.02)
    from scipy.stats import t

    X = np.column_stack([np.ones(10), np.r_[np.repeat(np.log(sizes[:3]), 3), math.log(sizes[3])]])
    x0 = np.array([1.0, math.log(10_000)])
    s2 = 3 * 2 * 0.01 ** 2 / 8
    half = math.sqrt(t.ppf(0.975, 8) ** 2 * s2 * (1 + x0 @ np.linalg.inv(X.T @ X) @ x0) + 0.02 ** 2)
    assert (fit.high - fit.low) / 2 == pytest.approx(half, rel=1e-6)


def test_a_bending_curve_is_refused_with_the_reason():
    # flat, then a cliff: 0.90, 0.89, 0.88, then 0.40 at the whole corpus; intervals +/- 2 points
    fit = fit_log_linear(_points([0.90, 0.89, 0.88, 0.40]), at_size=5000, corpus_size=1000)
    assert fit.estimate is None and fit.refused.startswith("the curve is not log-linear within its intervals")
    # the same three first sizes alone are a line: no refusal
    assert fit_log_linear(_points([0.90, 0.89, 0.88, 0.40]), at_size=5000, corpus_size=1000,
                          max_fraction=0.5).refused is None


def test_extrapolation_past_100x_is_refused():
    pts = _points([0.9, 0.8, 0.7, 0.6], sizes=(10, 100, 1000, 10000))
    ok = fit_log_linear(pts, at_size=MAX_EXTRAPOLATION * 10000, corpus_size=10000)
    far = fit_log_linear(pts, at_size=MAX_EXTRAPOLATION * 10000 + 1, corpus_size=10000)
    assert ok.refused is None and ok.estimate == pytest.approx(0.9 - 0.1 * 5)
    assert far.estimate is None and "more than 100 times the corpus" in far.refused
    assert "fewer than three" in fit_log_linear(pts[:2], at_size=100).refused
