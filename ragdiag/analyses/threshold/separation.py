"""Two-sided: can a score separate the answerable queries from off-topic ones, and can the goals be met together?

* :func:`auroc` -- the chance that an answerable query the gate would answer (its needle's holder is in the
  window) scores better than an off-topic query: the area under the ROC curve of the gate's score, with a 95%
  interval over questions (DeLong's structural components, the answerable side summed per question as
  Obuchowski's clustered estimator does, on the logit scale). Near and far off-topic queries separately.
* :func:`feasibility` -- whether any cut meets the bluff goal while answering at least the answered goal, on
  this set: the largest cut whose bluff share is within the goal answers the most (answered only grows with
  the cut), so the goals can be met together exactly when that cut reaches the answered goal. When they cannot,
  the verdict is a sentence, not a cut.

Scores are read as the gate reads them: lower is better for a distance table
(:class:`~ragdiag.analyses.gate_table.GateTable`); a native score table
(:class:`~ragdiag.analyses.threshold.score.ScoreTable`) is negated first.

References
----------
.. [1] E. DeLong, D. DeLong, D. Clarke-Pearson, "Comparing the areas under two or more correlated ROC curves",
   Biometrics 44 (1988).
.. [2] N. Obuchowski, "Nonparametric analysis of clustered ROC curve data", Biometrics 53 (1997).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...core.defaults import ALPHA
from ...core.gate import under_each
from ...core.goal import Goal, OnGoal, allowed, within_at_least
from ...evaluation.rows import RateCell
from ...core.words import pct

__all__ = ["Separation", "auroc", "separation", "Feasibility", "feasibility"]


@dataclass(frozen=True)
class Separation:
    """AUROC of answerable-would-be-answered against off-topic queries, with its 95% interval over questions."""

    estimate: float
    low: float
    high: float
    n_answerable: int  # answerable queries with a holder in the window
    n_questions: int
    n_off_topic: int
    against: str = "off-topic"  # "off-topic", "near off-topic", "far off-topic"

    def cells(self) -> dict:
        return {"auroc": self.estimate, "low": self.low, "high": self.high, "against": self.against,
                "answerable": self.n_answerable, "questions": self.n_questions, "off_topic": self.n_off_topic}

    def sentence(self) -> str:
        """``"AUROC against near off-topic queries: 0.71 (0.58–0.82), 40 answerable, 15 near off-topic"``."""
        if self.estimate != self.estimate:
            return f"AUROC against {self.against} queries: cannot be measured (none on one side)"
        return (f"AUROC against {self.against} queries: {self.estimate:.2f} ({self.low:.2f}–{self.high:.2f}), "
                f"{self.n_answerable} answerable, {self.n_off_topic} {self.against}")


def auroc(positive, negative, groups: Sequence | None = None, *, alpha: float = ALPHA,
          against: str = "off-topic") -> Separation:
    """P(a positive scores below a negative) + half the ties: lower is better (a distance).

    ``groups``: the question of each positive (its phrasings are one unit); default each its own.

    >>> s = auroc([0.1, 0.2, 0.3], [0.25, 0.4])
    >>> round(s.estimate, 4)
    0.8333
    """
    from scipy.special import ndtri

    x = np.asarray(positive, dtype=np.float64)
    y = np.asarray(negative, dtype=np.float64)
    g = np.arange(x.size) if groups is None else np.asarray(list(groups), dtype=object)
    if g.size != x.size:
        raise ValueError(f"one group per positive: {x.size} positives, {g.size} groups")
    _, cluster = np.unique(g.astype(str), return_inverse=True) if x.size else (None, np.zeros(0, dtype=np.int64))
    n_q = int(cluster.max()) + 1 if x.size else 0
    if not x.size or not y.size:
        nan = float("nan")
        return Separation(nan, nan, nan, int(x.size), n_q, int(y.size), against)
    psi = (x[:, None] < y[None, :]).astype(np.float64) + 0.5 * (x[:, None] == y[None, :])
    a = float(psi.mean())
    v10 = psi.mean(axis=1)  # per positive
    v01 = psi.mean(axis=0)  # per negative
    m, n = x.size, y.size
    sums = np.bincount(cluster, weights=v10 - a, minlength=n_q)
    var10 = n_q / max(n_q - 1, 1) * float((sums ** 2).sum()) / m ** 2
    var01 = float(((v01 - a) ** 2).sum()) / (n * max(n - 1, 1))
    se = np.sqrt(var10 + var01)
    z = float(ndtri(1 - alpha / 2))
    edge = 0.5 / (m * n)  # at 0 or 1 the logit is infinite: read the estimate half a pair inside
    ac = min(max(a, edge), 1 - edge)
    se = max(se, np.sqrt(ac * (1 - ac) / (m * n)))  # never narrower than one pair's worth of spread
    lg = np.log(ac / (1 - ac))
    half = z * se / (ac * (1 - ac))
    lo, hi = 1 / (1 + np.exp(-(lg - half))), 1 / (1 + np.exp(-(lg + half)))
    return Separation(a, float(min(lo, a)), float(max(hi, a)), m, n_q, n, against)


def _gate_scores(table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(holder values, best values, in_domain) on a lower-is-better scale, from either kind of table."""
    if hasattr(table, "closest_holder"):
        return np.asarray(table.closest_holder, float), np.asarray(table.closest, float), table.in_domain
    return -np.asarray(table.holder, float), -np.asarray(table.top, float), table.in_domain


