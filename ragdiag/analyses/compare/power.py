"""What a number of questions can resolve: exact power of the paired sign test.

Two configurations answer the same ``n`` questions. Per question, independently,
only A hits with probability ``p_win``, only B with ``p_loss``; the difference in
recall is ``delta = p_win - p_loss`` and the two disagree on a share
``psi = p_win + p_loss``. The exact two-sided sign test
(:func:`ragdiag.core.stats.sign_test_counts`) rejects at ``alpha`` when, among the
``m`` discordant questions, the wins ``w`` fall in its rejection region. Its power
is summed exactly::

    power = sum_m P(M = m) * P(W in R_m | m),  M ~ Bin(n, psi),  W | m ~ Bin(m, p_win / psi)

where ``R_m`` is found with the same exact test, so the figure is consistent
with the verdicts the Compare page gives.

The report, the Compare page and ``truth stats`` read these figures (the
ground-truth authoring tools import them from here).

:func:`resolvable_difference` is the smallest difference (in points of recall,
on a 0.5-point grid) reached with the given power (80% by default). Without a
discordance it takes the most favourable case, ``psi = delta`` (every
disagreement goes one way): no configuration pair does better, so a smaller
difference *cannot* be told apart with that many questions. With a discordance
(e.g. the share of questions on which two configurations disagreed in a past
run) the figure is the realistic one and is larger.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from dataclasses import dataclass

from ...core.defaults import ALPHA, PRIMARY_K
from ...core.stats import sign_test_counts
from ...core.words import pct

__all__ = ["sign_test_power", "resolvable_difference", "resolution_sentence", "Resolution", "resolvable",
           "default_family_size", "questions_to_resolve", "family_critical", "family_discordant"]


def _binom():
    """scipy's binomial distribution, imported when a power is computed: importing scipy.stats takes about a
    second that a warm ``eval`` (which imports this module through :mod:`ragdiag.analyses.compare`) never needs."""
    from scipy.stats import binom

    return binom


@lru_cache(maxsize=4096)
def _critical(m: int, alpha: float) -> int:
    """Largest ``c`` with sign test p(c, m - c) <= alpha (rejects w <= c or w >= m - c); -1 when none.

    The search starts a few steps under scipy's binomial quantile; the test that decides is the exact
    one up to 200 discordant questions and scipy's binomial distribution (double precision) beyond.
    """
    if m <= 200:
        ok = lambda c: c < m - c and sign_test_counts(c, m - c).p <= alpha  # noqa: E731 - non-increasing in c
    else:
        ok = lambda c: c < m - c and 2.0 * float(_binom().cdf(c, m, 0.5)) <= alpha  # noqa: E731
    c = max(-1, int(_binom().ppf(alpha / 2, m, 0.5)) - 3) if m > 40 else -1
    while c >= 0 and not ok(c):
        c -= 1
    while ok(c + 1):
        c += 1
    return c


def sign_test_power(n: int, p_win: float, p_loss: float, *, alpha: float = ALPHA) -> float:
    """Exact power of the two-sided sign test on ``n`` paired questions (see the module docstring).

    Parameters
    ----------
    n : int
        Questions both configurations answer.
    p_win, p_loss : float
        Per question, the probability that only A hits, and that only B hits.
    alpha : float, keyword-only
        The test's level.

    Returns
    -------
    float
        The probability that the exact two-sided sign test rejects at ``alpha``.

    Examples
    --------
    >>> round(sign_test_power(10, 1.0, 0.0), 6)  # 10 wins of 10: p = 0.002
    1.0

    Five wins of five give p = 2/32 = 0.0625 > 0.05, six of six p = 2/64: five
    questions can never tell two configurations apart, six can. When A wins a
    question with probability 0.5 and never loses, only six disagreements of six
    reject, with probability 0.5 ** 6:

    >>> sign_test_power(5, 1.0, 0.0), round(sign_test_power(6, 1.0, 0.0), 6), round(sign_test_power(6, 0.5, 0.0), 6)
    (0.0, 1.0, 0.015625)
    """
    if n < 0 or p_win < 0 or p_loss < 0 or p_win + p_loss > 1 + 1e-12:
        raise ValueError(f"need n >= 0 and probabilities p_win, p_loss >= 0 with sum <= 1; got {n}, {p_win}, {p_loss}")
    # probabilities below 1e-15 change the power by less than that; scipy's pmf overflows on subnormals
    p_win, p_loss = (0.0 if p < 1e-15 else p for p in (p_win, p_loss))
    psi = p_win + p_loss
    if psi == 0:
        return 0.0
    theta = p_win / psi
    # only the numbers of discordant questions with a chance above 1e-16 add to the sum
    lo, hi = (0, n) if n <= 200 else (int(_binom().ppf(1e-16, n, psi)), int(_binom().isf(1e-16, n, psi)) + 1)
    m = np.arange(max(lo, 0), min(hi, n) + 1)
    c = np.array([_critical(int(k), alpha) for k in m])
    ok = c >= 0
    if not ok.any():
        return 0.0
    m, c = m[ok], c[ok]
    reject = _binom().cdf(c, m, theta) + _binom().sf(m - c - 1, m, theta)
    total = float(np.sum(_binom().pmf(m, n, psi) * reject))
    return float(min(total, 1.0))


@lru_cache(maxsize=256)
def resolvable_difference(n: int, *, alpha: float = ALPHA, power: float = 0.8,
                          discordance: float | None = None) -> float | None:
    """Smallest recall difference (points, 0.5 grid) the sign test detects with ``power`` on ``n`` questions.

    Parameters
    ----------
    n : int
        Questions.
    alpha, power : float, keyword-only
        The test's level and the power asked for.
    discordance : float, optional
        Share of questions on which the two configurations disagree; None: the most
        favourable case (every disagreement goes one way).

    Returns
    -------
    float or None
        Points of recall; None when no difference up to ``discordance`` (or 100 points) reaches it.

    Examples
    --------
    >>> resolvable_difference(32)
    24.0
    """
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), e.g. 0.8; got {power}")
    if discordance is not None and not 0 < discordance <= 1:
        raise ValueError(f"discordance is a share of questions in (0, 1], e.g. 0.3; got {discordance}")
    top = discordance if discordance is not None else 1.0
    for half_points in range(1, int(math.floor(top * 200 + 1e-9)) + 1):
        delta = half_points / 200
        psi = delta if discordance is None else discordance
        if sign_test_power(n, (psi + delta) / 2, (psi - delta) / 2, alpha=alpha) >= power:
            return half_points / 2
    return None


def default_family_size() -> int:
    """Pairs among the default configurations (every strategy x default retriever): the "all pairs" family."""
    from ...index.chunking import DEFAULT_STRATEGIES
    from ...retrieval.registry import retriever_names

    m = len(DEFAULT_STRATEGIES) * len(retriever_names(default_only=True))
    return m * (m - 1) // 2


@dataclass(frozen=True)
class Resolution:
    """What ``n`` questions in ``phrasings`` phrasings can resolve: alone, and within a family of ``family_size``.

    ``alone`` and ``family`` are the smallest differences in recall (shares, not
    points) the test detects with 80% power in the most favourable case: alone the
    exact sign-flip test, within the family its studentized max-T test at the
    family's critical value ``critical`` (``|S| / sqrt(Q) > c``); ``None`` when no
    difference can be.
    """

    n: int
    phrasings: int
    k: int
    alone: float | None
    family_size: int
    family: float | None
    critical: float | None = None

    def as_json(self) -> dict:
        """``{"alone": share, "family": {"size": M, "points": share, "critical": c}}`` (the ``truth stats --json`` form)."""
        return {"alone": self.alone, "family": {"size": self.family_size, "points": self.family,
                                                "critical": self.critical},
                "questions": self.n, "phrasings": self.phrasings, "k": self.k}

    def words(self) -> str:
        """What can be told apart alone and within the family, in one sentence.

        >>> Resolution(32, 2, 4, 0.12, 276, 0.25).words()[:97]
        'with 32 questions in 2 phrasings, a difference in R@4 under about 12 points cannot be told apart '
        """
        each = f" in {self.phrasings} phrasings" if self.phrasings > 1 else ""
        head = f"with {self.n} questions{each}, "
        how = ("exact sign-flip test alone, the family's studentized max-T"
               + (f" (critical value {self.critical:.2f})" if self.critical is not None else "")
               + " within it; 80% power, even if every disagreement went one way")
        if self.alone is None:
            return (f"{head}no difference in R@{self.k} can be told apart, alone or within a family of "
                    f"{self.family_size} comparisons ({how})")
        alone = f"a difference in R@{self.k} under about {100 * self.alone:g} points cannot be told apart alone"
        if self.family is None:
            return f"{head}{alone}; within a family of {self.family_size} comparisons no difference can ({how})"
        return (f"{head}{alone}; within a family of {self.family_size} comparisons, under about "
                f"{100 * self.family:g} points ({how})")


def family_discordant(critical: float) -> int:
    """Fewest one-way discordant questions the family's studentized test calls different: ``sqrt(m) > c``.

    ``m`` questions each differing by one phrasing, all the same way, give
    ``|S| / sqrt(Q) = m / sqrt(m)``; more phrasings per question change nothing
    (``2m / sqrt(4m)``), so this is the family's most favourable case.

    >>> family_discordant(1.96), family_discordant(3.3)
    (4, 11)
    """
    return int(math.floor(critical * critical + 1e-12)) + 1


@lru_cache(maxsize=64)
def family_critical(configs: int, n: int, phrasings: int = 1, *, alpha: float = ALPHA, draws: int = 4000,
                    seed: int = 0) -> float:
    """The studentized max-T critical value of all pairs of ``configs`` configurations on ``n`` questions, by simulation.

    For a plan made before any evaluation (``truth stats``): ``configs`` independent
    systems of recall 0.5 on ``n`` questions in ``phrasings`` phrasings, and the null of
    :func:`ragdiag.analyses.compare.simultaneous.pair_null` over it (seeded). When a
    family was evaluated, its own critical value is the one to use.

    >>> 2.5 < family_critical(6, 32, 2) < 3.5
    True
    """
    from .simultaneous import _from_samples, pair_null

    if configs < 2 or n < 1:
        raise ValueError(f"need at least two configurations and one question, got {configs} and {n}")
    rng = np.random.default_rng(seed)
    Y = rng.binomial(phrasings, 0.5, size=(configs, n)).astype(np.int64)
    pairs = np.array([(i, j) for i in range(configs) for j in range(i + 1, configs)], dtype=np.int64)
    null, method = pair_null(Y, [list(range(configs))], pairs, draws=draws, seed=seed)
    return _from_samples(np.abs(null).max(axis=1), method, alpha).critical


def _smallest_with(n: int, m0: int, power: float) -> float | None:
    """Smallest difference (points, 0.5 grid) with ``P(Bin(n, delta) >= m0) >= power``; None when none up to 100."""
    for half_points in range(1, 201):
        if _binom().sf(m0 - 1, n, half_points / 200) >= power:
            return half_points / 2
    return None


def resolvable(n: int, phrasings: int = 1, *, k: int = PRIMARY_K, family_size: int | None = None,
               alpha: float = ALPHA, power: float = 0.8, critical: float | None = None) -> Resolution:
    """The smallest resolvable difference alone and within a family, from the test actually used.

    With ``P`` phrasings a question's difference is ``d`` in ``-P..P`` and the
    test is the exact sign-flip test over questions; its most favourable case
    is one phrasing flipped per discordant question, all the same way (every
    non-zero ``d`` counts the same for the signs, so more questions of
    magnitude 1 beat fewer of magnitude P): a recall difference ``delta`` is
    then ``P * delta`` discordant questions, and the resolvable difference is
    the sign test's divided by ``P``. Within a family the test is the
    studentized max-T at its critical value ``critical`` (the family's own,
    e.g. :attr:`ragdiag.analyses.compare.best.BestResult.critical`; default: by
    simulation, :func:`family_critical`, for the ``configs`` whose pairs make
    ``family_size``): it calls a pair different once more than ``c**2``
    questions disagree one way (:func:`family_discordant`).

    >>> r = resolvable(32, 2, family_size=15, critical=3.0)
    >>> r.alone, r.family
    (0.12, 0.185)
    """
    if n < 0 or phrasings < 1:
        raise ValueError(f"need n >= 0 questions and at least one phrasing, got {n}, {phrasings}")
    m = default_family_size() if family_size is None else int(family_size)
    if m < 1:
        raise ValueError(f"family_size must be at least 1, got {family_size}")

    def share(d: float | None) -> float | None:
        return None if d is None else round(d / 100 / phrasings, 6)

    alone = share(resolvable_difference(n, alpha=alpha, power=power) if n else None)
    if critical is None and n:
        configs = int(round((1 + math.sqrt(1 + 8 * m)) / 2))
        critical = family_critical(max(configs, 2), n, phrasings, alpha=alpha)
    fam = share(_smallest_with(n, family_discordant(critical), power)) if n and critical is not None else None
    return Resolution(n, phrasings, k, alone, m, fam, critical)


def resolution_sentence(n: int, k: int, *, alpha: float = ALPHA, power: float = 0.8) -> str:
    """"with 32 questions, a difference in R@4 smaller than about 24 points cannot be told apart".

    >>> "smaller than about 24 points" in resolution_sentence(32, 4)
    True
    >>> resolution_sentence(5, 4).endswith("(it needs at least 6 questions that all go one way)")
    True
    """
    if n == 0:
        return "with no valid questions, nothing can be told apart"
    d = resolvable_difference(n, alpha=alpha, power=power)
    if d is None:
        return (f"with {n} questions, no difference in R@{k} can be told apart by the sign test at alpha {alpha} "
                f"(it needs at least {_min_discordant(alpha)} questions that all go one way)")
    return (f"with {n} questions, a difference in R@{k} smaller than about {d:g} points cannot be told apart "
            f"(exact sign test, alpha {alpha}, {pct(power)} power, even if every disagreement went one way)")


def _min_discordant(alpha: float) -> int:
    m = 1
    while _critical(m, alpha) < 0:
        m += 1
    return m


def questions_to_resolve(difference: float, phrasings: int = 1, *, alpha: float = ALPHA, power: float = 0.8,
                         limit: int = 100_000, critical: float | None = None) -> int | None:
    """Fewest questions on which a difference in recall of ``difference`` (a share) can be resolved with ``power``.

    The most favourable case of :func:`resolvable` read the other way: with ``P``
    phrasings, ``P * difference`` of the questions disagree, all the same way, and
    the exact test rejects once at least ``m0`` of them do (``m0``: the fewest
    one-way discordant questions that reach ``alpha``). Power is then
    ``P(Bin(n, P * difference) >= m0)``, non-decreasing in ``n``, so the answer is
    a lower bound: a real pair, whose disagreements go both ways, needs more.

    Parameters
    ----------
    difference : float
        In (0, 1]: e.g. 0.05 for 5 points of recall.
    phrasings : int
        Phrasings per question.
    alpha, power : float, keyword-only
        The test's level (``alpha / M`` within a family of ``M``) and the power asked for.
    limit : int, keyword-only
        Give up (None) beyond this many questions.
    critical : float, keyword-only
        Within a family: its studentized max-T critical value (``m0`` is then
        :func:`family_discordant`; the critical value is taken as it is at this size,
        as a studentized statistic's nearly is).

    Examples
    --------
    Six one-way questions reach p = 2/64 at alpha 0.05; with 2 phrasings a 5-point
    difference makes 10% of the questions disagree, and ``P(Bin(n, 0.1) >= 6) >= 0.8``
    first holds at n = 78:

    >>> questions_to_resolve(0.05, 2)
    78
    """
    if not 0 < difference <= 1:
        raise ValueError(f"difference is a share of recall in (0, 1], e.g. 0.05; got {difference}")
    if phrasings < 1 or not 0 < power < 1:
        raise ValueError(f"need at least one phrasing and power in (0, 1); got {phrasings}, {power}")
    share = min(1.0, phrasings * difference)
    m0 = _min_discordant(alpha) if critical is None else family_discordant(critical)
    if m0 > limit or _binom().sf(m0 - 1, limit, share) < power:
        return None
    lo, hi = m0, limit  # power(lo - 1) < power <= power(hi): bisect on the monotone power
    if _binom().sf(m0 - 1, lo, share) >= power:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _binom().sf(m0 - 1, mid, share) >= power:
            hi = mid
        else:
            lo = mid
    return hi
