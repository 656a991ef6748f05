"""Two decided pipelines on the same queries: each configuration at its own gate, its rates and the paired differences.

What a screen compares a recommendation with (the declared baseline, or the
runner-up) is a whole pipeline: a configuration *and* the cut chosen for it.
:func:`gate_rates` gives one pipeline's answered, bluff and lost rates (the
recommendation's own cells: :func:`ragdiag.analyses.recommend.recommend`
computes its rates the same way); :func:`versus` gives the differences of two
pipelines, query by query, with the 95% interval of a pair alone
(:func:`~ragdiag.analyses.compare.simultaneous.max_t` with one pair: the hull
of the exact sign-flip test's interval and the score interval, over questions,
a question's phrasings together; each off-topic query on its own), which keeps
its coverage when few questions differ (a bootstrap collapses to 0 to 0).
:func:`detectable` says whether an interval excludes zero: a difference whose
interval reaches zero is "no detectable difference" on every surface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.gate import Gate
from ..core.words import DASH, difference_text
from ..evaluation.rows import RateCell
from .compare.paired import Difference
from .compare.simultaneous import max_t
from .gate_table import gate_table
from .threshold.rates import rates_at

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation.records import Evaluation

__all__ = ["gate_rates", "Versus", "versus", "detectable", "no_difference", "difference_words", "MEASURES"]

#: The three rates of a pipeline: answered and lost over answerable queries, bluffs over off-topic ones.
MEASURES = ("answered", "bluffs", "lost")


def gate_rates(ev: Evaluation, config: str, gate: Gate) -> dict[str, RateCell]:
    """``{"answered", "bluffs", "lost"}`` of ``config`` at ``gate``, each a count with its 95% interval
    (answerable shares clustered by question, off-topic Wilson), as :func:`~ragdiag.analyses.recommend.recommend`
    reports them."""
    return rates_at(gate_table(ev, config, Gate(gate.keep, k=gate.k)), gate.cut)


def detectable(d: Difference) -> bool:
    """Whether the interval of ``d`` excludes zero (a difference whose interval reaches 0 is not detectable).

    >>> detectable(Difference(0.1, 0.02, 0.2)), detectable(Difference(0.1, -0.02, 0.2))
    (True, False)
    """
    return bool(np.isfinite(d.low) and np.isfinite(d.high) and (d.low > 0 or d.high < 0))


def no_difference(d: Difference) -> bool:
    """Every bound rounds to 0 points: the two pipelines give the same results here."""
    return all(round(100 * x) == 0 for x in (d.estimate, d.low, d.high))


def difference_words(d: Difference | None) -> str:
    """A difference as every surface says it: ``"+27 pts (+5 to +48)"`` when its interval excludes zero, else
    ``"no detectable difference (+8 pts, \u22124 to +20)"``, or ``"no difference"`` when every bound is 0 points.

    >>> difference_words(Difference(0.27, 0.05, 0.48)), difference_words(Difference(0.08, -0.04, 0.2))
    ('+27 pts (+5 to +48)', 'no detectable difference (+8 pts (\u22124 to +20))')
    """
    if d is None or d.estimate != d.estimate:
        return DASH
    if no_difference(d):
        return "no difference"
    return difference_text(d) if detectable(d) else f"no detectable difference ({difference_text(d)})"


@dataclass(frozen=True)
class Versus:
    """Pipeline ``a`` minus pipeline ``b`` on the same queries: per measure a :class:`Difference` of shares."""

    a: str
    b: str
    cut_a: float
    cut_b: float
    differences: dict[str, Difference]

    def detectable(self, measure: str) -> bool:
        return detectable(self.differences[measure])


def _pair(a: np.ndarray, b: np.ndarray, groups) -> Difference:
    """``mean(a) - mean(b)`` with the 95% interval of the pair alone, over ``groups`` (questions).

    >>> d = _pair(np.ones(4), np.ones(4), ["q1", "q2", "q3", "q4"])  # identical: 0, but not 0 to 0
    >>> d.estimate, d.low < 0 < d.high
    (0.0, True)
    """
    (row,), _ = max_t(np.vstack([a, b]), groups, [(0, 1)])
    return Difference(row.estimate, row.low, row.high)


def versus(ev: Evaluation, a: str, gate_a: Gate, b: str, gate_b: Gate) -> Versus:
    """The paired differences of ``a`` at ``gate_a`` minus ``b`` at ``gate_b`` (answered, bluffs, lost).

    Answered and lost are per answerable query, paired by question (a
    question's phrasings move together); bluffs per off-topic query, each its
    own unit. The interval is the pair's own (:func:`_pair`): exact where
    the null is small, seeded otherwise, so the same data always gives the
    same words, and wider than zero when nothing differs.
    """
    ta = gate_table(ev, a, Gate(gate_a.keep, k=gate_a.k))
    tb = gate_table(ev, b, Gate(gate_b.keep, k=gate_b.k))
    if ta.query_ids != tb.query_ids:
        raise ValueError(f"{a} and {b} were not evaluated on the same queries")
    ind = ta.in_domain
    groups = np.asarray(ta.group_ids(), dtype=object)
    ans_a = gate_a.under(ta.closest_holder[ind]).astype(float)
    ans_b = gate_b.under(tb.closest_holder[ind]).astype(float)
    bl_a = gate_a.under(ta.closest[~ind]).astype(float)
    bl_b = gate_b.under(tb.closest[~ind]).astype(float)
    nan = Difference(float("nan"), float("nan"), float("nan"))
    answered = _pair(ans_a, ans_b, groups[ind]) if ind.any() else nan
    bluffs = _pair(bl_a, bl_b, groups[~ind]) if (~ind).any() else nan
    lost = Difference(-answered.estimate, -answered.high, -answered.low)
    return Versus(a, b, gate_a.cut, gate_b.cut, {"answered": answered, "bluffs": bluffs, "lost": lost})
