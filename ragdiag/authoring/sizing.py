"""How many questions a paired comparison needs: the exact power of the sign-flip test over questions.

``compare`` tests two configurations with the exact sign-flip test over
questions (:func:`ragdiag.analyses.compare.paired.sign_flip_test`): per question
``d`` is the sum over its ``P`` phrasings of (hit of A - hit of B), an integer
in ``-P..P``, and the p-value is ``P(|sum s_q |d_q|| >= |sum d_q|)`` over fair
signs ``s_q``. This module computes the power of exactly that test under a
model of the two configurations read from an observed run:

* a question is **discordant** (``d != 0``) with probability ``psi`` (the
  observed share, the *discordance*);
* a discordant question's magnitude ``|d| = j`` has probability ``pi_j`` (the
  observed shares; with one phrasing flipped per discordant question, ``j = 1``);
* its sign is ``+`` with probability ``theta``, chosen so that the expected
  difference in recall is the difference to detect::

      delta = psi * E|d| * (2 theta - 1) / P,   E|d| = sum_j j pi_j

  When the observed discordance is too small to produce ``delta`` even with
  every disagreement one way (``theta > 1``), the least discordance that can,
  ``psi = delta P / E|d|`` with ``theta = 1``, is used instead (and said).

The power is summed exactly over the magnitude counts ``(m_1..m_P)`` of the
``n`` questions (a multinomial), each term the probability that the signed sum
``S = sum_j j (2 W_j - m_j)``, ``W_j ~ Bin(m_j, theta)``, falls in the exact
test's rejection region ``{s : P_null(|S| >= |s|) <= alpha}`` (``W_j ~ Bin(m_j,
1/2)`` under the null). Terms below ``1e-13`` are left out and their mass is
reported (``unaccounted``), so the figure is exact to that bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from ..core.defaults import ALPHA

__all__ = ["Alternative", "alternative", "sign_flip_power", "questions_for_power", "Sizing", "size_for", "SIZING_STEPS",
           "MAX_QUESTIONS"]

#: The largest ground truth :func:`questions_for_power` looks at.
MAX_QUESTIONS = 5000
_EPS = 1e-13


@dataclass(frozen=True)
class Alternative:
    """The two configurations' disagreement: ``discordance``, the magnitudes ``pi`` (``|d| = 1..P``), ``theta``.

    ``difference`` is the expected difference in recall it implies (a share);
    ``one_way`` says the observed discordance could not produce it and the least that can was used.
    """

    discordance: float
    pi: tuple[float, ...]
    theta: float
    difference: float
    phrasings: int
    one_way: bool = False

    def as_json(self) -> dict:
        """The model in plain fields."""
        return {"discordance": self.discordance, "magnitudes": list(self.pi), "p_plus": self.theta,
                "difference": self.difference, "phrasings": self.phrasings, "one_way": self.one_way}


def alternative(difference: float, discordance: float, pi: Sequence[float] = (1.0,), *,
                phrasings: int | None = None) -> Alternative:
    """The model of a true ``difference`` in recall at the given ``discordance`` (see the module docstring).

    Parameters
    ----------
    difference : float
        The difference in recall to detect, a share in (0, 1] (0.05 for 5 points).
    discordance : float
        Share of questions on which the two configurations disagree, in [0, 1].
    pi : sequence of float
        ``pi[j - 1]``: the share of discordant questions with ``|d| = j``; sums to 1.
    phrasings : int, optional
        ``P``, phrasings per question (default ``len(pi)``).

    Examples
    --------
    Two phrasings, 20% of questions disagree by one phrasing: a 5-point difference
    is a win on 75% of them (``0.2 * 1 * (2 * 0.75 - 1) / 2 = 0.05``):

    >>> alternative(0.05, 0.2, (1.0, 0.0)).theta
    0.75

    At 8% no split of the disagreements makes 5 points: the least discordance that can is 10%, all one way:

    >>> a = alternative(0.05, 0.08, (1.0, 0.0)); (a.discordance, a.theta, a.one_way)
    (0.1, 1.0, True)
    """
    p = len(pi) if phrasings is None else int(phrasings)
    if not 0 < difference <= 1:
        raise ValueError(f"difference is a share of recall in (0, 1], e.g. 0.05; got {difference}")
    if not 0 <= discordance <= 1:
        raise ValueError(f"discordance is a share of questions in [0, 1], e.g. 0.2; got {discordance}")
    pis = tuple(float(x) for x in pi)
    if not pis or any(x < 0 for x in pis) or abs(sum(pis) - 1) > 1e-9 or p < len(pis):
        raise ValueError(f"pi must be non-negative shares of |d| = 1..P summing to 1 (P = phrasings >= len(pi)); "
                         f"got {pis} with P = {p}")
    mean_mag = sum(j * x for j, x in enumerate(pis, 1))
    least = difference * p / mean_mag
    if least > 1 + 1e-12:
        raise ValueError(f"a difference of {difference:g} cannot come from disagreements of this size "
                         f"(at most {mean_mag / p:g} even if every question disagreed one way)")
    if discordance <= least:
        return Alternative(round(min(least, 1.0), 12), pis, 1.0, difference, p, one_way=discordance < least)
    theta = 0.5 + difference * p / (2 * discordance * mean_mag)
    return Alternative(discordance, pis, theta, difference, p)


_LOG_FACT = np.cumsum(np.log(np.maximum(np.arange(MAX_QUESTIONS * 4 + 2), 1)))


def _pmf(m: int, p: float) -> np.ndarray:
    """``Bin(m, p)`` on ``0..m`` from log factorials (a scipy call per state costs more than the sum)."""
    k = np.arange(m + 1)
    if p <= 0 or p >= 1:
        out = np.zeros(m + 1)
        out[0 if p <= 0 else m] = 1.0
        return out
    return np.exp(_LOG_FACT[m] - _LOG_FACT[k] - _LOG_FACT[m - k] + k * np.log(p) + (m - k) * np.log1p(-p))


@lru_cache(maxsize=65536)
def _law(mags: tuple[int, ...], ms: tuple[int, ...], p: float) -> np.ndarray:
    """Law of ``T = sum_j mags_j W_j``, ``W_j ~ Bin(m_j, p)``, on ``0..sum mags_j m_j``."""
    law = np.ones(1)
    for j, m in zip(mags, ms):
        if m:
            scaled = np.zeros(j * m + 1)
            scaled[::j] = _pmf(m, p)
            law = np.convolve(law, scaled)
    return law


@lru_cache(maxsize=65536)
def _reject(mags: tuple[int, ...], ms: tuple[int, ...], alpha: float) -> np.ndarray:
    """Boolean over ``T``: the exact sign-flip test rejects when ``S = 2T - sum mags_j m_j`` is observed."""
    null = _law(mags, ms, 0.5)
    total = len(null) - 1
    a = np.abs(2 * np.arange(total + 1) - total)
    order = np.argsort(-a, kind="stable")
    # p(T) = P(|S'| >= |S|): cumulative mass over |S'| from the largest down, read at the last equal |S'|
    cum = np.cumsum(null[order])
    sorted_a = a[order]
    last = np.searchsorted(-sorted_a, -sorted_a, side="right") - 1
    p = np.empty(total + 1)
    p[order] = cum[last]
    return p <= alpha * (1 + 1e-9)


def _states(n: int, psi: float, pi: tuple[float, ...]):
    """``(probability, (m_1..m_c))`` over the multinomial of ``n`` questions; terms under ``_EPS`` dropped."""
    ms_mass = _pmf(n, psi)
    for big_m in np.flatnonzero(ms_mass > _EPS).tolist():
        yield from _split(float(ms_mass[big_m]), int(big_m), pi, ())


def _split(prob: float, m: int, pi: tuple[float, ...], done: tuple[int, ...]):
    if len(pi) == 1 or m == 0:
        yield prob, done + (m,) + (0,) * (len(pi) - 1)
        return
    rest = sum(pi[1:])
    share = pi[0] / (pi[0] + rest) if pi[0] + rest > 0 else 1.0
    pm = _pmf(m, share)
    for k in np.flatnonzero(pm * prob > _EPS).tolist():
        yield from _split(prob * float(pm[k]), m - k, pi[1:], done + (k,))


def sign_flip_power(n: int, alt: Alternative, *, alpha: float = ALPHA) -> tuple[float, float]:
    """Exact power of the two-sided sign-flip test over ``n`` questions under ``alt``, and the mass left out.

    Returns
    -------
    (float, float)
        The power, and the probability of the magnitude counts left out (each under 1e-13):
        the true power lies in ``[power, power + unaccounted]``.

    Examples
    --------
    With one magnitude this is the exact sign test (cf. :func:`ragdiag.analyses.compare.power.sign_test_power`):
    six questions that all go one way reject (p = 2/64), five never do.

    >>> sign_flip_power(6, alternative(1.0, 1.0, (1.0,)))[0], sign_flip_power(5, alternative(1.0, 1.0, (1.0,)))[0]
    (1.0, 0.0)
    """
    if n < 0 or n > MAX_QUESTIONS:
        raise ValueError(f"n must be 0 to {MAX_QUESTIONS} questions, got {n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    classes = [(j, x) for j, x in enumerate(alt.pi, 1) if x > 0]  # magnitudes that occur
    mags = tuple(j for j, _ in classes)
    pi = tuple(x for _, x in classes)
    power = covered = 0.0
    for prob, ms in _states(n, alt.discordance, pi):
        covered += prob
        if not any(ms):
            continue
        power += prob * float(_law(mags, ms, alt.theta)[_reject(mags, ms, alpha)].sum())
    return min(power, 1.0), max(0.0, 1.0 - covered)


def _normal_guess(alt: Alternative, power: float, alpha: float) -> float:
    """Questions by the normal approximation of the statistic (a starting point for the exact search)."""
    from statistics import NormalDist

    mean_mag = sum(j * x for j, x in enumerate(alt.pi, 1))
    sq = sum(j * j * x for j, x in enumerate(alt.pi, 1))
    mu = alt.discordance * mean_mag * (2 * alt.theta - 1)
    v0 = alt.discordance * sq
    v1 = max(v0 - mu * mu, 1e-12)
    z = NormalDist().inv_cdf(1 - alpha / 2) * v0 ** 0.5 + NormalDist().inv_cdf(power) * v1 ** 0.5
    return (z / mu) ** 2 if mu > 0 else float("inf")


def questions_for_power(alt: Alternative, *, power: float = 0.8, alpha: float = ALPHA,
                        limit: int = MAX_QUESTIONS) -> int | None:
    """Fewest questions ``n`` with :func:`sign_flip_power` at least ``power`` (bracketed from the normal
    approximation, then bisected).

    The power of a discrete test is not monotone in ``n`` (it saw-tooths by a few
    points), so the answer is the smallest ``n`` of the bisection: its power is
    at least ``power`` and that of ``n - 1`` is below. None beyond ``limit``.

    >>> questions_for_power(alternative(0.05, 0.1, (1.0, 0.0)))  # the most favourable case of power.questions_to_resolve
    78
    """
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), e.g. 0.8; got {power}")

    def ok(n: int) -> bool:
        return sign_flip_power(n, alt, alpha=alpha)[0] >= power

    guess = _normal_guess(alt, power, alpha)
    if guess > 4 * limit:
        return None
    # bracket around the normal approximation, then bisect: lo fails, hi passes
    hi = max(1, min(limit, int(guess)))
    lo = 0
    while not ok(hi):
        if hi >= limit:
            return None
        lo, hi = hi, min(limit, int(hi * 1.25) + 1)
    if lo == 0:
        lo = hi
        while lo > 0 and ok(lo):
            hi, lo = lo, int(lo / 1.25)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class Sizing:
    """Questions a paired comparison needs, from the observed disagreement of two configurations.

    ``planned`` at the upper end of the discordance's 95% Wilson interval over questions
    (``alternative``; the conservative case, never under the observed discordance's count), ``favourable``
    at the observed discordance, with ``low``-``high`` from the interval's two ends (``discordance_interval``).
    """

    now: int
    discordant: int
    discordance_interval: tuple[float, float]
    alternative: Alternative
    planned: int | None
    power: float | None
    low: int | None
    high: int | None
    alpha: float
    target: float
    favourable: int | None = None  # planned at the observed discordance (the conservative planned is at its upper end)
    favourable_alternative: Alternative | None = None

    @property
    def needed(self) -> int | None:
        """More questions to write (0 when ``now`` already reaches ``planned``)."""
        return None if self.planned is None else max(0, self.planned - self.now)

    def as_json(self) -> dict:
        """Plain fields for ``truth plan --json``."""
        return {"questions_now": self.now, "discordant": self.discordant, "planned": self.planned,
                "power_at_planned": self.power, "planned_range": [self.low, self.high],
                "discordance_interval": list(self.discordance_interval), "alpha": self.alpha,
                "target_power": self.target, "model": self.alternative.as_json(),
                "planned_at": "the upper end of the discordance's interval (the conservative case)",
                "planned_favourable": self.favourable,
                "model_favourable": None if self.favourable_alternative is None else
                self.favourable_alternative.as_json(),
                "test": "exact two-sided sign-flip test over questions (compare, this pair alone)"}


#: The long steps of :func:`size_for` (three searches for a number of questions, one power at the plan): what its
#: ``step`` callback is called after.
SIZING_STEPS = 4


def size_for(d: Sequence[int], phrasings: int, *, margin: float, alpha: float = ALPHA,
             power: float = 0.8, step: Callable[[], None] | None = None) -> Sizing:
    """Questions needed to detect ``margin`` with ``power``, at the discordance the per-question ``d`` show.

    ``d``: the observed per-question differences (:func:`ragdiag.analyses.compare.paired.question_differences`,
    integers in ``-P..P``). With no discordant question the magnitudes default to one phrasing flipped.
    ``step``: called after each of its :data:`SIZING_STEPS` long steps (exact powers: seconds each on a large set).

    >>> s = size_for([1] * 3 + [0] * 29, 2, margin=0.05)
    >>> s.favourable_alternative.one_way, s.favourable  # 3 of 32 disagree: 5 points needs 10%, all one way
    (True, 78)
    >>> round(s.discordance_interval[1], 2), s.planned  # the worst case first: 24% may disagree
    (0.24, 200)
    """
    from ..core.stats import wilson

    arr = np.asarray(d, dtype=np.float64)
    if arr.ndim != 1 or not np.all(arr == np.round(arr)) or (np.abs(arr) > phrasings).any():
        raise ValueError(f"d must be integer differences per question in -{phrasings}..{phrasings}")
    n = arr.size
    mags = np.abs(arr[arr != 0]).astype(int)
    disc = int(mags.size)
    pi = tuple(float(np.mean(mags == j)) for j in range(1, phrasings + 1)) if disc else \
        (1.0,) + (0.0,) * (phrasings - 1)
    iv = wilson(disc, n) if n else None
    psi = disc / n if n else 0.0
    lo_psi, hi_psi = (iv.low, iv.high) if iv is not None else (0.0, 1.0)
    seen = alternative(margin, psi, pi, phrasings=phrasings)
    done = step or (lambda: None)
    favourable = questions_for_power(seen, power=power, alpha=alpha)
    done()
    ends = []
    for x in (lo_psi, hi_psi):
        ends.append(questions_for_power(alternative(margin, x, pi, phrasings=phrasings), power=power, alpha=alpha))
        done()
    finite = [e for e in ends if e is not None]
    low = min(finite) if finite else None
    high = None if any(e is None for e in ends) else max(ends)
    # the worst case first: planned at the upper end of the discordance's interval (more disagreement, more noise),
    # never under the observed discordance's count; the observed one is the favourable case, said second
    upper = alternative(margin, hi_psi, pi, phrasings=phrasings)
    at_upper = ends[1]
    if at_upper is None or (favourable is not None and at_upper >= favourable):
        alt, planned = upper, at_upper
    else:
        alt, planned = seen, favourable
    got = None if planned is None else sign_flip_power(planned, alt, alpha=alpha)[0]
    done()
    return Sizing(n, disc, (float(lo_psi), float(hi_psi)), alt, planned, got, low, high, alpha, power,
                  favourable, seen)