def separation(table, *, alpha: float = ALPHA) -> dict[str, Separation]:
    """AUROC of the gate's score: answerable queries with a holder in the window against every off-topic query,
    and against the near and far ones separately (when the ground truth says which)."""
    holder, best, ind = _gate_scores(table)
    reach = ind & np.isfinite(holder)
    groups = np.asarray(table.group_ids() if hasattr(table, "group_ids") else table.groups, dtype=object)
    kinds = np.asarray([k or "ood" for k in table.kind_of()], dtype=object)
    out = {"off-topic": auroc(holder[reach], best[~ind], groups[reach], alpha=alpha)}
    for kind in ("near", "far"):
        sel = ~ind & (kinds == kind)
        if sel.any():
            out[kind] = auroc(holder[reach], best[sel], groups[reach], alpha=alpha, against=f"{kind} off-topic")
    return out


@dataclass(frozen=True)
class Feasibility(OnGoal):
    """Whether the bluff goal and the answered goal (``goal``, both stated) can be met together on this set, and what
    the best cut gives."""

    feasible: bool
    goal: Goal
    cut: float | None  # the largest cut within the bluff goal on this set (None: no off-topic query)
    answered: RateCell | None
    bluffs: RateCell | None
    score: str = "distance"

    def sentence(self) -> str:
        from ...core.words import rate_text

        if self.cut is None or self.answered is None:
            return "no off-topic queries: whether a cut separates them cannot be judged"
        at = f"at {pct(self.max_bluff, None)} bluffs, {rate_text(self.answered)} are answered"
        if self.feasible:
            return f"both goals can be met on this {self.score}: {at} (goal at least {pct(self.min_answered, None)})"
        return (f"no cut on this {self.score} separates the off-topic questions from answerable ones here: {at}, "
                f"under the {pct(self.min_answered, None)} goal")


def feasibility(table, max_bluff: float | Goal, min_answered: float | None = None, *,
                score: str = "distance") -> Feasibility:
    """Whether some cut keeps the in-sample bluff share within ``max_bluff`` and answers at least ``min_answered``
    (or both goals of one :class:`~ragdiag.core.goal.Goal` given as ``max_bluff``).

    The largest such cut (the ``(m + 1)``-th best off-topic value, ``m = floor(max_bluff n)``; everything scoring
    better is kept) answers the most, so it decides.

    >>> from ragdiag.analyses.gate_table import GateTable
    >>> t = GateTable(("a", "b", "o1", "o2"), np.array([True, True, False, False]),
    ...               closest=np.array([0.2, 0.3, 0.25, 0.5]), closest_holder=np.array([0.2, 0.35, np.inf, np.inf]),
    ...               window=4)
    >>> feasibility(t, 0.0, 0.5).feasible, feasibility(t, 0.0, 1.0).feasible, feasibility(t, 0.5, 1.0).feasible
    (True, False, True)
    """
    from ..compare.intervals import clustered_rate, rate_interval

    goal = max_bluff if isinstance(max_bluff, Goal) else Goal(max_bluff, min_answered)
    if goal.max_bluff is None or goal.min_answered is None:
        raise ValueError("feasibility judges two goals together: state both max_bluff and min_answered")
    max_bluff, min_answered = goal.max_bluff, goal.min_answered
    holder, best, ind = _gate_scores(table)
    ood = np.sort(best[~ind])
    if not ood.size:
        return Feasibility(False, goal, None, None, None, score)
    m = allowed(max_bluff, ood.size)
    cut = float(ood[m]) if m < ood.size else np.inf  # a value is kept when under it
    groups = np.asarray(table.group_ids() if hasattr(table, "group_ids") else table.groups, dtype=object)[ind]
    ans = under_each(holder[ind], cut)[0]
    answered = RateCell.of(clustered_rate(ans, list(groups)))
    bluffs = RateCell.of(rate_interval(int(under_each(best[~ind], cut)[0].sum()), int(ood.size)))
    ok = within_at_least(float(ans.mean()), min_answered) if ans.size else False
    return Feasibility(ok, goal, cut, answered, bluffs, score)
