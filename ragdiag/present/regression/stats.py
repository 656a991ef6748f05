"""The gate's paired test: fail when shown worse, pass when no question got worse or when shown no worse than the margin.

Two runs on the same ground truth are compared question by question (the
phrasings of a question are one unit, as everywhere in ragdiag). Per question
``d = sum over its phrasings of (candidate - baseline)``, oriented so that a
positive ``d`` is better for the candidate; ``n`` is its number of phrasings.
The difference of rates is ``sum(d) / sum(n)``.

**The rule** (:data:`RULE`), one for every run, monotone: a candidate that is
better on any one more question never gets a worse verdict (property-tested):

1. *fail* when shown worse (below);
2. *pass* when no question got worse (nothing changed, or only wins): the data
   then say nothing against the candidate, but cannot rule out a rare loss either,
   so the sentence says how large a per-question loss rate would pass unseen
   (0 of 32: up to 10.9%) and the gate's **false-pass rate at the margin** for the
   run's own question count (:func:`false_pass_rate`: 32 questions, 5 points:
   about 19%); ``strict`` drops this step, so a pass needs non-inferiority shown;
3. *pass* when shown no worse than the margin (below);
4. else *inconclusive*, with the gate's power against a 10-point regression at
   the run's question count (:func:`regression_power`).

* **worse** (fail): the exact sign-flip test (:func:`ragdiag.analyses.compare.sign_flip_test`)
  in one-sided form, ``p_worse = P(sum s_q |d_q| <= sum d_q)`` over independent
  fair signs ``s_q``; with one phrasing per question it is the one-sided exact
  sign test on the discordant questions (``scipy.stats.binomtest``).
* **no worse than the margin** (pass, non-inferiority): the score test of
  ``H0: difference <= -margin`` (:func:`ragdiag.analyses.compare.score.score_test`): the per-question outcomes
  ``(d, n)`` are a multinomial over every possible ``(d, n)``, the restricted
  maximum-likelihood law under ``H0`` is found exactly (a one-dimensional dual),
  and ``z = sum_q (d_q + margin n_q) / sqrt(G * Var_H0)``. With one phrasing it
  is Tango's score test for a difference of paired proportions [1]_. Unlike a
  sign-flip test of shifted differences, it does not treat unchanged questions
  as evidence of their own (29 unchanged out-of-domain queries and one improved
  do not show a bluff rate within 5 points).
* **interval** (``1 - 2 alpha``, 90% at the default 0.05): each end is the bound
  of the test that decides on its side, so the verdict and the interval never
  disagree. The lower end is where the score test stops rejecting (pass: above
  ``-margin``); the upper end is where the one-sided sign-flip test of the
  shifted differences ``d_q - delta n_q`` stops rejecting (at ``delta = 0`` it is
  the exact test above; fail: below 0; when not shown worse, at least the score
  interval's upper end, which does not collapse when few questions moved). Both come from one law: the joint law
  of ``(A, B) = (sum s_q d_q, sum s_q n_q)`` on an integer grid, since
  ``sum s_q (d_q - delta n_q) = A - delta B`` for every shift. Away from 0 the
  shifted sign-flip bound treats unchanged questions as symmetric noise and is
  on the narrow side: read the upper end as approximate.

References
----------
.. [1] T. Tango, "Equivalence test and confidence interval for the difference in
   proportions for the paired-sample design", Statistics in Medicine 17 (1998) 891-908.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from ...analyses.compare.paired import question_differences, question_groups
from ...analyses.compare.score import score_bounds, score_curve, score_test
from ...core.defaults import PRACTICAL_MARGIN

__all__ = ["PairedGate", "paired_gate", "VERDICTS", "RULE", "false_pass_rate", "regression_power", "REGRESSION"]

#: The largest joint sign-flip grid (cells) :func:`paired_gate` builds; beyond it, see the notes in its body.
MAX_GRID = 4_000_000
#: The most questions :func:`paired_gate` looks for when it says how many would decide an inconclusive result.
MAX_NEEDED = 20_000
#: The verdicts of a check, worst first.
VERDICTS = ("fail", "inconclusive", "pass")
#: The regression whose detection power an inconclusive result reports (10 points).
REGRESSION = 0.10
#: The gate's rule in words (the Markdown's notes and the README say it the same way).
RULE = ("fail when the candidate is shown worse (one-sided exact sign-flip test over questions, p < alpha); "
        "pass when no question got worse (nothing changed, or only wins; --strict: only when shown no worse "
        "than the margin) or when shown no worse than the margin (score test, p < alpha); else inconclusive. "
        "Monotone: a candidate better on one more question never gets a worse verdict")
_TOL = 1e-9


@dataclass(frozen=True)
class PairedGate:
    """The paired gate of one rate (the difference is candidate - baseline, in the rate's own direction).

    ``estimate``, ``low`` and ``high`` are differences of rates (``+0.05`` = 5 points
    higher for the candidate); for a rate where lower is better (bluffs) a
    positive difference is a worse candidate. ``needed`` is the number of
    questions that would decide an inconclusive result at the same mix of
    wins, losses and ties (both tests run on the scaled mix; None when no number up to
    :data:`MAX_NEEDED` would).
    """

    units: int
    changed: int
    wins: int
    losses: int
    ties: int
    estimate: float
    low: float
    high: float
    p_worse: float
    p_noninferior: float
    margin: float
    alpha: float
    verdict: str
    needed: int | None = None
    needed_verdict: str | None = None
    strict: bool = False
    false_pass: float = math.nan  # P(pass) when the candidate is truly `margin` worse (rare whole-question losses)
    unseen: float = math.nan  # no unit worse: the largest per-unit loss rate not ruled out (95% exact bound)
    power: float = math.nan  # P(fail) against a REGRESSION-point regression at this many units

    @property
    def none_worse(self) -> bool:
        """No unit got worse (the rule's pass without a test, unless ``strict``)."""
        return self.losses == 0

    @property
    def p(self) -> float | None:
        """The p of the test that decided the verdict (fail: worse; else non-inferiority; None: no unit worse)."""
        if self.none_worse and not self.strict and self.verdict == "pass" and not self.p_noninferior < self.alpha:
            return None
        return self.p_worse if self.verdict == "fail" else self.p_noninferior


def _binomial_weights(c: int) -> np.ndarray:
    k = np.arange(c + 1)
    lg = np.array([math.lgamma(c + 1) - math.lgamma(i + 1) - math.lgamma(c - i + 1) for i in k])
    return np.exp(lg - c * math.log(2.0))


class _SignFlipLaw:
    """The joint law of ``(A, B) = (sum s_q d_q, sum s_q n_q)`` over fair signs, on an integer grid.

    ``sum s_q (d_q - delta n_q) = A - delta B``, so one law serves every shift;
    the gate uses the unshifted one-sided tail (:meth:`lower` at 0).
    """

    def __init__(self, d: np.ndarray, n: np.ndarray):
        self.a_obs = int(d.sum())
        self.b_obs = int(n.sum())
        ra, rb = int(np.abs(d).sum()), int(n.sum())
        la, lb = 2 * ra + 1, 2 * rb + 1
        pairs: dict[tuple[int, int], int] = {}
        for dq, nq in zip(d.tolist(), n.tolist()):
            pairs[(int(dq), int(nq))] = pairs.get((int(dq), int(nq)), 0) + 1
        # A circular convolution on an la x lb grid holds the whole support (|A| <= ra, |B| <= rb): no aliasing.
        spectrum = None
        for (dq, nq), c in pairs.items():
            kernel = np.zeros((la, lb))
            steps = 2 * np.arange(c + 1) - c
            np.add.at(kernel, ((steps * dq) % la, (steps * nq) % lb), _binomial_weights(c))
            f = np.fft.rfft2(kernel)
            spectrum = f if spectrum is None else spectrum * f
        grid = np.fft.irfft2(spectrum, s=(la, lb)) if spectrum is not None else np.ones((1, 1))
        grid = np.clip(grid, 0.0, None)
        grid[grid < 1e-15] = 0.0
        ia, ib = np.nonzero(grid)
        self.a = np.where(ia > ra, ia - la, ia).astype(np.float64)
        self.b = np.where(ib > rb, ib - lb, ib).astype(np.float64)
        self.w = grid[ia, ib] / grid[ia, ib].sum()

    def lower(self, delta: float) -> float:
        """``P(A - delta B <= A_obs - delta B_obs)``: small when the true shift is below ``delta``."""
        t = (self.a - self.a_obs) - delta * (self.b - self.b_obs)
        return float(min(1.0, self.w[t <= _TOL].sum()))


#: Bisection steps decided from one evaluation of the score statistic at every midpoint they may visit (2**6 - 1):
#: the statistic costs about as much at 63 shifts as at one, so 50 steps take 9 evaluations instead of 50.
_LEVELS = 6


def _bisect(test, lo: float, hi: float, *, rejected_at_lo: bool, levels: int = 1, steps: int = 50) -> float:
    """The boundary in [lo, hi] between shifts ``test`` rejects and those it does not.

    ``test`` takes an array of shifts and returns whether each is rejected. Each call decides ``levels`` steps at
    once from the ``2**levels - 1`` midpoints those steps may visit, computed as one step at a time computes them,
    so the result does not depend on ``levels``:

    >>> t = lambda xs: [x < 0.3 for x in xs]
    >>> _bisect(t, 0.0, 1.0, rejected_at_lo=True) == _bisect(t, 0.0, 1.0, rejected_at_lo=True, levels=6)
    True
    """
    done = 0
    while done < steps:
        k = min(levels, steps - done)
        ends = [(lo, hi)]  # heap order: node i spans ends[i]; its halves are nodes 2i + 1 (low) and 2i + 2 (high)
        mids = []
        for i in range(2 ** k - 1):
            a, b = ends[i]
            mid = (a + b) / 2
            mids.append(mid)
            ends += [(a, mid), (mid, b)]
        rejected = test(np.array(mids))
        i = 0
        for _ in range(k):
            if bool(rejected[i]) == rejected_at_lo:
                lo, i = mids[i], 2 * i + 2
            else:
                hi, i = mids[i], 2 * i + 1
        done += k
    return (lo + hi) / 2


def paired_gate(baseline, candidate, groups, *, margin: float = PRACTICAL_MARGIN, alpha: float = 0.05,
                higher_is_better: bool = True, strict: bool = False) -> PairedGate:
    """Compare per-query 0/1 outcomes of a candidate with a baseline's, over questions.

    Parameters
    ----------
    baseline, candidate : sequence of bool or 0/1
        The same queries, in the same order, in both runs.
    groups : sequence
        The question of each query (its phrasings are one unit; an out-of-domain query is its own).
    margin : float, keyword-only
        Non-inferiority margin in rate units (0.05 = 5 points), in [0, 1).
    alpha : float, keyword-only
        One-sided level of each test, in (0, 0.5).
    higher_is_better : bool, keyword-only
        False for a rate that should go down (bluffs).
    strict : bool, keyword-only
        Pass only when shown no worse than the margin (no pass because no unit got worse).

    Returns
    -------
    PairedGate
        ``verdict`` by the rule (:data:`RULE`): ``"fail"`` when ``p_worse < alpha``;
        ``"pass"`` when no unit got worse (unless ``strict``) or ``p_noninferior < alpha``;
        else ``"inconclusive"``. ``false_pass``, ``unseen`` and ``power`` say what the
        rule risks at this many units.

    Examples
    --------
    Three questions of one phrasing, each lost (1 -> 0): the exact one-sided
    sign test gives ``P(3 of 3 losses) = 1/8``, not below 0.05, so the
    gate cannot call it worse; nor can it show it no worse than -5 points:

    >>> g = paired_gate([1, 1, 1, 1], [0, 0, 0, 1], ["q1", "q2", "q3", "q4"])
    >>> g.verdict, g.losses, round(g.p_worse, 12)
    ('inconclusive', 3, 0.125)
    >>> paired_gate([1, 0], [1, 0], ["q1", "q2"]).verdict  # nothing changed
    'pass'
    """
    if not (math.isfinite(margin) and 0 <= margin < 1):
        raise ValueError(f"margin must be a difference of rates in [0, 1), e.g. 0.05 for 5 points; got {margin}")
    if not (math.isfinite(alpha) and 0 < alpha < 0.5):
        raise ValueError(f"alpha must be in (0, 0.5), e.g. 0.05; got {alpha}")
    base = np.asarray(baseline, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    if base.shape != cand.shape or base.ndim != 1:
        raise ValueError(f"baseline and candidate must hold the same queries, got {base.shape} and {cand.shape}")
    if not (np.isin(base, (0.0, 1.0)).all() and np.isin(cand, (0.0, 1.0)).all()):
        raise ValueError("baseline and candidate must be 0/1 outcomes per query")
    sign = 1.0 if higher_is_better else -1.0
    labels = question_groups([str(g) for g in groups]) if len(groups) else np.zeros(0, dtype=np.int64)
    if labels.size != base.size:
        raise ValueError(f"groups must give one question per query ({base.size} queries), got {labels.size}")
    d = sign * question_differences(cand, base, labels) if base.size else np.zeros(0)
    n = np.bincount(labels) if base.size else np.zeros(0, dtype=np.int64)
    changed_units = np.unique(labels[base != cand]).size
    total = int(n.sum())
    est = float(d.sum() / total) if total else 0.0
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    common = dict(units=int(n.size), changed=int(changed_units), wins=wins, losses=losses,
                  ties=int(n.size) - wins - losses, margin=float(margin), alpha=float(alpha))
    # The joint (A, B) grid grows as (2 sum|d| + 1)(2 sum n + 1); past MAX_GRID cells only A's law is kept
    # (all the unshifted test needs) and the interval's upper end comes from the score test as well.
    grid_2d = (2 * int(np.abs(d).sum()) + 1) * (2 * total + 1) <= MAX_GRID
    law = _SignFlipLaw(d.astype(np.int64), n.astype(np.int64) if grid_2d else np.zeros(n.size, dtype=np.int64))
    p_worse = law.lower(0.0)
    upper = lambda delta: 1.0 - NormalDist().cdf(score_test(d, n, delta))  # noqa: E731 - small: above delta
    lower = law.lower if grid_2d else (lambda delta: NormalDist().cdf(score_test(d, n, delta)))
    p_ni = upper(-margin)
    verdict = _rule(p_worse, p_ni, losses, alpha, strict)
    # The interval: each end is the bound of the test that decides on its side (bisection; ends clamp to [-1, 1]):
    # low, the score test's (pass: low > -margin); high, the exact sign-flip test's (fail: high < 0).
    edge = 1.0 - 1e-9
    uppers = lambda xs: [1.0 - NormalDist().cdf(z) < alpha for z in score_curve(d, n, xs).tolist()]  # noqa: E731
    lowers = lambda xs: [lower(x) < alpha for x in xs.tolist()]  # noqa: E731 - one shift a call: levels=1
    low = -1.0 if upper(-edge) >= alpha else _bisect(uppers, -edge, est, rejected_at_lo=True, levels=_LEVELS)
    high = 1.0 if lower(edge) >= alpha else _bisect(lowers, est, edge, rejected_at_lo=False)
    if p_worse >= alpha:  # not shown worse: the upper end also holds the score interval's (the sign flips collapse
        # when few questions moved: nothing changed gives +0 to +0, though a rare gain is not ruled out)
        high = max(high, score_bounds(d, n, NormalDist().inv_cdf(1 - alpha))[1])
    needed, needed_verdict = (None, None) if verdict != "inconclusive" else _needed(d, n, margin, alpha)
    if not higher_is_better:
        est, low, high = -est, -high, -low
    sizes = tuple(sorted(n.astype(int).tolist()))
    return PairedGate(**common, estimate=est + 0.0, low=low + 0.0, high=high + 0.0, p_worse=p_worse,
                      p_noninferior=p_ni, verdict=verdict, needed=needed, needed_verdict=needed_verdict,
                      strict=strict, false_pass=false_pass_rate(sizes, margin, alpha, strict=strict),
                      unseen=_unseen(n.size), power=regression_power(sizes, changed_units, alpha))


def _rule(p_worse: float, p_ni: float, losses: int, alpha: float, strict: bool) -> str:
    """The gate's rule (:data:`RULE`): fail when shown worse; pass when none worse (not strict) or shown no worse."""
    if p_worse < alpha:
        return "fail"
    if (losses == 0 and not strict) or p_ni < alpha:
        return "pass"
    return "inconclusive"


def _unseen(units: int, confidence: float = 0.95) -> float:
    """The exact upper bound of a per-unit loss rate when none of ``units`` was lost: ``1 - (alpha/2)^(1/G)``.

    >>> round(_unseen(32), 3)
    0.109
    """
    return 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / units) if units else 1.0


@lru_cache(maxsize=512)
def false_pass_rate(sizes: tuple[int, ...], margin: float, alpha: float, *, strict: bool = False) -> float:
    """The chance that the gate passes a candidate truly ``margin`` worse, at this run's units, by the rule.

    The candidate loses whole units (every phrasing of a question) independently with
    chance ``margin`` and never wins: the case in which "no unit got worse" is
    likeliest for a candidate that much worse, so the shortcut's false passes are
    largest there. With ``M ~ Bin(G, margin)`` units lost (each the one of ``n`` phrasings
    that comes first in ``sizes``), the rule's verdict on that outcome is computed
    exactly as :func:`paired_gate` does, and ``P(pass)`` summed over ``M``.
    ``strict`` measures the tests alone (near ``alpha`` or below).

    Parameters
    ----------
    sizes : tuple of int
        Phrasings of each unit (sorted).

    Examples
    --------
    32 questions of one phrasing, a 5-point margin: ``0.95 ** 32`` = 19.4% of such
    candidates show no loss at all and pass; the tests add nothing:

    >>> round(false_pass_rate((1,) * 32, 0.05, 0.05), 3), round(0.95 ** 32, 3)
    (0.194, 0.194)
    >>> false_pass_rate((1,) * 32, 0.05, 0.05, strict=True)
    0.0
    """
    from scipy.stats import binom

    g = len(sizes)
    if g == 0 or margin <= 0:
        return 1.0 if not strict else 0.0
    n = np.asarray(sizes, dtype=np.float64)
    total = 0.0
    top = g if g <= 200 else min(g, int(binom.isf(1e-12, g, margin)) + 1)  # the rest adds under 1e-12
    for m in range(top + 1):
        pm = float(binom.pmf(m, g, margin))
        if pm < 1e-15:
            continue
        d = np.zeros(g)
        d[:m] = -n[:m]
        p_worse = 0.5 ** m  # every moved unit a loss: only the all-negative sign pattern reaches the sum
        p_ni = 1.0 - NormalDist().cdf(score_test(d, n, -margin))
        total += pm * (_rule(p_worse, p_ni, m, alpha, strict) == "pass")
    return float(min(1.0, total))


@lru_cache(maxsize=512)
def regression_power(sizes: tuple[int, ...], changed: int, alpha: float, regression: float = REGRESSION) -> float:
    """The gate's chance to fail a candidate ``regression`` worse (10 points), at this many units.

    Units move whole (every phrasing together), so the one-sided sign-flip test is the
    exact sign test on the units that moved; the share that moves is this run's
    (``changed / G``, at least ``regression``): per unit, a loss with chance
    ``(psi + regression) / 2`` and a win with ``(psi - regression) / 2``. The power is
    the exact one of :func:`ragdiag.analyses.compare.power.sign_test_power` at
    level ``2 alpha`` two-sided, whose lower tail is the gate's one-sided test.

    Every move a loss: five of five losses give p = 1/32 < 0.05, four give 1/16, so the
    power is ``P(Bin(32, 0.1) >= 5)``:

    >>> from scipy.stats import binom
    >>> round(regression_power((1,) * 32, 0, 0.05), 4), round(float(binom.sf(4, 32, 0.1)), 4)
    (0.2115, 0.2115)
    """
    from ...analyses.compare.power import sign_test_power

    g = len(sizes)
    if g == 0:
        return 0.0
    psi = min(1.0, max(regression, changed / g))
    return sign_test_power(g, (psi - regression) / 2, (psi + regression) / 2, alpha=2 * alpha)


def _needed(d: np.ndarray, n: np.ndarray, margin: float, alpha: float) -> tuple[int | None, str | None]:
    """Questions that would decide it if the same mix of differences went on, and which way.

    The observed mix of per-question ``(d, n)`` is scaled to ``N`` questions
    (counts rounded), and both tests are run exactly as above; ``N`` grows by
    doubling, then by bisection, up to :data:`MAX_NEEDED`. None when no such
    number decides it (the observed difference sits between ``-margin`` and 0
    with no question moving, or beyond the limit).
    """
    cats: dict[tuple[int, int], int] = {}
    for dq, nq in zip(d.astype(int).tolist(), n.astype(int).tolist()):
        cats[(dq, nq)] = cats.get((dq, nq), 0) + 1
    g = n.size

    def decided(size: int) -> str | None:
        dd, nn = [], []
        for (dq, nq), c in cats.items():
            k = int(c * size / g + 0.5)  # rounded half up
            dd += [dq] * k
            nn += [nq] * k
        dd_a, nn_a = np.array(dd, dtype=np.int64), np.array(nn, dtype=np.int64)
        if dd_a.size == 0 or not np.any(dd_a):
            return None
        if _SignFlipLaw(dd_a, np.zeros_like(nn_a)).lower(0.0) < alpha:
            return "fail"
        if 1.0 - NormalDist().cdf(score_test(dd_a, nn_a, -margin)) < alpha:
            return "pass"
        return None

    lo, hi = g, 2 * g
    while decided(hi) is None:
        lo, hi = hi, 2 * hi
        if hi > MAX_NEEDED:
            return None, None
    while hi - lo > max(1, lo // 100):  # to within 1%
        mid = (lo + hi) // 2
        if decided(mid) is None:
            lo = mid
        else:
            hi = mid
    return hi, decided(hi)
