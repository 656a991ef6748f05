"""Intervals over questions (cluster-robust rates and means), rates with exact bounds at 0, and power."""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist
from typing import Sequence

import numpy as np

from ...core.defaults import ALPHA
from ...core.stats import Interval, wilson
from .paired import _groups, _sums
from ...core.words import pct, rate_text

__all__ = [
    "RECALL_INTERVAL_WORDS",
    "SHARE_INTERVAL_LABEL",
    "clustered_share",
    "clustered_rate",
    "clustered_wilson",
    "clustered_mean",
    "rate_interval",
    "upper_bound_words",
    "questions_needed",
    "power_words",
]


#: Up to this many events (or non-events) a rate's interval is exact (Clopper-Pearson on the effective counts).
SMALL_COUNT = 4

#: How every recall (and share) interval is made, in words for a caption: not plain Wilson over queries.
RECALL_INTERVAL_WORDS = ("95% Wilson interval on the effective number of questions (Kish design effect: the "
                         "phrasings of a question fail together, so they count as less than independent queries; "
                         "at 0 or all hits, the exact bound over the questions; at up to 4 in question units, the exact "
                         "Clopper-Pearson interval on the effective counts at that worst case; above, never narrower at "
                         "the far end than at the switch)")


#: How a share's interval was made, short enough for a table's heading or a caption (docs/statistics.md's words).
SHARE_INTERVAL_LABEL = (f"95% interval over questions: clustered Wilson, exact at {SMALL_COUNT} or fewer events "
                        "or non-events")


@lru_cache(maxsize=1024)
def _t_quantile(confidence: float, df: int) -> float:
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    if df < 1:
        return z
    try:  # scipy.special, not scipy.stats: the same quantile without a second of import on every run
        from scipy.special import stdtrit

        return float(stdtrit(df, 0.5 + confidence / 2.0))
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
    .. [2] Wilson (1927); see :func:`ragdiag.core.stats.wilson`.

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
    r"""The bounds of :func:`clustered_rate` from per-question counts, vectorised over draws.

    Parameters
    ----------
    successes : array (..., G)
        Hits per question (over its phrasings); leading axes are independent data sets.
    sizes : array (G,)
        Phrasings per question.

    Returns
    -------
    (estimate, low, high) : arrays of shape ``successes.shape[:-1]``

    Notes
    -----
    At 0 events (or all) the interval is the exact Clopper-Pearson bound on
    the ``G`` questions, :math:`1 - (\\alpha/2)^{1/G}` (the worst case, every
    phrasing copying its question): "0 of 64 queries" over 32 questions could
    still be 10.9%, not 0. While the events (or non-events) are few in
    question units (:math:`k G / n \le` :data:`SMALL_COUNT`), the design
    effect stays at that worst case (one estimated from a handful of events is
    noise) and the interval is widened to the Clopper-Pearson interval on the
    effective counts (``p n_eff`` successes of ``n_eff``, Beta quantiles at
    non-integer counts), where Wilson's falls short of its coverage: the upper
    end grows from 0 events up (0, 1, 2 of 64 over 32 questions: 10.9%, 14.1%,
    16.8%; tests/unit/test_rate_few_events.py). Above the switch the design effect
    is estimated and Wilson's interval may be narrower than the exact one
    below it, so its far end is held at the exact rule's value at the switch
    (``SMALL_COUNT`` question-events on ``min(n_eff, G - 1)`` trials, the
    fewest the exact rule takes with equal phrasings per question) until
    Wilson's passes it: with equal phrasings per question neither end steps
    back as the events grow (9 of 20 queries, one per question over 10: the
    upper end stays at 75.5% where Wilson's alone falls to 68.5%).
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
    # few events in question units (k G / n <= SMALL_COUNT, or as few non-events): a design effect estimated from
    # a handful of events is noise (one question hit once reads as independent phrasings), so the worst case
    # stays, as at 0: the upper end then grows with every event (0, 1, 2 ... of 64 over 32 questions)
    few = inner & ((k * G / n <= SMALL_COUNT) | ((n - k) * G / n <= SMALL_COUNT)) if G else inner & False
    n_eff = np.where(few, np.minimum(n_eff, G), n_eff)
    z = _t_quantile(confidence, G - 1)
    tail = (1.0 - confidence) / 2.0
    low, high = _wilson_bounds(p, n_eff, z)
    # at 0 (or all) events Wilson's far bound is below the exact one: Clopper-Pearson on the G questions
    exact_high = 1.0 - tail ** (1.0 / G) if G else 1.0
    low = np.where(k == 0, 0.0, np.where(k == n, tail ** (1.0 / G) if G else 0.0, low))
    high = np.where(k == n, 1.0, np.where(k == 0, exact_high, high))
    # at 1 to SMALL_COUNT events (or non-events) in question units Wilson under-covers a rare rate (0.84-0.91
    # near 1/(5n)): the exact Clopper-Pearson interval on the effective counts (p n_eff of n_eff), widened over Wilson's
    if np.any(few):
        few_low, few_high = _few_bounds(p, n_eff, z, tail)
        low = np.where(few, few_low, low)
        high = np.where(few, few_high, high)
    # above the switch the design effect is estimated and Wilson's interval may be narrower than the exact one just
    # below it: the far end is held at the few-event rule's value at the switch (SMALL_COUNT events in question
    # units, on G - 1 effective trials: the fewest the few-event rule takes when questions have equal phrasings,
    # as deff <= m G / (G - 1)) until Wilson's passes it, so that neither end steps back as the events grow
    # (tests/test_rate_few_events.py)
    above = inner & ~few
    if G > 1 and np.any(above):
        n_few = np.minimum(n_eff, G - 1.0)
        _, switch_high = _few_bounds(np.full(p.shape, min(1.0, SMALL_COUNT / G)), n_few, z, tail)
        switch_low, _ = _few_bounds(np.full(p.shape, max(0.0, 1.0 - SMALL_COUNT / G)), n_few, z, tail)
        high = np.where(above, np.maximum(high, switch_high), high)
        low = np.where(above, np.minimum(low, switch_low), low)
    return p, low, high


def _wilson_bounds(p, n_eff, z):
    """Wilson's bounds for a share ``p`` of ``n_eff`` trials at quantile ``z`` (arrays)."""
    z2 = z * z
    denom = 1.0 + z2 / n_eff
    center = (p + z2 / (2 * n_eff)) / denom
    half = z * np.sqrt(p * (1 - p) / n_eff + z2 / (4 * n_eff**2)) / denom
    return np.maximum(0.0, center - half), np.minimum(1.0, center + half)


