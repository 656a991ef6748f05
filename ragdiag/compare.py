"""Questions as the unit: intervals and paired tests that stay honest when phrasings are correlated.

A ground truth asks each question in several phrasings (two in the bundled
one). The phrasings of one question share a needle, so they fail together
(a needle destroyed by chunking fails all of them): they are not independent
observations. Every interval and test here therefore treats the *question*
as the unit and its phrasings as a cluster.

- :func:`question_differences` -- per question, the paired difference summed over its phrasings.
- :func:`sign_flip_test` -- exact two-sided sign-flip (permutation) test over questions.
- :func:`bootstrap_difference` -- a question-level bootstrap interval for a difference of means.
- :func:`clustered_rate` -- a Wilson interval on the Kish effective sample size (cluster design effect).
- :func:`clustered_mean` -- a cluster-robust interval for a mean in [0, 1] (MRR).
- :func:`rate_interval` -- Wilson with the exact bound at 0 (or all) events, and :func:`upper_bound_words`.
- :func:`questions_needed` -- questions needed for 80% power, given a difference and its discordance.
- :func:`verdict` -- the one rule and the one set of words for a paired comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Sequence

import numpy as np

from .defaults import ALPHA, SEED
from .stats import Interval, wilson

__all__ = [
    "QuestionTest",
    "Difference",
    "question_groups",
    "question_differences",
    "sign_flip_test",
    "paired_test",
    "bootstrap_difference",
    "clustered_rate",
    "clustered_wilson",
    "clustered_mean",
    "rate_interval",
    "upper_bound_words",
    "questions_needed",
    "power_words",
    "verdict",
    "BOOTSTRAP_DRAWS",
    "MONTE_CARLO_DRAWS",
]

#: Draws of every question bootstrap (seeded with :data:`ragdiag.defaults.SEED`).
BOOTSTRAP_DRAWS = 10_000
#: Sign-flip draws when real-valued differences are too many to enumerate (more than 40 non-zero questions).
MONTE_CARLO_DRAWS = 200_000
_EXACT_REAL_LIMIT = 40


# ---------------------------------------------------------------------------
# grouping
# ---------------------------------------------------------------------------


def question_groups(question_ids: Sequence[str]) -> np.ndarray:
    """Integer group labels (0..G-1, in order of first appearance) for per-query question ids.

    >>> question_groups(["q1", "q1", "q2", "q3", "q2"]).tolist()
    [0, 0, 1, 2, 1]
    """
    seen: dict[str, int] = {}
    return np.array([seen.setdefault(q, len(seen)) for q in question_ids], dtype=np.int64)


def _groups(groups, n: int) -> np.ndarray:
    g = np.asarray(groups)
    if g.ndim != 1 or g.size != n:
        raise ValueError(f"groups must give one question per query ({n} queries), got shape {g.shape}")
    if g.dtype.kind not in "iu":
        g = question_groups([str(x) for x in g])
    if g.size and g.min() < 0:
        raise ValueError("groups must be non-negative integer labels or question ids")
    return g


def _sums(values: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per question: sum of ``values`` and number of phrasings (questions with none dropped)."""
    _, inv = np.unique(groups, return_inverse=True)
    sums = np.bincount(inv, weights=values.astype(np.float64))
    sizes = np.bincount(inv)
    return sums, sizes


