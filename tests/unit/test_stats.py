"""Tests for ragdiag.core.stats (scipy is used only as an oracle here)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from ragdiag.core.words import rate_text
from ragdiag.core.stats import (
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


def test_interval_str_is_the_one_rate_shape():
    assert str(wilson(38, 64)) == "59% (47–71)" == rate_text(wilson(38, 64))


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
    assert r.p == 1.0 and r.wins + r.losses == 0 and r.ties == 12


def test_sign_test_result():
    r = sign_test_counts(18, 3, 43)
    assert isinstance(r, SignTest)
    assert (r.wins, r.losses, r.ties) == (18, 3, 43)
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


# ---------------------------------------------------------------------------
# questions as the unit (ragdiag.analyses.compare)
# ---------------------------------------------------------------------------

from ragdiag.analyses.compare.paired import (Difference, QuestionTest, bootstrap_difference, paired_test, question_differences,
                                    sign_flip_test, verdict, verdict_status)
from ragdiag.analyses.compare.intervals import (clustered_mean, clustered_rate, clustered_wilson, questions_needed,
                                       rate_interval, upper_bound_words)


@pytest.mark.parametrize(
    ("wins", "losses", "p", "digits"),
    [(18, 3, 0.0015, 4), (12, 2, 0.0129, 4), (8, 6, 0.79, 2), (9, 7, 0.80, 2), (10, 3, 0.09, 2), (10, 6, 0.45, 2)],
)
def test_sign_flip_with_one_phrasing_is_the_exact_sign_test(wins, losses, p, digits):
    # P = 1: d in {-1, 0, 1}; the study's sign-test vectors hold, and the value equals sign_test_counts exactly
    d = [1] * wins + [-1] * losses + [0] * 5
    assert round(sign_flip_test(d), digits) == p
    assert sign_flip_test(d) == sign_test_counts(wins, losses).p


def test_sign_flip_equals_sign_test_for_every_small_count():
    for w in range(16):
        for l_ in range(16):
            assert sign_flip_test([1] * w + [-1] * l_) == sign_test_counts(w, l_).p, (w, l_)


# P = 2 vectors: per-question differences in -2..2, worked by hand and checked against scipy.
#   [2, 2, 1, -1]: magnitudes 2, 2, 1, 1 -> 16 sign patterns; |S| >= 4 for S in {6, 4, 4, -4, -4, -6}: 6/16
#   [2, 2, 2]: only (+,+,+) and (-,-,-) reach |6|: 2/8
#   [2, -2, 1]: observed 1; every pattern has |S| >= 1 (sums are odd): 1
#   [2, 1, 1, 1]: observed 5 = the maximum: only all + and all -: 2/16
P2_VECTORS = [([2, 2, 1, -1, 0], 6 / 16), ([2, 2, 2], 2 / 8), ([2, -2, 1], 1.0), ([2, 1, 1, 1, 0, 0], 2 / 16)]


@pytest.mark.parametrize(("d", "p"), P2_VECTORS)
def test_sign_flip_p2_hand_vectors(d, p):
    assert sign_flip_test(d) == pytest.approx(p, abs=1e-15)


@pytest.mark.parametrize("seed", range(12))
def test_sign_flip_p2_matches_scipy_permutation_test(seed):
    from scipy.stats import permutation_test

    rng = np.random.default_rng(seed)
    d = rng.integers(-2, 3, size=int(rng.integers(3, 11)))
    ref = permutation_test((d,), np.sum, permutation_type="samples", alternative="two-sided",
                           n_resamples=np.inf).pvalue
    assert sign_flip_test(d) == pytest.approx(min(ref, 1.0), abs=1e-12), d.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_sign_flip_real_differences_match_scipy(seed):
    # reciprocal-rank differences: real numbers, enumerated exactly (meet in the middle)
    from scipy.stats import permutation_test

    rng = np.random.default_rng(100 + seed)
    rr = lambda n: np.where(rng.random(n) < 0.3, 0.0, 1.0 / rng.integers(1, 21, size=n))  # noqa: E731
    d = rr(9) - rr(9)
    ref = permutation_test((d,), np.sum, permutation_type="samples", alternative="two-sided",
                           n_resamples=np.inf).pvalue
    assert sign_flip_test(d) == pytest.approx(min(ref, 1.0), abs=1e-9)


@given(st.lists(st.integers(-3, 3), min_size=0, max_size=25))
@FAST
def test_sign_flip_invariants(d):
    p = sign_flip_test(d)
    assert 0.0 < p <= 1.0
    assert sign_flip_test([-x for x in d]) == p  # symmetric
    assert sign_flip_test(list(reversed(d))) == p  # order of questions does not matter
    assert sign_flip_test(d + [0, 0]) == p  # ties do not move it


def test_question_differences_and_paired_test_count_questions():
    # q1: both phrasings found by a only (+2); q2: one each way (0); q3: a finds one (+1); q4: b finds both (-2)
    a = [1, 1, 1, 0, 1, 0, 0, 0]
    b = [0, 0, 0, 1, 0, 0, 1, 1]
    g = ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"]
    assert question_differences(a, b, g).tolist() == [2, 0, 1, -2]
    t = paired_test(a, b, g)
    assert (t.wins, t.losses, t.ties, t.n_questions, t.phrasings) == (2, 1, 1, 4, 2)
    # magnitudes 2, 1, 2; observed |1|: sums of +/-2 +/-1 +/-2 are odd, all reach 1 -> p = 1
    assert t.p == 1.0
    assert t.difference.estimate == pytest.approx(1 / 8)  # (4 - 3) / 8 queries


def test_bootstrap_difference_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(3)
    a, b = rng.random(40) < 0.7, rng.random(40) < 0.5
    g = np.repeat(np.arange(20), 2)
    r1, r2 = bootstrap_difference(a, b, g), bootstrap_difference(a, b, g)
    assert r1 == r2  # the fixed seed: same data, same interval
    assert r1.low <= r1.estimate <= r1.high
    assert r1.estimate == pytest.approx(a.mean() - b.mean())


def _correlated_hits(rng, draws, questions, phrasings, p, rho):
    """Hits with strongly correlated phrasings: with probability rho all phrasings copy one coin."""
    shared = rng.random((draws, questions)) < rho
    common = rng.random((draws, questions, 1)) < p
    own = rng.random((draws, questions, phrasings)) < p
    return np.where(shared[:, :, None], common, own)  # (draws, questions, phrasings), P(hit) = p


@pytest.mark.parametrize(("p", "rho"), [(0.6, 0.9), (0.8, 0.9)])
def test_clustered_interval_covers_where_per_query_wilson_falls_short(p, rho):
    # 2,000 seeded draws of 32 questions x 2 phrasings whose phrasings mostly agree; the true recall is p
    rng = np.random.default_rng(20261130)
    hits = _correlated_hits(rng, 2000, 32, 2, p, rho)
    _, low, high = clustered_wilson(hits.sum(axis=2), np.full(32, 2))
    covered = ((low <= p) & (p <= high)).mean()
    assert covered >= 0.94, covered
    # naive: Wilson on 64 "independent" queries (vectorised wilson, checked against stats.wilson below)
    k, n, z = hits.reshape(2000, -1).sum(axis=1), 64, 1.959963984540054
    centre, half = (k + z * z / 2) / (n + z * z), z * np.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    assert wilson(int(k[0]), n).low == pytest.approx(centre[0] - half[0], abs=1e-12)
    naive = ((centre - half <= p) & (p <= centre + half)).mean()
    assert naive < 0.91, naive  # clearly short of 95%
    # the scalar function gives the same bounds as the vectorised one
    iv = clustered_rate(hits[0].ravel(), np.repeat(np.arange(32), 2))
    assert (iv.low, iv.high) == pytest.approx((low[0], high[0]))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("rho", [0.0, 0.5, 1.0])
def test_clustered_wilson_covers_at_every_rate_and_correlation(p, rho):
    # 2,000 seeded draws of 32 questions x 2 phrasings; rho = share of questions whose phrasings copy one coin
    rng = np.random.default_rng(20261130)
    hits = _correlated_hits(rng, 2000, 32, 2, p, rho)
    _, low, high = clustered_wilson(hits.sum(axis=2), np.full(32, 2))
    covered = ((low <= p) & (p <= high)).mean()
    assert covered >= 0.935, covered  # 95% nominal; 2,000 draws give a standard error of 0.005
    # at zero events the upper bound is the exact one on the 32 questions, never 0
    zero = clustered_wilson(np.zeros((1, 32)), np.full(32, 2))
    assert zero[2][0] == pytest.approx(1 - 0.025 ** (1 / 32)) and zero[1][0] == 0.0


def _family_draw(rng, ps, questions, phrasings, shared):
    """Hits of len(ps) systems: on a share ``shared`` of questions every system reads one difficulty draw."""
    k = len(ps)
    u = rng.random((questions, 1, 1))
    own = rng.random((questions, phrasings, k))
    mix = rng.random((questions, 1, 1)) < shared
    z = np.where(mix, np.broadcast_to(u, own.shape), own)
    return (z < np.asarray(ps)).reshape(questions * phrasings, k).T.astype(float)


@pytest.mark.parametrize("shared", [0.0, 0.5, 0.9])
def test_simultaneous_intervals_cover_every_true_difference_at_once(shared):
    from ragdiag.analyses.compare import max_t

    # four systems of true recall 0.45, 0.5, 0.6, 0.7 on 32 questions x 2 phrasings; 300 seeded data sets, each
    # with its own max-T over the 6 pairs: all six intervals must hold their true difference together 95% of the time
    rng = np.random.default_rng(20261201)
    ps = [0.45, 0.5, 0.6, 0.7]
    pairs = list(itertools.combinations(range(4), 2))
    groups = np.repeat(np.arange(32), 2)
    held = 0
    for _ in range(300):
        rows, _ = max_t(_family_draw(rng, ps, 32, 2, shared), groups, pairs, draws=1000, seed=int(rng.integers(1 << 31)))
        held += all(r.low <= ps[r.a] - ps[r.b] <= r.high for r in rows)
    assert held / 300 >= 0.92, held / 300  # 95% nominal; the standard error of 300 draws is 0.013


def test_simultaneous_intervals_under_the_null_are_exact():
    from ragdiag.analyses.compare import max_t

    # identical systems (the null): the family rejects anything in at most alpha of the data sets, by
    # exchangeability; two blocks (as the chunking contrasts use) as well as one
    rng = np.random.default_rng(5)
    groups = np.repeat(np.arange(12), 2)
    wrong = 0
    for _ in range(200):
        v = _family_draw(rng, [0.5] * 4, 12, 2, 0.3)
        rows, _ = max_t(v, groups, [(0, 1), (2, 3)], blocks=[[0, 1], [2, 3]], draws=400,
                        seed=int(rng.integers(1 << 31)))
        wrong += any(r.low > 0 or r.high < 0 for r in rows)
        assert all((r.low > 0 or r.high < 0) == (r.p_adjusted < 0.05) for r in rows)
    assert wrong / 200 <= 0.05 + 0.035, wrong / 200


def test_clustered_rate_with_one_phrasing_is_wilson_with_t():
    iv = clustered_rate([1] * 20 + [0] * 12, list(range(32)))
    w = wilson(20, 32)
    assert iv.estimate == w.estimate and iv.low < w.low and iv.high > w.high  # t(31) > z
    assert iv.high - iv.low == pytest.approx(w.high - w.low, rel=0.1)
    assert clustered_rate([0, 0, 0, 0], ["a", "a", "b", "b"]).low == 0.0
    assert clustered_rate([1, 1, 1, 1], ["a", "a", "b", "b"]).high == 1.0


def test_clustered_mean_interval_for_mrr():
    rr = np.array([1.0, 1.0, 0.5, 0.5, 0.0, 0.0, 1 / 3, 1 / 3, 0.25, 0.25])
    iv = clustered_mean(rr, np.repeat(np.arange(5), 2))
    assert iv.estimate == pytest.approx(rr.mean())
    # identical phrasings: the interval is that of the 5 question means (t with 4 df)
    from scipy.stats import t as student

    q = rr[::2]
    half = student.ppf(0.975, 4) * q.std(ddof=1) / np.sqrt(5)
    assert (iv.low, iv.high) == pytest.approx((max(0, q.mean() - half), q.mean() + half))


@pytest.mark.parametrize(("count", "n", "low", "high"),
                         [(3, 30, 0.021, 0.265), (35, 64, 0.426, 0.663), (0, 30, 0.0, 0.116), (0, 21, 0.0, 0.161)])
def test_rate_interval_vectors(count, n, low, high):
    # 3 of 30 is a small count: the exact Clopper-Pearson interval (scipy's binomtest gives the same), wider
    # than Wilson's 0.035-0.256; 35 of 64 is Wilson's
    from scipy.stats import binomtest as bt

    iv = rate_interval(count, n)
    assert (round(iv.low, 3), round(iv.high, 3)) == (low, high)
    if 0 < count <= 4:
        exact = bt(count, n).proportion_ci(0.95, method="exact")
        assert (iv.low, iv.high) == pytest.approx((exact.low, exact.high), abs=1e-9)


def test_rate_interval_zero_events_is_the_exact_bound():
    from scipy.stats import binomtest as bt

    for n in (5, 21, 30, 100):
        assert rate_interval(0, n).high == pytest.approx(bt(0, n).proportion_ci(0.95, "exact").high, abs=1e-12)
        assert rate_interval(n, n).low == pytest.approx(bt(n, n).proportion_ci(0.95, "exact").low, abs=1e-12)
    assert upper_bound_words(0, 30, "bluffs") == "0 of 30 bluffs: the rate could still be up to 11.6% (95% upper bound)"


def test_questions_needed_is_connors_formula_for_one_phrasing():
    # 6 wins, 2 losses, 24 ties: delta = 4/32, discordance pi = 8/32
    d = [1] * 6 + [-1] * 2 + [0] * 24
    za, zb = 1.959963984540054, 0.8416212335729143
    delta, pi = 4 / 32, 8 / 32
    assert questions_needed(d, 1) == pytest.approx((za * pi**0.5 + zb * (pi - delta**2) ** 0.5) ** 2 / delta**2)
    assert questions_needed([0, 0, 1, -1], 1) is None
    # two phrasings that always agree carry no more information than one: same n as d / 2 with P = 1
    assert questions_needed([2 * x for x in d], 2) == pytest.approx(questions_needed(d, 1))


def test_verdict_words_and_rule():
    t = QuestionTest(7, 1, 24, 0.052, Difference(0.17, -0.01, 0.34), 2)
    text = verdict("E/hybrid", "A/hybrid", t, Difference(0.17, -0.01, 0.34), metric="R@4", p_adjusted=0.052)
    assert text == ("E/hybrid vs A/hybrid at R@4 over 32 questions: not shown different: +17 pts (\u22121 to +34), "
                    "this pair alone, sign-flip p = 0.052; E/hybrid wins 7 questions, loses 1")
    text = verdict("E/hybrid", "A/hybrid", t, Difference(0.17, 0.01, 0.33), metric="R@4", p_adjusted=0.01, family=276)
    assert "E/hybrid is ahead: wins 7 questions, loses 1: +17 pts (+1 to +33), simultaneous over 276 comparisons " \
           "(p = 0.010 adjusted)" in text
    text = verdict("A/hybrid", "E/hybrid", QuestionTest(1, 7, 24, 0.001, Difference(-0.2, -0.3, -0.1), 2),
                   Difference(-0.2, -0.3, -0.1), metric="R@4")
    assert "E/hybrid is ahead: wins 7 questions, loses 1" in text
    assert verdict_status(Difference(0.1, 0.0, 0.2)) == "not shown different"  # touching 0 is not excluding it
    assert "descriptive only" in verdict("E/hybrid", "A/hybrid", t, Difference(0.17, -0.01, 0.34), metric="R@20",
                                         primary=False)




@pytest.mark.parametrize("n", [30, 64, 200])
def test_rate_interval_covers_rare_rates(n):
    # exact coverage over the binomial law: rates near 1/(5n) mostly give 0-2 events, where Wilson fell to 0.84-0.91
    from scipy.stats import binom

    from ragdiag.analyses.compare import rate_interval

    for p in (1 / (5 * n), 1 / (2 * n), 1 / n, 2 / n):
        cover = sum(binom.pmf(k, n, p) for k in range(n + 1)
                    if rate_interval(k, n).low <= p <= rate_interval(k, n).high)
        assert cover >= 0.93, (n, p, cover)