def _few_bounds(p, n_eff, z, tail):
    """The few-event rule: Clopper-Pearson on ``p n_eff`` of ``n_eff`` (Beta quantiles), widened over Wilson's."""
    from scipy.special import betaincinv

    w_low, w_high = _wilson_bounds(p, n_eff, z)
    x = p * n_eff
    with np.errstate(invalid="ignore", divide="ignore"):
        cp_low = np.where(x > 0, betaincinv(np.maximum(x, 1e-12), n_eff - x + 1, tail), 0.0)
        cp_high = np.where(x < n_eff, betaincinv(x + 1, np.maximum(n_eff - x, 1e-12), 1 - tail), 1.0)
    return np.minimum(w_low, cp_low), np.maximum(w_high, cp_high)


def clustered_mean(values, groups, *, confidence: float = 0.95) -> Interval:
    """Mean of per-query values in [0, 1] (reciprocal ranks) with a cluster-robust t interval.

    The standard error is that of the ratio estimator over questions (see
    :func:`clustered_rate`), the quantile is :math:`t_{G-1}`, and the bounds are
    clipped to [0, 1]. ``successes``/``trials`` hold 0 and the number of queries.

    Examples
    --------
    >>> iv = clustered_mean([1.0, 0.5, 0.0, 0.0, 1.0, 1.0], ["a", "a", "b", "b", "c", "c"])
    >>> [round(x, 3) for x in (iv.estimate, iv.low, iv.high)]
    [0.583, 0.0, 1.0]
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
    """Wilson interval for a rate, exact (Clopper-Pearson) at 0 to 4 events (or non-events).

    Wilson's upper bound at 0 events, :math:`z^2/(n + z^2)`, is below the exact
    one (0 of 30: 11.4% against 11.6%), so at 0 events the upper bound is the
    exact :math:`1 - (\\alpha/2)^{1/n}`, and symmetrically at ``n`` events.

    Examples
    --------
    >>> iv = rate_interval(3, 30)  # few events: Clopper-Pearson (Wilson's is 0.035-0.256)
    >>> [round(x, 3) for x in (iv.estimate, iv.low, iv.high)]
    [0.1, 0.021, 0.265]
    >>> round(rate_interval(0, 30).high, 4)
    0.1157
    """
    iv = wilson(count, n, confidence=confidence)
    if n == 0:
        return iv
    tail = (1.0 - confidence) / 2.0
    if 0 < count <= SMALL_COUNT or 0 < n - count <= SMALL_COUNT:  # Wilson under-covers rare rates: exact there
        from scipy.special import betaincinv

        low = float(betaincinv(count, n - count + 1, tail)) if count else 0.0
        high = float(betaincinv(count + 1, n - count, 1 - tail)) if count < n else 1.0
        iv = Interval(iv.estimate, min(iv.low, low), max(iv.high, high), count, n)
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
    '3 of 30 bluffs: 10% (2–27)'
    """
    iv = rate_interval(count, n, confidence=confidence)
    if n == 0:
        return f"0 of 0 {what}: no queries, no information"
    if count == 0:
        return (f"0 of {n} {what}: the rate could still be up to {pct(iv.high, 1)} "
                f"({pct(confidence)} upper bound)")
    return f"{count} of {n} {what}: {rate_text(iv)}"


# ---------------------------------------------------------------------------
# power
# ---------------------------------------------------------------------------


