"""Paired tests over questions: the exact sign-flip test, the bootstrap difference and the verdict.

The phrasings of one question share a needle, so the question is the unit:
per-query outcomes are summed per question (:func:`question_differences`)
before testing (:func:`sign_flip_test`) or resampling (:func:`bootstrap_difference`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from ...core.defaults import SEED
from ...core.words import difference_text, mean_difference_text

__all__ = [
    "QuestionTest",
    "Difference",
    "question_groups",
    "question_differences",
    "sign_flip_test",
    "sign_sum_counts",
    "paired_test",
    "bootstrap_difference",
    "verdict",
    "verdict_status",
    "BOOTSTRAP_DRAWS",
    "MONTE_CARLO_DRAWS",
]

#: Draws of every question bootstrap (seeded with :data:`ragdiag.core.defaults.SEED`).
BOOTSTRAP_DRAWS = 10_000
#: Sign-flip draws when real-valued differences are too many to enumerate (more than 40 non-zero questions).
MONTE_CARLO_DRAWS = 200_000
_EXACT_REAL_LIMIT = 40
#: A per-question difference smaller than this is a tie (floating-point residue of summed reciprocal ranks).
_TIE_TOLERANCE = 1e-9


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
    >>> question_differences([1 / 3, 1 / 2], [1 / 2, 1 / 3], ["q1", "q1"]).tolist()  # residue is a tie
    [0.0]
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a and b must be paired per query (same 1-D length), got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("a and b must not contain NaN; drop or impute missing queries in both first")
    g = _groups(groups, x.size)
    d, _ = _sums(x - y, g)
    # reciprocal ranks leave floating-point residue (1/3 - 1/2 + 1/2 - 1/3 = 5.6e-17): a tie, not a win
    d[np.abs(d) < _TIE_TOLERANCE] = 0.0
    return d


# ---------------------------------------------------------------------------
# the exact sign-flip test
# ---------------------------------------------------------------------------


def sign_sum_counts(mags: np.ndarray) -> np.ndarray:
    """Exact counts of sign patterns by their sum: ``counts[s + total]`` patterns of ``+/-mags`` sum to ``s``.

    Convolution over the positive integer magnitudes ``mags``; Python ints
    (object dtype) stay exact at any size.

    >>> sign_sum_counts(np.array([1, 2])).tolist()  # -3, -1, +1, +3
    [1, 0, 1, 0, 1, 0, 1]
    """
    total = int(np.sum(mags))
    counts = np.zeros(2 * total + 1, dtype=object)
    counts[total] = 1
    for m in np.asarray(mags, dtype=np.int64).tolist():
        nxt = np.zeros_like(counts)
        nxt[m:] += counts[:-m]
        nxt[:-m] += counts[m:]
        counts = nxt
    return counts


def _integer_null_tail(d: np.ndarray) -> Fraction:
    """P(|sum of independent +/-|d_i|| >= |sum d|) exactly, by convolving integer counts."""
    mags = np.abs(d).astype(np.int64)
    mags = mags[mags > 0]
    observed = abs(int(d.sum()))
    total = int(mags.sum())
    if mags.size == 0 or observed == 0:
        return Fraction(1)
    counts = sign_sum_counts(mags)
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
    it is exactly the two-sided sign test (:func:`ragdiag.core.stats.sign_test_counts`).
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
        """``+0.050 (−0.020 to +0.120)``: a difference of means (:func:`~ragdiag.core.words.mean_difference_text`)."""
        return mean_difference_text(self)

    def as_dict(self) -> dict:
        """``{estimate, low, high}`` (the JSON form)."""
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
        """Questions compared (wins, losses and ties together)."""
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


def verdict_status(interval: Difference) -> str:
    """``different`` exactly when ``interval`` excludes 0, else ``not shown different``.

    >>> verdict_status(Difference(0.2, 0.01, 0.4)), verdict_status(Difference(0.2, 0.0, 0.4))
    ('different', 'not shown different')
    """
    return "different" if interval.low > 0 or interval.high < 0 else "not shown different"


def verdict(a: str, b: str, test: QuestionTest, interval: Difference, *, metric: str,
            p_adjusted: float | None = None, family: int = 1, primary: bool = True,
            primary_k: int | None = None) -> str:
    """The one sentence for a paired comparison, used by the CLI, the dashboard and the report.

    Effect first, uncertainty second, the correction last. The status is
    :func:`verdict_status` of ``interval``: the interval printed is the one the
    verdict was decided with (simultaneous within the ``family``), so "not shown
    different" never stands beside an interval that excludes 0.

    Parameters
    ----------
    a, b : str
        Labels of the two systems (the difference is ``a - b``).
    test : QuestionTest
        Wins, losses and ties over questions.
    interval : Difference
        The simultaneous interval of ``a - b`` within the family (for one pair: its exact sign-flip inversion).
    metric : str
        What was compared, e.g. ``"R@4"``.
    p_adjusted : float, optional
        The adjusted p within the family (the raw p when the pair is tested alone).
    primary : bool
        Only the primary k carries a verdict; other k are said to be descriptive.

    Examples
    --------
    >>> t = QuestionTest(7, 1, 24, 0.052, Difference(0.17, -0.01, 0.34), 2)
    >>> verdict("E/hybrid", "A/hybrid", t, Difference(0.17, -0.02, 0.36), metric="R@4", p_adjusted=0.06, family=15)
    'E/hybrid vs A/hybrid at R@4 over 32 questions: not shown different: +17 pts (\u22122 to +36), simultaneous \
over 15 comparisons (p = 0.060 adjusted); E/hybrid wins 7 questions, loses 1'
    >>> verdict("E/hybrid", "A/hybrid", t, Difference(0.17, 0.02, 0.32), metric="R@4", p_adjusted=0.03)
    'E/hybrid vs A/hybrid at R@4 over 32 questions: E/hybrid is ahead: wins 7 questions, loses 1: +17 pts \
(+2 to +32), this pair alone, sign-flip p = 0.030'
    """
    status = verdict_status(interval)
    p = test.p if p_adjusted is None else float(p_adjusted)
    where = (f"simultaneous over {family} comparisons (p = {_fmt_p(p)} adjusted)" if family > 1
             else f"this pair alone, sign-flip p = {_fmt_p(p)}")
    head = f"{a} vs {b} at {metric} over {test.n_questions} questions"
    note = "" if primary else (f"; descriptive only: verdicts are at R@{primary_k}" if primary_k else
                               "; descriptive only")
    span = difference_text(interval)  # "+17 pts (−2 to +36)", as every difference is said
    if status == "different":
        ahead_a = interval.estimate > 0
        better = a if ahead_a else b
        w, l = (test.wins, test.losses) if ahead_a else (test.losses, test.wins)
        return f"{head}: {better} is ahead: wins {w} questions, loses {l}: {span}, {where}{note}"
    return f"{head}: not shown different: {span}, {where}; {a} wins {test.wins} questions, loses {test.losses}{note}"
