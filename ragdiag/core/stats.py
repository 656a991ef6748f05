"""Small-sample statistics for comparing retrieval runs.

Everything here is a pure function of counts or per-query outcomes and
depends only on :mod:`numpy` and the standard library.

- :func:`wilson` / :func:`proportion` -- Wilson score interval for a hit rate.
- :func:`sign_test_counts` / :func:`sign_test` -- exact two-sided sign test
  for paired per-query outcomes of two systems.
- :func:`holm` -- Holm--Bonferroni step-down adjusted p-values.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np

__all__ = [
    "Interval",
    "SignTest",
    "holm",
    "proportion",
    "sign_test",
    "sign_test_counts",
    "wilson",
]


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------


def _as_count(value: object, name: str) -> int:
    """Return ``value`` as a non-negative ``int`` or raise ``ValueError``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(
            f"{name} must be a non-negative integer count, got {value!r} "
            f"({type(value).__name__}); pass a whole number such as {name}=3"
        )
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer count, got {value}")
    return value


def _as_1d_numeric(values: object, name: str) -> np.ndarray:
    """Return ``values`` as a 1-D boolean or real array without NaN."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be a one-dimensional sequence of per-query outcomes, "
            f"got an array of shape {arr.shape}"
        )
    if arr.dtype != np.bool_ and not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(
            f"{name} must contain booleans (hit/miss) or real numbers "
            f"(higher is better), got dtype {arr.dtype}"
        )
    if np.issubdtype(arr.dtype, np.floating) and np.isnan(arr).any():
        bad = int(np.flatnonzero(np.isnan(arr))[0])
        raise ValueError(
            f"{name} contains NaN (first at index {bad}); drop or impute "
            "missing queries in both inputs before testing"
        )
    return arr


# ---------------------------------------------------------------------------
# Wilson interval
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A proportion with a two-sided confidence interval.

    Attributes
    ----------
    estimate : float
        Point estimate ``successes / trials`` (``nan`` when ``trials == 0``).
    low, high : float
        Interval bounds, ``0 <= low <= high <= 1``.
    successes, trials : int
        The counts the interval was computed from.
    """

    estimate: float
    low: float
    high: float
    successes: int
    trials: int

    def __str__(self) -> str:
        """The rate as every surface writes one (:func:`ragdiag.core.words.rate_text`), ``"55% (42–67)"``."""
        from .words import rate_text

        return rate_text(self)