def question_differences(a, b, groups) -> np.ndarray:
    """Per question: the sum over its phrasings of ``a - b`` (hits: an integer in ``-P..P``).

    Parameters
    ----------
    a, b : sequence of bool or real
        Per-query outcomes of two systems on the same queries (hits, or reciprocal ranks).
    groups : sequence
        The question of each query (integer labels or question ids).

    Examples
    --------
    >>> question_differences([1, 1, 0, 1], [0, 0, 0, 1], ["q1", "q1", "q2", "q2"]).tolist()
    [2.0, 0.0]
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a and b must be paired per query (same 1-D length), got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("a and b must not contain NaN; drop or impute missing queries in both first")
    g = _groups(groups, x.size)
    d, _ = _sums(x - y, g)
    return d


# ---------------------------------------------------------------------------
# the exact sign-flip test
# ---------------------------------------------------------------------------


def _integer_null_tail(d: np.ndarray) -> Fraction:
    """P(|sum of independent +/-|d_i|| >= |sum d|) exactly, by convolving integer counts."""
    mags = np.abs(d).astype(np.int64)
    mags = mags[mags > 0]
    observed = abs(int(d.sum()))
    total = int(mags.sum())
    if mags.size == 0 or observed == 0:
        return Fraction(1)
    # counts[s + total] = number of sign patterns with sum s; Python ints stay exact at any size.
    counts = np.zeros(2 * total + 1, dtype=object)
    counts[total] = 1
    for m in mags.tolist():
        nxt = np.zeros_like(counts)
        nxt[m:] += counts[:-m]
        nxt[:-m] += counts[m:]
        counts = nxt
    sums = np.arange(-total, total + 1)
    tail = sum(counts[np.abs(sums) >= observed].tolist())
    return Fraction(int(tail), 2 ** int(mags.size))


def _real_null_tail(d: np.ndarray, *, seed: int) -> tuple[float, str]:
    """Two-sided sign-flip p for real differences: exact (meet in the middle) up to 40 non-zero values."""
    d = d[d != 0]
    n = d.size
    observed = abs(float(d.sum()))
    if n == 0 or observed == 0:
        return 1.0, "exact"
    tol = 1e-9 * max(1.0, float(np.abs(d).sum()))
    if n <= _EXACT_REAL_LIMIT:
        half = n // 2

        def all_sums(v: np.ndarray) -> np.ndarray:
            if v.size == 0:
                return np.zeros(1)
            signs = ((np.arange(2 ** v.size)[:, None] >> np.arange(v.size)) & 1) * 2 - 1
            return signs @ v

        left, right = all_sums(d[:half]), np.sort(all_sums(d[half:]))
        # count pairs with left + right >= t or <= -t (t = observed - tol)
        t = observed - tol
        upper = right.size - np.searchsorted(right, t - left, side="left")
        lower = np.searchsorted(right, -t - left, side="right")
        count = int(upper.sum() + lower.sum())
        return min(1.0, count / float(2 ** n)), "exact"
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, MONTE_CARLO_DRAWS, 20_000):
        m = min(20_000, MONTE_CARLO_DRAWS - start)
        signs = rng.integers(0, 2, size=(m, n)) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) >= observed - tol))
    return (hits + 1) / (MONTE_CARLO_DRAWS + 1), f"monte carlo ({MONTE_CARLO_DRAWS:,} seeded draws)"


def sign_flip_test(d, *, seed: int = SEED) -> float:
    """Exact two-sided sign-flip (permutation) test of per-question paired differences.

    Parameters
    ----------
    d : sequence of int or float
        One paired difference per question (:func:`question_differences`).
    seed : int, keyword-only
        Used only for real-valued differences with more than 40 non-zero
        questions (seeded Monte Carlo); integers are always exact.

    Returns
    -------
    float
        :math:`P(|\\sum_i s_i |d_i|| \\ge |\\sum_i d_i|)` with independent fair
        signs :math:`s_i = \\pm 1` (questions with ``d = 0`` do not move the
        sum).

    Notes
    -----
    Under the null hypothesis that the two systems are exchangeable on every
    question, the sign of each question's difference is a fair coin. For
    integer differences (hits over P phrasings, ``-P..P``) the null
    distribution of the sum is an integer convolution, computed exactly in
    integer arithmetic. With one phrasing per question (``d`` in ``{-1, 0, 1}``)
    it is exactly the two-sided sign test (:func:`ragdiag.stats.sign_test_counts`).
    Real differences (reciprocal ranks) are enumerated exactly by meeting in the
    middle when at most 40 questions differ.

    References
    ----------
    .. [1] R. A. Fisher, *The Design of Experiments* (1935), section 21.
    .. [2] M. D. Smucker, J. Allan, B. Carterette, "A comparison of statistical
       significance tests for information retrieval evaluation", CIKM 2007.

    Examples
    --------
    >>> sign_flip_test([2, 2, 1, 0, -1])  # +/-2 +/-2 +/-1 +/-1: 6 of the 16 sums reach |4|
    0.375
    >>> sign_flip_test([1] * 5 + [-1] * 0) == 2 / 32
    True
    """
    arr = np.asarray(d, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"d must be one difference per question (1-D), got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError("d must not contain NaN")
    if np.all(arr == np.round(arr)):
        return float(_integer_null_tail(np.round(arr)))
    return _real_null_tail(arr, seed=seed)[0]


def _p_method(d: np.ndarray) -> str:
    if np.all(d == np.round(d)) or np.count_nonzero(d) <= _EXACT_REAL_LIMIT:
        return "exact"
    return f"monte carlo ({MONTE_CARLO_DRAWS:,} seeded draws)"


# ---------------------------------------------------------------------------
# intervals
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    """A difference of means (``a - b``) with a two-sided interval."""

    estimate: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.estimate:+.2f} [{self.low:+.2f}, {self.high:+.2f}]"

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


def bootstrap_difference(a, b, groups, *, confidence: float = 0.95, draws: int = BOOTSTRAP_DRAWS,
                         seed: int = SEED) -> Difference:
    """Mean of ``a`` minus mean of ``b`` over queries, with a question-bootstrap percentile interval.

    Questions are resampled with replacement (all phrasings of a drawn question
    together), ``draws`` times, with a fixed seed: the same data always gives
    the same interval.

    Examples
    --------
    >>> r = bootstrap_difference([1, 1, 1, 1], [0, 0, 1, 1], ["q1", "q1", "q2", "q2"])
    >>> r.estimate, r.low, r.high
    (0.5, 0.0, 1.0)
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    d = question_differences(x, y, groups)
    _, sizes = _sums(x, _groups(groups, x.size))
    if d.size == 0:
        return Difference(math.nan, math.nan, math.nan)
    estimate = float(d.sum() / sizes.sum())
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(draws, d.size))
    boot = d[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(boot, [tail, 1.0 - tail])
    return Difference(estimate, float(low), float(high))


def _t_quantile(confidence: float, df: int) -> float:
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    if df < 1:
        return z
    try:
        from scipy.stats import t

        return float(t.ppf(0.5 + confidence / 2.0, df))
    except ImportError:  # Cornish-Fisher expansion of the t quantile (accurate to ~1e-3 for df >= 3)
        return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def clustered_rate(hits, groups, *, confidence: float = 0.95) -> Interval:
    """Hit rate over queries with a Wilson interval on the Kish effective sample size.

    Parameters
    ----------
    hits : sequence of bool
        One per query.
    groups : sequence
        The question of each query; a question's phrasings are one cluster.

    Returns
    -------
    Interval
        ``estimate`` is hits / queries (the usual recall); ``successes`` and
        ``trials`` are the raw counts.

    Notes
    -----
    The variance of the ratio estimator :math:`\\hat p = \\sum y_g / \\sum m_g`
    over G clusters is :math:`v = \\frac{G}{G-1} \\sum_g (y_g - \\hat p m_g)^2 /
    (\\sum_g m_g)^2`. The design effect is :math:`\\mathrm{deff} = v / (\\hat p
    (1 - \\hat p) / n)`, floored at 1, and the effective sample size
    :math:`n_{eff} = n / \\mathrm{deff}` (Kish). The Wilson interval is then
    computed for :math:`\\hat p` on :math:`n_{eff}` trials with the
    :math:`t_{G-1}` quantile in place of :math:`z` (few clusters). At
    :math:`\\hat p \\in \\{0, 1\\}` the variance is 0 and the design effect is
    taken as its worst case, the mean cluster size (every phrasing copies its
    question): the interval is then Wilson's over the questions.

    With one query per question this is exactly Wilson's interval (up to
    ``t`` in place of ``z``).

    References
    ----------
    .. [1] L. Kish, *Survey Sampling* (1965), sections 5.4 and 8.2.
    .. [2] Wilson (1927); see :func:`ragdiag.stats.wilson`.

    Examples
    --------
    >>> iv = clustered_rate([1, 1, 0, 0, 1, 1, 0, 0], ["a", "a", "b", "b", "c", "c", "d", "d"])
    >>> round(iv.estimate, 3), round(iv.high - iv.low, 2) > round(0.9 - 0.15, 2)
    (0.5, True)
    """
    y = np.asarray(hits)
    if y.ndim != 1:
        raise ValueError(f"hits must be one value per query (1-D), got shape {y.shape}")
    if y.dtype != np.bool_ and not np.isin(y, (0, 1)).all():
        raise ValueError("hits must be booleans (or 0/1)")
    y = y.astype(np.float64)
    g = _groups(groups, y.size)
    n = int(y.size)
    k = int(y.sum())
    if n == 0:
        return Interval(math.nan, 0.0, 1.0, 0, 0)
    sums, sizes = _sums(y, g)
    est, low, high = clustered_wilson(sums, sizes, confidence=confidence)
    return Interval(float(est), float(low), float(high), k, n)


def clustered_wilson(successes, sizes, *, confidence: float = 0.95):
    """The bounds of :func:`clustered_rate` from per-question counts, vectorised over draws.

    Parameters
    ----------
    successes : array (..., G)
        Hits per question (over its phrasings); leading axes are independent data sets.
    sizes : array (G,)
        Phrasings per question.

    Returns
    -------
    (estimate, low, high) : arrays of shape ``successes.shape[:-1]``
    """
    y = np.asarray(successes, dtype=np.float64)
    m = np.asarray(sizes, dtype=np.float64)
    G = m.size
    n = float(m.sum())
    k = y.sum(axis=-1)
    p = k / n
    inner = (0 < k) & (k < n)
    if G > 1:
        v = G / (G - 1) * ((y - p[..., None] * m) ** 2).sum(axis=-1) / n**2
        with np.errstate(divide="ignore", invalid="ignore"):
            deff = np.where(inner, np.maximum(1.0, v / (p * (1 - p) / n)), n / G)
    else:
        deff = np.full(p.shape, n)
    # worst case at 0 or n hits: all phrasings of a question agree (deff = mean cluster size)
    n_eff = n / deff
    z = _t_quantile(confidence, G - 1)
    z2 = z * z
    denom = 1.0 + z2 / n_eff
    center = (p + z2 / (2 * n_eff)) / denom
    half = z * np.sqrt(p * (1 - p) / n_eff + z2 / (4 * n_eff**2)) / denom
    low = np.where(k == 0, 0.0, np.maximum(0.0, center - half))
    high = np.where(k == n, 1.0, np.minimum(1.0, center + half))
    return p, low, high


def clustered_mean(values, groups, *, confidence: float = 0.95) -> Interval:
    """Mean of per-query values in [0, 1] (reciprocal ranks) with a cluster-robust t interval.

    The standard error is that of the ratio estimator over questions (see
    :func:`clustered_rate`), the quantile is :math:`t_{G-1}`, and the bounds are
    clipped to [0, 1]. ``successes``/``trials`` hold 0 and the number of queries.

    Examples
    --------
    >>> print(clustered_mean([1.0, 0.5, 0.0, 0.0, 1.0, 1.0], ["a", "a", "b", "b", "c", "c"]))
    0.583 [0.000, 1.000]
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or np.isnan(x).any() or (x.size and (x.min() < 0 or x.max() > 1)):
        raise ValueError("values must be one number in [0, 1] per query, without NaN")
    n = int(x.size)
    if n == 0:
        return Interval(math.nan, 0.0, 1.0, 0, 0)
    g = _groups(groups, n)
    sums, sizes = _sums(x, g)
    G = sums.size
    m = float(x.mean())
    if G < 2:
        return Interval(m, 0.0, 1.0, 0, n)
    v = G / (G - 1) * float(((sums - m * sizes) ** 2).sum()) / n**2
    half = _t_quantile(confidence, G - 1) * math.sqrt(v)
    return Interval(m, max(0.0, m - half), min(1.0, m + half), 0, n)


def rate_interval(count: int, n: int, *, confidence: float = 0.95) -> Interval:
    """Wilson interval for a rate, with the exact (Clopper-Pearson) bound at 0 or ``n`` events.

    Wilson's upper bound at 0 events, :math:`z^2/(n + z^2)`, is below the exact
    one (0 of 30: 11.4% against 11.6%), so at 0 events the upper bound is the
    exact :math:`1 - (\\alpha/2)^{1/n}`, and symmetrically at ``n`` events.

    Examples
    --------
    >>> print(rate_interval(3, 30))
    0.100 [0.035, 0.256]
    >>> round(rate_interval(0, 30).high, 4)
    0.1157
    """
    iv = wilson(count, n, confidence=confidence)
    if n == 0:
        return iv
    tail = (1.0 - confidence) / 2.0
    if count == 0:
        iv = Interval(iv.estimate, 0.0, 1.0 - tail ** (1.0 / n), count, n)
    if count == n:
        iv = Interval(iv.estimate, tail ** (1.0 / n), 1.0, count, n)
    return iv


def upper_bound_words(count: int, n: int, what: str, *, confidence: float = 0.95) -> str:
    """A rate in words; at 0 events, how high it could still be.

    >>> upper_bound_words(0, 30, "bluffs")
    '0 of 30 bluffs: the rate could still be up to 11.6% (95% upper bound)'
    >>> upper_bound_words(3, 30, "bluffs")
    '3 of 30 bluffs: 10.0% [3.5%, 25.6%]'
    """
    iv = rate_interval(count, n, confidence=confidence)
    if n == 0:
        return f"0 of 0 {what}: no queries, no information"
    if count == 0:
        return (f"0 of {n} {what}: the rate could still be up to {100 * iv.high:.1f}% "
                f"({100 * confidence:.0f}% upper bound)")
    return f"{count} of {n} {what}: {100 * iv.estimate:.1f}% [{100 * iv.low:.1f}%, {100 * iv.high:.1f}%]"


# ---------------------------------------------------------------------------
# power
# ---------------------------------------------------------------------------


def questions_needed(d, phrasings: int, *, alpha: float = ALPHA, power: float = 0.8) -> float | None:
    """Questions needed for the paired test to detect the observed difference with ``power``.

    Parameters
    ----------
    d : sequence
        Per-question differences (:func:`question_differences`) on the current set.
    phrasings : int
        Phrasings per question (P); the difference per question is ``d / P``.

    Returns
    -------
    float or None
        ``None`` when there is no observed difference (nothing to detect).

    Notes
    -----
    With :math:`x = d / P`, :math:`\\delta = E[x]` (the difference in recall) and
    :math:`\\pi = E[x^2]` (the discordance: the share of discordant questions when
    P = 1), the normal approximation to the sign-flip test gives

    .. math:: n = \\left(z_{1-\\alpha/2}\\sqrt{\\pi} + z_{power}\\sqrt{\\pi - \\delta^2}\\right)^2 / \\delta^2,

    which for P = 1 is Connor's sample size for McNemar's test.

    References
    ----------
    .. [1] R. J. Connor, "Sample size for testing differences in proportions for
       the paired-sample design", Biometrics 43 (1987) 207-211.

    Examples
    --------
    >>> round(questions_needed([1] * 6 + [-1] * 2 + [0] * 24, 1))
    123
    """
    x = np.asarray(d, dtype=np.float64) / float(phrasings)
    if x.size == 0:
        return None
    delta = float(x.mean())
    if delta == 0:
        return None
    pi = float((x**2).mean())
    za = NormalDist().inv_cdf(1 - alpha / 2)
    zb = NormalDist().inv_cdf(power)
    return (za * math.sqrt(pi) + zb * math.sqrt(max(pi - delta**2, 0.0))) ** 2 / delta**2


def power_words(d, phrasings: int, *, alpha: float = ALPHA, power: float = 0.8) -> str:
    """The sample size of :func:`questions_needed` in a sentence a product owner reads."""
    n_now = len(d)
    need = questions_needed(d, phrasings, alpha=alpha, power=power)
    if need is None:
        return (f"No difference was observed on these {n_now} questions: no number of questions "
                "would detect one that is not there.")
    n = math.ceil(need)
    each = f" (each in {phrasings} phrasings)" if phrasings > 1 else ""
    diff = float(np.mean(np.asarray(d, dtype=float) / phrasings))
    if n <= n_now:
        return (f"A difference of {diff:+.2f} needs about {n} questions{each} to be detected {power:.0%} of the "
                f"time; these {n_now} are enough.")
    return (f"To detect a difference of {diff:+.2f} {power:.0%} of the time would take about {n} questions{each}; "
            f"there are {n_now}.")


# ---------------------------------------------------------------------------
# the verdict
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class QuestionTest:
    """A paired comparison of two systems over questions (wins, losses and ties count questions)."""

    wins: int
    losses: int
    ties: int
    p: float
    difference: Difference
    phrasings: int
    method: str = "exact"

    @property
    def n_questions(self) -> int:
        return self.wins + self.losses + self.ties

    def __str__(self) -> str:
        p = f"{self.p:.4f}" if self.p >= 1e-4 else f"{self.p:.1e}"
        return f"+{self.wins}/-{self.losses} (ties {self.ties}) questions, p = {p}, difference {self.difference}"


def paired_test(a, b, groups, *, seed: int = SEED) -> QuestionTest:
    """Sign-flip test and bootstrap difference of ``a`` against ``b`` over questions.

    Examples
    --------
    >>> t = paired_test([1, 1, 1, 0, 0, 0], [0, 0, 1, 1, 0, 0], ["q1", "q1", "q2", "q2", "q3", "q3"])
    >>> t.wins, t.losses, t.ties, t.p
    (1, 1, 1, 1.0)
    """
    d = question_differences(a, b, groups)
    _, sizes = _sums(np.asarray(a, dtype=np.float64), _groups(groups, len(np.asarray(a))))
    return QuestionTest(
        wins=int(np.count_nonzero(d > 0)),
        losses=int(np.count_nonzero(d < 0)),
        ties=int(np.count_nonzero(d == 0)),
        p=sign_flip_test(d, seed=seed),
        difference=bootstrap_difference(a, b, groups, seed=seed),
        phrasings=int(sizes.max()) if sizes.size else 0,
        method=_p_method(d),
    )


def _fmt_p(p: float) -> str:
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def verdict(a: str, b: str, test: QuestionTest, *, metric: str, p_adjusted: float | None = None,
            family: int = 1, primary: bool = True, alpha: float = ALPHA) -> tuple[str, str]:
    """The one rule and the words for a paired comparison, used by the CLI, the dashboard and the report.

    Parameters
    ----------
    a, b : str
        Labels of the two systems (the difference is ``a - b``).
    test : QuestionTest
    metric : str
        What was compared, e.g. ``"R@4"``.
    p_adjusted : float, optional
        Holm-adjusted p within the family on screen (``family`` comparisons);
        the raw p when the pair is tested alone.
    primary : bool
        Only the primary k carries a verdict; other k are descriptive.

    Returns
    -------
    (status, sentence)
        ``status`` is ``"different"``, ``"not shown different"`` or ``"descriptive"``.

    Examples
    --------
    >>> t = QuestionTest(7, 1, 24, 0.052, Difference(0.17, -0.01, 0.34), 2)
    >>> verdict("E/hybrid", "A/hybrid", t, metric="R@4")[1]
    'E/hybrid vs A/hybrid at R@4 over 32 questions: not shown different (p = 0.052): +0.17 [-0.01, +0.34]'
    """
    p = test.p if p_adjusted is None else float(p_adjusted)
    ptext = f"p = {_fmt_p(p)}" + (f", Holm over {family} comparisons" if family > 1 else "")
    head = f"{a} vs {b} at {metric} over {test.n_questions} questions"
    if not primary:
        return "descriptive", f"{head}: descriptive only ({ptext}): {test.difference}"
    if p < alpha:
        better = a if test.difference.estimate > 0 else b
        return "different", f"{head}: {better} is ahead ({ptext}): {test.difference}"
    return "not shown different", f"{head}: not shown different ({ptext}): {test.difference}"
