"""The goal as one value: the bluff goal, the answered goal and the cost goal, checked once, met by one rule.

A team states what its gate must achieve as shares of queries: bluffs at most
``max_bluff`` (of the off-topic queries), answered at least ``min_answered``
(of the answerable ones), and, beside them, a cost goal ``bluff_cost`` (a bluff
costs as much as that many lost answers). Every surface (the cut chooser, the
recommendation, the report, the CLI, the dashboard's context and URL) holds
one :class:`Goal`; this module is the only place that checks the goals' ranges
and the only place that says when a rate *meets* a goal (:meth:`Goal.bluffs_met`,
:meth:`Goal.answered_met`) or how many queries a share allows or needs
(:meth:`Goal.allowed_bluffs`, :meth:`Goal.needed_answers`).

A cut follows one goal (:attr:`Goal.cut_goal`): the bluff goal when one is
stated, else the answered goal; the answered goal beside a bluff goal is judged,
never optimised.

>>> g = Goal(max_bluff=0.05, min_answered=0.5)
>>> g.bluffs_met(0.05), g.bluffs_met(0.06), g.answered_met(0.5), g.allowed_bluffs(40)
(True, False, True, 2)
>>> Goal(max_bluff=1.5)
Traceback (most recent call last):
ragdiag.core.goal.GoalError: max_bluff must be a rate in [0, 1], got 1.5
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from .words import pct

__all__ = ["Goal", "GoalError", "OnGoal", "TOLERANCE", "MAX_BLUFF_COST", "check_share", "check_bluff_cost",
           "within_at_most", "within_at_least", "allowed", "needed", "percent_share"]

#: The one tolerance of "goal met": a rate exactly at its bound meets it (shares are ratios of counts, compared
#: in floating point: 0.29 * 100 is 28.999999999999996, 0.07 * 100 is 7.000000000000001).
TOLERANCE = 1e-12
#: The largest cost of a bluff, in lost answers: beyond it no answer is worth one bluff (the cut refuses them all).
MAX_BLUFF_COST = 1e6


class GoalError(ValueError):
    """A goal out of its range; the message names the field and what to do."""


def _finite(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(float(value))


def check_share(value: Any, name: str, *, open_: bool = False) -> float:
    """``value`` as a float when it is a finite share in [0, 1] (``open_``: in (0, 1)), else :class:`GoalError`.

    >>> check_share(0.05, "max_bluff")
    0.05
    >>> check_share(0.0, "max_bluff", open_=True)
    Traceback (most recent call last):
    ragdiag.core.goal.GoalError: max_bluff must be a rate in (0, 1), e.g. 0.05; got 0.0
    """
    ok = _finite(value) and ((0.0 < float(value) < 1.0) if open_ else (0.0 <= float(value) <= 1.0))
    if not ok:
        if open_:
            raise GoalError(f"{name} must be a rate in (0, 1), e.g. 0.05; got {value}")
        raise GoalError(f"{name} must be a rate in [0, 1], got {value}")
    return float(value)


def check_bluff_cost(value: Any, name: str = "the cost of a bluff") -> float:
    """``value`` as a float when it is a positive number of lost answers, at most :data:`MAX_BLUFF_COST`, else
    :class:`GoalError`.

    >>> check_bluff_cost(3)
    3.0
    """
    if not (_finite(value) and 0 < float(value) <= MAX_BLUFF_COST):
        raise GoalError(f"{name} must be a positive number of lost answers (at most {MAX_BLUFF_COST:g}), "
                        f"got {value!r}")
    return float(value)


def within_at_most(rate: float | None, bound: float) -> bool:
    """Whether ``rate`` meets the upper bound ``bound`` (equal meets it, up to :data:`TOLERANCE`; None never does)."""
    return rate is not None and rate <= bound + TOLERANCE


def within_at_least(rate: float | None, bound: float) -> bool:
    """Whether ``rate`` meets the lower bound ``bound`` (equal meets it, up to :data:`TOLERANCE`; None never does)."""
    return rate is not None and rate >= bound - TOLERANCE


def allowed(share: float, n: int) -> int:
    """How many of ``n`` a share *at most* allows: ``floor(share * n)``, exact at a whole count.

    >>> allowed(0.05, 40), allowed(0.1, 30), allowed(0.05, 19)
    (2, 3, 0)
    """
    return int(math.floor(share * n + TOLERANCE))


def needed(share: float, n: int) -> int:
    """How many of ``n`` a share *at least* needs: ``ceil(share * n)``, exact at a whole count.

    >>> needed(0.5, 64), needed(0.3, 10), needed(0.3, 3)
    (32, 3, 1)
    """
    return int(math.ceil(share * n - TOLERANCE))


def percent_share(text: Any, name: str, what: str, *, open_: bool) -> float:
    """A percentage typed or carried in a URL (``"5"``) as a share (``0.05``): in (0, 100) when ``open_``, else
    [0, 100]; anything else a :class:`GoalError` naming ``name`` and what it counts (``what``).

    >>> percent_share("5", "goal", "bluffs", open_=True)
    0.05
    >>> percent_share("0", "goal", "bluffs", open_=True)
    Traceback (most recent call last):
    ragdiag.core.goal.GoalError: goal must be a percentage of bluffs between 0 and 100, got '0'
    """
    try:
        v = float(text)
    except (TypeError, ValueError):
        v = math.nan
    if open_ and not (math.isfinite(v) and 0 < v < 100):
        raise GoalError(f"{name} must be a percentage of {what} between 0 and 100, got {text!r}")
    if not open_ and not (math.isfinite(v) and 0 <= v <= 100):
        raise GoalError(f"{name} must be a percentage of {what} from 0 to 100, got {text!r}")
    return v / 100


@dataclass(frozen=True)
class Goal:
    """What the gate must achieve: bluffs at most ``max_bluff``, answered at least ``min_answered`` (shares in
    [0, 1]; at least one of them), and optionally the cost goal ``bluff_cost`` (a bluff costs as much as that
    many lost answers; positive). Frozen and hashable (a cache key of Streamlit's)."""

    max_bluff: float | None = None
    min_answered: float | None = None
    bluff_cost: float | None = None

    def __post_init__(self):
        if self.max_bluff is None and self.min_answered is None:
            raise GoalError("state a goal: max_bluff (e.g. 0.05) or min_answered (e.g. 0.5); a cut follows exactly "
                            "one goal, the bluff goal when both are stated")
        if self.max_bluff is not None:
            object.__setattr__(self, "max_bluff", check_share(self.max_bluff, "max_bluff"))
        if self.min_answered is not None:
            object.__setattr__(self, "min_answered", check_share(self.min_answered, "min_answered"))
        if self.bluff_cost is not None:
            object.__setattr__(self, "bluff_cost", check_bluff_cost(self.bluff_cost, "bluff_cost"))

    # --- building -----------------------------------------------------------------------------------------
    @classmethod
    def recommending(cls, max_bluff: Any, min_answered: Any = None, bluff_cost: Any = None) -> "Goal":
        """A goal a recommendation can follow: a bluff goal in (0, 1) (some, not all, off-topic queries may
        bluff), the optional answered goal and cost goal as :class:`Goal` checks them.

        >>> Goal.recommending(0.05)
        Goal(max_bluff=0.05, min_answered=None, bluff_cost=None)
        >>> Goal.recommending(1.0)
        Traceback (most recent call last):
        ragdiag.core.goal.GoalError: max_bluff must be a rate in (0, 1), e.g. 0.05; got 1.0
        """
        return cls(check_share(max_bluff, "max_bluff", open_=True), min_answered, bluff_cost)

    # --- what a cut follows -------------------------------------------------------------------------------
    @property
    def cut_goal(self) -> "Goal":
        """The one goal a cut is chosen for: the bluff goal when stated, else the answered goal (no cost goal).

        >>> Goal(0.05, 0.5, 3.0).cut_goal
        Goal(max_bluff=0.05, min_answered=None, bluff_cost=None)
        """
        if self.max_bluff is not None:
            return Goal(max_bluff=self.max_bluff)
        return Goal(min_answered=self.min_answered)

    @property
    def rule(self) -> str:
        """The cut's rule in words, as the CLI, the dashboard and the report print it."""
        if self.max_bluff is not None:
            return (f"the largest cut at which at most {pct(self.max_bluff, 1)} of the out-of-domain queries bluff "
                    "(in this set): the most answers the bluff budget allows")
        return (f"the smallest cut at which at least {pct(self.min_answered, 1)} of the answerable queries are "
                "answered (in this set): the fewest bluffs that reach the goal")

    # --- met ----------------------------------------------------------------------------------------------
    def bluffs_met(self, rate: float | None) -> bool:
        """Whether a bluff rate meets the bluff goal (at most ``max_bluff``; equal meets it)."""
        if self.max_bluff is None:
            raise GoalError("no bluff goal stated: give max_bluff (e.g. 0.05)")
        return within_at_most(rate, self.max_bluff)

    def answered_met(self, rate: float | None) -> bool:
        """Whether an answered rate meets the answered goal (at least ``min_answered``; equal meets it)."""
        if self.min_answered is None:
            raise GoalError("no answered goal stated: give min_answered (e.g. 0.5)")
        return within_at_least(rate, self.min_answered)

    @property
    def measure(self) -> str:
        """The rate the cut's goal bounds: ``"bluffs"`` (a bluff goal is stated) or ``"answered"``."""
        return "bluffs" if self.max_bluff is not None else "answered"

    def met_by(self, rate: float | None) -> bool:
        """Whether ``rate`` (of :attr:`measure`, at a cut) meets the goal the cut follows (:attr:`cut_goal`).

        >>> Goal(max_bluff=0.1).met_by(0.1), Goal(min_answered=0.5).met_by(0.49), Goal(min_answered=0.5).met_by(None)
        (True, False, False)
        """
        return self.bluffs_met(rate) if self.max_bluff is not None else self.answered_met(rate)

    def allowed_bluffs(self, n: int) -> int:
        """How many of ``n`` off-topic queries the bluff goal lets bluff (:func:`allowed`)."""
        return allowed(self.max_bluff, n)

    def needed_answers(self, n: int) -> int:
        """How many of ``n`` answerable queries the answered goal needs answered (:func:`needed`)."""
        return needed(self.min_answered, n)


class OnGoal:
    """For a record that holds a :class:`Goal` as ``goal``: its ``max_bluff``, ``min_answered`` and ``bluff_cost``
    read through it (views, never copies), as :class:`~ragdiag.core.gate.OnGate` does for a gate."""

    goal: Goal

    @property
    def max_bluff(self) -> float | None:
        """The bluff goal, a share (None: not stated)."""
        return self.goal.max_bluff

    @property
    def min_answered(self) -> float | None:
        """The answered goal, a share (None: not stated)."""
        return self.goal.min_answered

    @property
    def bluff_cost(self) -> float | None:
        """The cost goal: a bluff costs as much as this many lost answers (None: off)."""
        return self.goal.bluff_cost