def wilson(successes: int, trials: int, *, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion.

    Parameters
    ----------
    successes : int
        Number of successes (e.g. queries with a relevant hit), ``0 <= successes``.
    trials : int
        Number of trials (queries), ``successes <= trials``.
    confidence : float, keyword-only
        Two-sided confidence level in ``(0, 1)``; default 0.95.

    Returns
    -------
    Interval
        When ``trials == 0`` there is no information and the result is
        ``Interval(nan, 0.0, 1.0, 0, 0)``.

    Notes
    -----
    With :math:`\\hat p = k/n` and :math:`z = \\Phi^{-1}(1/2 + c/2)`, the bounds
    are

    .. math::

        \\frac{2k + z^2 \\pm z\\sqrt{4k(n-k)/n + z^2}}{2(n + z^2)}

    (no continuity correction). Unlike the Wald interval it never leaves
    ``[0, 1]`` and behaves well for small ``n`` and proportions near 0 or 1.
    ``low`` is exactly ``0.0`` when ``successes == 0`` and ``high`` exactly
    ``1.0`` when ``successes == trials``.

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and
       statistical inference", JASA 22 (1927) 209-212.
    .. [2] R. G. Newcombe, "Two-sided confidence intervals for the single
       proportion: comparison of seven methods", Stat. Med. 17 (1998) 857-872.

    Examples
    --------
    >>> iv = wilson(38, 64); [round(x, 3) for x in (iv.estimate, iv.low, iv.high)]
    [0.594, 0.471, 0.705]
    >>> print(iv)  # as every surface writes a rate (ragdiag.core.words.rate_text)
    59% (47–71)
    >>> wilson(0, 10).low
    0.0
    """
    k = _as_count(successes, "successes")
    n = _as_count(trials, "trials")
    if k > n:
        raise ValueError(
            f"successes ({k}) cannot exceed trials ({n}); check that both "
            "count the same set of queries"
        )
    if (
        isinstance(confidence, (bool, np.bool_))
        or not isinstance(confidence, numbers.Real)
        or not 0.0 < float(confidence) < 1.0
    ):
        raise ValueError(
            f"confidence must be a number strictly between 0 and 1, got "
            f"{confidence!r}; e.g. confidence=0.95 for a 95% interval"
        )
    if n == 0:
        return Interval(math.nan, 0.0, 1.0, 0, 0)

    z = NormalDist().inv_cdf(0.5 + 0.5 * float(confidence))
    z2 = z * z
    denom = 2.0 * (n + z2)
    center = (2.0 * k + z2) / denom
    delta = z * math.sqrt(4.0 * k * (n - k) / n + z2) / denom
    low = 0.0 if k == 0 else max(0.0, center - delta)
    high = 1.0 if k == n else min(1.0, center + delta)
    return Interval(k / n, low, high, k, n)


def proportion(hits: Sequence[bool] | np.ndarray, *, confidence: float = 0.95) -> Interval:
    """Wilson interval for the hit rate of a boolean per-query sequence.

    Parameters
    ----------
    hits : sequence of bool
        One entry per query; ``True`` (or 1) for a hit, ``False`` (or 0) for
        a miss.
    confidence : float, keyword-only
        Passed to :func:`wilson`.

    Returns
    -------
    Interval
        ``wilson(sum(hits), len(hits))``.

    Examples
    --------
    >>> iv = proportion([True, False, True, True]); [round(x, 3) for x in (iv.estimate, iv.low, iv.high)]
    [0.75, 0.301, 0.954]
    """
    arr = _as_1d_numeric(hits, "hits")
    if arr.dtype != np.bool_:
        if not np.isin(arr, (0, 1)).all():
            raise ValueError(
                "hits must be booleans (or 0/1); for graded scores threshold "
                "them first, e.g. proportion(scores > 0)"
            )
        arr = arr.astype(bool)
    return wilson(int(arr.sum()), int(arr.size), confidence=confidence)


# ---------------------------------------------------------------------------
# sign test
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SignTest:
    """Result of an exact two-sided sign test.

    Attributes
    ----------
    wins, losses, ties : int
        Queries where the first system was better, worse, or equal.
    p : float
        Two-sided p-value computed on the ``wins + losses`` discordant pairs.
    """

    wins: int
    losses: int
    ties: int
    p: float

    def __str__(self) -> str:
        p = f"{self.p:.4f}" if self.p >= 1e-4 else f"{self.p:.1e}"
        return f"+{self.wins}/-{self.losses} (ties {self.ties}), p = {p}"


def sign_test_counts(wins: int, losses: int, ties: int = 0) -> SignTest:
    """Exact two-sided sign test from win/loss/tie counts.

    Parameters
    ----------
    wins, losses : int
        Discordant pairs favouring the first / second system.
    ties : int, optional
        Concordant pairs; reported but ignored by the test.

    Returns
    -------
    SignTest

    Notes
    -----
    Under the null each discordant pair is a fair coin, so with
    :math:`n = w + l`, :math:`X \\sim \\mathrm{Bin}(n, 1/2)`,

    .. math:: p = \\min\\{1,\\; 2\\,P(X \\le \\min(w, l))\\}.

    The tail is summed exactly in rational arithmetic with
    :func:`math.comb` and converted to ``float`` once. With no discordant
    pairs ``p = 1.0``.

    References
    ----------
    .. [1] W. J. Dixon and A. M. Mood, "The statistical sign test",
       JASA 41 (1946) 557-566.

    Examples
    --------
    >>> r = sign_test_counts(18, 3, 43)
    >>> print(r)
    +18/-3 (ties 43), p = 0.0015
    >>> sign_test_counts(3, 18).p == r.p
    True
    """
    w = _as_count(wins, "wins")
    l_ = _as_count(losses, "losses")
    t = _as_count(ties, "ties")
    n = w + l_
    m = min(w, l_)
    if n == 0 or 2 * m >= n:
        return SignTest(w, l_, t, 1.0)
    tail = sum(math.comb(n, i) for i in range(m + 1))
    p = min(Fraction(1), Fraction(2 * tail, 2**n))
    return SignTest(w, l_, t, float(p))


def sign_test(
    a: Sequence[float] | Sequence[bool] | np.ndarray,
    b: Sequence[float] | Sequence[bool] | np.ndarray,
) -> SignTest:
    """Exact sign test on paired per-query outcomes of two systems.

    Parameters
    ----------
    a, b : sequence of bool or real
        Same-length per-query outcomes, aligned by query: booleans
        (hit/miss) or numbers where higher is better (e.g. reciprocal
        rank). NaN is not allowed.

    Returns
    -------
    SignTest
        A win is ``a > b``, a loss ``a < b``, a tie ``a == b``; the p-value is
        that of :func:`sign_test_counts`.

    Examples
    --------
    >>> print(sign_test([1.0, 0.5, 0.0, 1.0], [0.5, 0.5, 0.0, 0.0]))
    +2/-0 (ties 2), p = 0.5000
    """
    x = _as_1d_numeric(a, "a")
    y = _as_1d_numeric(b, "b")
    if x.size != y.size:
        raise ValueError(
            f"a and b must be paired per query and have the same length; "
            f"got len(a) = {x.size} and len(b) = {y.size}"
        )
    wins = int(np.count_nonzero(x > y))
    losses = int(np.count_nonzero(x < y))
    ties = int(x.size) - wins - losses
    return sign_test_counts(wins, losses, ties)


# ---------------------------------------------------------------------------
# multiple comparisons
# ---------------------------------------------------------------------------


def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm--Bonferroni step-down adjusted p-values.

    Parameters
    ----------
    pvalues : sequence of float
        Raw p-values in ``[0, 1]``.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values (float, input order). Rejecting hypotheses with
        adjusted p ``<= alpha`` is exactly Holm's procedure at level
        ``alpha``, controlling the family-wise error rate. Empty input gives
        an empty array.

    Notes
    -----
    With the raw p-values sorted ascending, :math:`p_{(1)} \\le \\dots \\le
    p_{(m)}`, the adjusted values are

    .. math:: \\tilde p_{(i)} = \\min\\{1,\\; \\max_{j \\le i} (m - j + 1)\\, p_{(j)}\\}.

    They are never below the raw values and are monotone in the sorted
    order.

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test
       procedure", Scand. J. Statist. 6 (1979) 65-70.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, 0.005]).round(4).tolist()
    [0.03, 0.06, 0.06, 0.02]
    """
    arr = np.asarray(pvalues)
    if arr.ndim != 1:
        raise ValueError(
            f"pvalues must be a one-dimensional sequence, got shape {arr.shape}"
        )
    if arr.size == 0:
        return np.zeros(0, dtype=float)
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"pvalues must be real numbers in [0, 1], got dtype {arr.dtype}")
    arr = arr.astype(float)
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # also catches NaN
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"pvalues must lie in [0, 1]; pvalues[{i}] = {float(arr[i])!r}"
        )
    m = arr.size
    order = np.argsort(arr, kind="stable")
    scaled = (m - np.arange(m)) * arr[order]
    adjusted_sorted = np.minimum(np.maximum.accumulate(scaled), 1.0)
    out = np.empty(m, dtype=float)
    out[order] = adjusted_sorted
    return out
