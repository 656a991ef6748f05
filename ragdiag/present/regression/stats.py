"""The gate's paired test: fail when shown worse, pass when shown no worse than the margin, else inconclusive.

Two runs on the same ground truth are compared question by question (the
phrasings of a question are one unit, as everywhere in ragdiag). Per question
``d = sum over its phrasings of (candidate - baseline)``, oriented so that a
positive ``d`` is better for the candidate; ``n`` is its number of phrasings.
The difference of rates is ``sum(d) / sum(n)``.

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
  the exact test above; fail: below 0). Both come from one law: the joint law
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
from statistics import NormalDist

import numpy as np

from ...analyses.compare.paired import question_differences, question_groups
from ...analyses.compare.score import score_test
from ...core.defaults import PRACTICAL_MARGIN

__all__ = ["PairedGate", "paired_gate", "DEFAULT_MARGIN", "VERDICTS"]

#: Default non-inferiority margin: the candidate may be at most 5 points (0.05) worse and still pass.
DEFAULT_MARGIN = PRACTICAL_MARGIN
#: The largest joint sign-flip grid (cells) :func:`paired_gate` builds; beyond it, see the notes in its body.
MAX_GRID = 4_000_000
#: The most questions :func:`paired_gate` looks for when it says how many would decide an inconclusive result.
MAX_NEEDED = 20_000
#: The verdicts of a check, worst first.
VERDICTS = ("fail", "inconclusive", "pass")
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

    @property
    def p(self) -> float | None:
        """The p of the test that decided the verdict (fail: worse; pass and inconclusive: non-inferiority)."""
        if self.changed == 0:
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


def _bisect(test, lo: float, hi: float, *, rejected_at_lo: bool) -> float:
    """The boundary in [lo, hi] between shifts ``test`` rejects and those it does not."""
    for _ in range(50):
        mid = (lo + hi) / 2
        if test(mid) == rejected_at_lo:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def paired_gate(baseline, candidate, groups, *, margin: float = DEFAULT_MARGIN, alpha: float = 0.05,
                higher_is_better: bool = True) -> PairedGate:
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

    Returns
    -------
    PairedGate
        ``verdict`` is ``"pass"`` when no query changed (the pipeline is
        deterministic: nothing to test), ``"fail"`` when ``p_worse < alpha``,
        ``"pass"`` when ``p_noninferior < alpha``, else ``"inconclusive"``.

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
    if changed_units == 0:
        return PairedGate(**common, estimate=0.0, low=0.0, high=0.0, p_worse=1.0, p_noninferior=0.0,
                          verdict="pass")
    # The joint (A, B) grid grows as (2 sum|d| + 1)(2 sum n + 1); past MAX_GRID cells only A's law is kept
    # (all the unshifted test needs) and the interval's upper end comes from the score test as well.
    grid_2d = (2 * int(np.abs(d).sum()) + 1) * (2 * total + 1) <= MAX_GRID
    law = _SignFlipLaw(d.astype(np.int64), n.astype(np.int64) if grid_2d else np.zeros(n.size, dtype=np.int64))
    p_worse = law.lower(0.0)
    upper = lambda delta: 1.0 - NormalDist().cdf(score_test(d, n, delta))  # noqa: E731 - small: above delta
    lower = law.lower if grid_2d else (lambda delta: NormalDist().cdf(score_test(d, n, delta)))
    p_ni = upper(-margin)
    verdict = "fail" if p_worse < alpha else "pass" if p_ni < alpha else "inconclusive"
    # The interval: each end is the bound of the test that decides on its side (bisection; ends clamp to [-1, 1]):
    # low, the score test's (pass: low > -margin); high, the exact sign-flip test's (fail: high < 0).
    edge = 1.0 - 1e-9
    low = -1.0 if upper(-edge) >= alpha else _bisect(lambda x: upper(x) < alpha, -edge, est, rejected_at_lo=True)
    high = 1.0 if lower(edge) >= alpha else _bisect(lambda x: lower(x) < alpha, est, edge, rejected_at_lo=False)
    needed, needed_verdict = (None, None) if verdict != "inconclusive" else _needed(d, n, margin, alpha)
    if not higher_is_better:
        est, low, high = -est, -high, -low
    return PairedGate(**common, estimate=est + 0.0, low=low + 0.0, high=high + 0.0, p_worse=p_worse,
                      p_noninferior=p_ni, verdict=verdict, needed=needed, needed_verdict=needed_verdict)


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
