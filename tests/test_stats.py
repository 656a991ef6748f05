"""Tests for ragdiag.stats (scipy is used only as an oracle here)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from ragdiag.stats import (
    Interval,
    SignTest,
    holm,
    proportion,
    sign_test,
    sign_test_counts,
    wilson,
)

FAST = settings(max_examples=60, deadline=None)


# ---------------------------------------------------------------------------
# Wilson interval
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (38, 64, 0.471, 0.705),
        (53, 64, 0.718, 0.901),
    ],
)
def test_wilson_study_vectors(k, n, low, high):
    ci = wilson(k, n)
    assert round(ci.low, 3) == low
    assert round(ci.high, 3) == high
    assert ci.estimate == k / n
    assert (ci.successes, ci.trials) == (k, n)


def test_interval_str():
    assert str(wilson(38, 64)) == "0.594 [0.471, 0.705]"


@pytest.mark.parametrize(
    ("confidence", "ns"),
    [
        (0.95, range(1, 31)),
        (0.5, (1, 2, 3, 8, 17)),
        (0.9, (1, 2, 3, 8, 17)),
        (0.99, (1, 2, 3, 8, 17)),
    ],
)
def test_wilson_matches_scipy(confidence, ns):
    # scipy's method="wilson" is Wilson without continuity correction
    for n in ns:
        for k in range(n + 1):
            ref = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
            ci = wilson(k, n, confidence=confidence)
            assert ci.low == pytest.approx(ref.low, abs=1e-9), (k, n)
            assert ci.high == pytest.approx(ref.high, abs=1e-9), (k, n)
    for k, n in [(0, 500), (1, 1000), (437, 1000), (999, 1000), (5000, 10007)]:
        ref = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
        ci = wilson(k, n, confidence=confidence)
        assert ci.low == pytest.approx(ref.low, abs=1e-9)
        assert ci.high == pytest.approx(ref.high, abs=1e-9)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000, 10**6])
def test_wilson_exact_endpoints(n):
    assert wilson(0, n).low == 0.0
    assert wilson(n, n).high == 1.0
    assert wilson(0, n).high < 1.0
    assert wilson(n, n).low > 0.0


def test_wilson_no_trials():
    ci = wilson(0, 0)
    assert math.isnan(ci.estimate)
    assert (ci.low, ci.high, ci.successes, ci.trials) == (0.0, 1.0, 0, 0)


def test_wilson_accepts_numpy_integers():
    assert wilson(np.int64(38), np.int32(64)) == wilson(38, 64)


def test_interval_is_frozen():
    ci = wilson(1, 2)
    with pytest.raises(AttributeError):
        ci.low = 0.0  # type: ignore[misc]
    assert isinstance(ci, Interval)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((-1, 5), {}, "successes must be a non-negative integer"),
        ((1, -5), {}, "trials must be a non-negative integer"),
        ((6, 5), {}, r"successes \(6\) cannot exceed trials \(5\)"),
        ((2.0, 5), {}, "successes must be a non-negative integer"),
        ((2, 5.5), {}, "trials must be a non-negative integer"),
        ((True, 5), {}, "successes must be a non-negative integer"),
        ((2, 5), {"confidence": 0.0}, "strictly between 0 and 1"),
        ((2, 5), {"confidence": 1.0}, "strictly between 0 and 1"),
        ((2, 5), {"confidence": 95}, "strictly between 0 and 1"),
        ((2, 5), {"confidence": float("nan")}, "strictly between 0 and 1"),
    ],
)
def test_wilson_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        wilson(*args, **kwargs)


def test_wilson_confidence_is_keyword_only():
    with pytest.raises(TypeError):
        wilson(1, 2, 0.9)  # type: ignore[misc]


@st.composite
def counts(draw, max_n=2000):
    n = draw(st.integers(1, max_n))
    k = draw(st.integers(0, n))
    return k, n


@FAST
@given(counts(), st.floats(0.01, 0.999))
def test_wilson_contains_estimate_within_unit_interval(kn, confidence):
    k, n = kn
    ci = wilson(k, n, confidence=confidence)
    assert 0.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


@FAST
@given(st.integers(0, 20), st.integers(1, 20), st.integers(2, 50))
def test_wilson_narrows_with_more_trials(k, extra, factor):
    # same proportion k/n, n scaled up by `factor` -> strictly narrower interval
    n = k + extra
    small = wilson(k, n)
    large = wilson(k * factor, n * factor)
    assert large.estimate == pytest.approx(small.estimate)
    assert large.high - large.low < small.high - small.low


@FAST
@given(counts(200))
def test_wilson_widens_with_confidence(kn):
    k, n = kn
    lo, hi = wilson(k, n, confidence=0.9), wilson(k, n, confidence=0.99)
    assert hi.low <= lo.low and hi.high >= lo.high


def test_proportion():
    hits = [True] * 38 + [False] * 26
    assert proportion(hits) == wilson(38, 64)
    assert proportion(np.array(hits)) == wilson(38, 64)
    assert proportion([1, 0, 1]) == wilson(2, 3)
    assert proportion([]) == proportion(np.array([], dtype=bool))
    assert proportion([True, False], confidence=0.9) == wilson(1, 2, confidence=0.9)


@pytest.mark.parametrize(
    ("hits", "match"),
    [
        ([0.3, 1.0], "booleans"),
        ([True, float("nan")], "NaN"),
        ([[True, False]], "one-dimensional"),
        (["yes", "no"], "booleans"),
    ],
)
def test_proportion_bad_input(hits, match):
    with pytest.raises(ValueError, match=match):
        proportion(hits)


# ---------------------------------------------------------------------------
# sign test
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wins", "losses", "p", "digits"),
    [
        (18, 3, 0.0015, 4),
        (12, 2, 0.0129, 4),
        (8, 6, 0.79, 2),
        (9, 7, 0.80, 2),
        (10, 3, 0.09, 2),
        (10, 6, 0.45, 2),
    ],
)
def test_sign_test_study_vectors(wins, losses, p, digits):
    r = sign_test_counts(wins, losses)
    assert round(r.p, digits) == p
    assert sign_test_counts(losses, wins).p == r.p


def test_sign_test_matches_scipy():
    # every (w, l) in 0..30 x 0..30; the Bin(n, 1/2) null is symmetric, so one
    # scipy call per unordered pair serves as the oracle for both orders
    for w in range(31):
        for l_ in range(w, 31):
            if w + l_ == 0:
                continue
            ref = binomtest(w, w + l_, 0.5, alternative="two-sided").pvalue
            assert sign_test_counts(w, l_).p == pytest.approx(ref, rel=0, abs=1e-12), (w, l_)
            assert sign_test_counts(l_, w).p == pytest.approx(ref, rel=0, abs=1e-12), (l_, w)


def test_sign_test_large_counts_are_exact():
    # 2 * P(X <= 0) for X ~ Bin(2000, 1/2) underflows nowhere near zero in
    # exact arithmetic; the float conversion is the only rounding.
    assert sign_test_counts(2000, 0).p == 2.0 * 0.5**2000
    assert sign_test_counts(5000, 0).p == 0.0  # below the smallest float
    assert sign_test_counts(600, 400).p == pytest.approx(
        binomtest(600, 1000).pvalue, rel=1e-9
    )


def test_sign_test_no_discordant_pairs():
    r = sign_test_counts(0, 0, 12)
    assert r.p == 1.0 and r.n_discordant == 0 and r.ties == 12


def test_sign_test_result():
    r = sign_test_counts(18, 3, 43)
    assert isinstance(r, SignTest)
    assert (r.wins, r.losses, r.ties, r.n_discordant) == (18, 3, 43, 21)
    assert str(r) == "+18/-3 (ties 43), p = 0.0015"
    assert str(sign_test_counts(40, 0)) == "+40/-0 (ties 0), p = 1.8e-12"
    with pytest.raises(AttributeError):
        r.p = 0.5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((-1, 3), "wins must be a non-negative integer"),
        ((1, -3), "losses must be a non-negative integer"),
        ((1, 3, -2), "ties must be a non-negative integer"),
        ((1.5, 3), "wins must be a non-negative integer"),
        ((1, "3"), "losses must be a non-negative integer"),
    ],
)
def test_sign_test_counts_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        sign_test_counts(*args)


@FAST
@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, 50))
def test_sign_test_symmetric_and_in_unit_interval(w, l_, t):
    r = sign_test_counts(w, l_, t)
    assert 0.0 <= r.p <= 1.0
    assert sign_test_counts(l_, w, t).p == r.p
    if w == l_:
        assert r.p == 1.0


def test_sign_test_boolean_arrays():
    a = [True, True, False, False, True, False, True]
    b = [False, True, True, False, False, False, True]
    # wins at 0, 4; loss at 2; ties at 1, 3, 5, 6
    expected = sign_test_counts(2, 1, 4)
    assert sign_test(a, b) == expected
    assert sign_test(np.array(a), np.array(b)) == expected
    assert sign_test(np.array(a, dtype=int), b) == expected


def test_sign_test_numeric_arrays():
    a = [1.0, 0.5, 0.0, 1 / 3, 0.25, 1.0]
    b = [0.5, 0.5, 1.0, 0.2, 0.5, 0.0]
    # wins at 0, 3, 5; losses at 2, 4; tie at 1
    r = sign_test(a, b)
    assert (r.wins, r.losses, r.ties) == (3, 2, 1)
    assert r == sign_test_counts(3, 2, 1)
    assert sign_test(np.array(a), np.array(b)) == r


@FAST
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.2, 0.5, 1.0]), st.sampled_from([0.0, 0.2, 0.5, 1.0])),
        max_size=60,
    )
)
def test_sign_test_counts_by_hand(pairs):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    wins = sum(x > y for x, y in pairs)
    losses = sum(x < y for x, y in pairs)
    r = sign_test(a, b)
    assert (r.wins, r.losses, r.ties) == (wins, losses, len(pairs) - wins - losses)
    assert sign_test(b, a) == sign_test_counts(losses, wins, r.ties)


def test_sign_test_empty():
    assert sign_test([], []) == SignTest(0, 0, 0, 1.0)


def test_sign_test_length_mismatch_names_both_lengths():
    with pytest.raises(ValueError, match=r"len\(a\) = 3 and len\(b\) = 2"):
        sign_test([1, 0, 1], [1, 0])


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        ([1.0, float("nan")], [1.0, 0.0], "a contains NaN"),
        ([1.0, 0.0], [np.nan, 0.0], "b contains NaN"),
        ([[1.0, 0.0]], [[1.0, 0.0]], "one-dimensional"),
        (["x", "y"], ["x", "z"], "booleans .* or real numbers"),
    ],
)
def test_sign_test_bad_input(a, b, match):
    with pytest.raises(ValueError, match=match):
        sign_test(a, b)


# ---------------------------------------------------------------------------
# Holm
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "adjusted"),
    [
        ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
        ([0.05], [0.05]),
        ([0.2, 0.4, 0.9], [0.6, 0.8, 0.9]),
        ([0.5, 0.6], [1.0, 1.0]),
        ([0.01, 0.01, 0.5], [0.03, 0.03, 0.5]),
        ([0.0, 1.0, 0.02], [0.0, 1.0, 0.04]),
    ],
)
def test_holm_table(raw, adjusted):
    out = holm(raw)
    assert isinstance(out, np.ndarray) and out.dtype == float
    np.testing.assert_allclose(out, adjusted, rtol=0, atol=1e-12)


def test_holm_empty_and_array_input():
    out = holm([])
    assert isinstance(out, np.ndarray) and out.shape == (0,) and out.dtype == float
    np.testing.assert_allclose(holm(np.array([0.01, 0.04])), [0.02, 0.04])
    np.testing.assert_allclose(holm((0, 1)), [0.0, 1.0])


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ([0.1, -0.01], r"pvalues\[1\] = -0.01"),
        ([1.5], r"\[0, 1\]"),
        ([0.1, float("nan")], r"pvalues\[1\] = nan"),
        ([[0.1, 0.2]], "one-dimensional"),
        (["0.1"], "real numbers"),
    ],
)
def test_holm_bad_input(raw, match):
    with pytest.raises(ValueError, match=match):
        holm(raw)


def _holm_rejects(pvalues, alpha):
    """Reference step-down procedure: reject H_(i) while (m - i) p_(i) <= alpha."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    rejected = [False] * m
    for rank, i in enumerate(order):
        if (m - rank) * pvalues[i] <= alpha:
            rejected[i] = True
        else:
            break
    return rejected


pvals = st.lists(st.floats(0.0, 1.0, allow_nan=False), max_size=25)


@FAST
@given(pvals)
def test_holm_properties(raw):
    adj = holm(raw)
    assert adj.shape == (len(raw),)
    assert np.all(adj >= np.asarray(raw, dtype=float))
    assert np.all(adj <= 1.0)
    sorted_adj = adj[np.argsort(raw, kind="stable")]
    assert np.all(np.diff(sorted_adj) >= 0)


@FAST
@given(pvals, st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.2]))
def test_holm_adjusted_matches_procedure(raw, alpha):
    assert list(holm(raw) <= alpha) == _holm_rejects(raw, alpha)


@FAST
@given(pvals)
def test_holm_permutation_equivariant(raw):
    perm = np.random.default_rng(len(raw)).permutation(len(raw))
    np.testing.assert_array_equal(holm(np.asarray(raw)[perm]), holm(raw)[perm])