def questions_needed(d, phrasings: int, *, alpha: float = ALPHA, power: float = 0.8,
                     z: float | None = None) -> float | None:
    """Questions needed for the paired test to detect the observed difference with ``power``.

    Parameters
    ----------
    d : sequence
        Per-question differences (:func:`question_differences`) on the current set.
    phrasings : int
        Phrasings per question (P); the difference per question is ``d / P``.
    z : float, optional
        The test's critical value on the standardised sum (default: the two-sided
        normal quantile at ``alpha``, the pair alone). A family's max-T test rejects
        this pair when ``|sum d| > c``, i.e. at ``z = c / sqrt(sum d^2)``.

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
    za = NormalDist().inv_cdf(1 - alpha / 2) if z is None else float(z)
    zb = NormalDist().inv_cdf(power)
    return (za * math.sqrt(pi) + zb * math.sqrt(max(pi - delta**2, 0.0))) ** 2 / delta**2


def power_words(d, phrasings: int, *, alpha: float = ALPHA, power: float = 0.8, family_size: int = 1,
                z_family: float | None = None, reached: bool | None = None) -> str:
    """Questions needed in a sentence: "alone: N; within this family of M: N'" (the test actually used).

    ``z_family`` is the family's critical value for this pair (see :func:`questions_needed`);
    ``reached`` whether the family's verdict is "different" now. "Enough" is only
    said of the family's own test, and never beside a verdict the family did not reach.

    >>> power_words([1] * 6 + [-1] * 2 + [0] * 24, 1)
    'To detect a difference of 12 pts 80% of the time takes about 124 questions (this pair alone); there are 32.'
    """
    n_now = len(d)
    need = questions_needed(d, phrasings, alpha=alpha, power=power)
    if need is None:
        return (f"No difference was observed on these {n_now} questions: no number of questions "
                "would detect one that is not there.")
    each = f" (each in {phrasings} phrasings)" if phrasings > 1 else ""
    diff = abs(float(np.mean(np.asarray(d, dtype=float) / phrasings)))
    size = f"{100 * diff:.0f} pts" if diff >= 0.01 else f"{100 * diff:.1f} pts"  # a share's difference: in points
    alone = math.ceil(need)
    if family_size <= 1 or z_family is None:
        enough = "; these are enough" if alone <= n_now and reached is not False else f"; there are {n_now}"
        return (f"To detect a difference of {size} {pct(power)} of the time takes about {alone} questions{each} "
                f"(this pair alone){enough}.")
    fam = math.ceil(questions_needed(d, phrasings, alpha=alpha, power=power, z=z_family))
    tail = ("; these are enough" if fam <= n_now and reached else f"; there are {n_now}")
    return (f"To detect a difference of {size} {pct(power)} of the time: alone: {alone} questions{each}; "
            f"within this family of {family_size}: {fam}{tail}.")


def clustered_share(successes: Sequence[float] | np.ndarray, clusters: Sequence | np.ndarray,
                    trials: Sequence[float] | np.ndarray | None = None, *, confidence: float = 0.95) -> Interval:
    """Share ``sum(successes) / sum(trials)`` with the clustered Wilson interval over questions.

    Parameters
    ----------
    successes : array_like of float
        Per item (query or slot), ``0 <= successes <= trials``.
    clusters : array_like
        Each item's question (its cluster); ood queries are their own.
    trials : array_like of float, optional
        Per item; default 1 each.
    confidence : float, keyword-only
        Two-sided level in ``(0, 1)``.

    Returns
    -------
    Interval
        The plain ratio as the estimate; bounds from
        :func:`clustered_wilson` on the per-question sums (exact
        bound at 0 or all events). No trials at all: ``Interval(nan, 0, 1, 0, 0)``.

    Examples
    --------
    >>> iv = clustered_share([1, 1, 0, 0], ["a", "a", "b", "b"])
    >>> iv.estimate, iv.successes, iv.trials
    (0.5, 2, 4)
    >>> zero = clustered_share([0] * 64, [f"q{i // 2}" for i in range(64)])
    >>> zero.low, round(zero.high, 3)  # 0 of 64 queries over 32 questions: the exact bound on 32
    (0.0, 0.109)
    """
    s = np.asarray(successes, dtype=np.float64)
    t = np.ones_like(s) if trials is None else np.asarray(trials, dtype=np.float64)
    labels = np.asarray(clusters, dtype=object)
    if not (s.ndim == t.ndim == labels.ndim == 1) or not (len(s) == len(t) == len(labels)):
        raise ValueError(f"successes, trials and clusters must be 1-D of one length, got {len(s)}, {len(t)}, "
                         f"{len(labels)}")
    if (s < 0).any() or (s > t).any():
        raise ValueError("each item needs 0 <= successes <= trials")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    total_s, total_t = float(s.sum()), float(t.sum())
    if total_t == 0:
        return Interval(float("nan"), 0.0, 1.0, 0, 0)
    _, inverse = np.unique(labels.astype(str), return_inverse=True)
    cs = np.bincount(inverse, weights=s)
    ct = np.bincount(inverse, weights=t)
    keep = ct > 0
    est, low, high = clustered_wilson(cs[keep], ct[keep], confidence=confidence)
    return Interval(float(est), float(low), float(high), int(round(total_s)), int(round(total_t)))
