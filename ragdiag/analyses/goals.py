"""A goal judged in words, with its number and interval: the Summary's and the report's goal strip.

A goal is a bound on one rate of a pipeline at its gate: bluffs at most ``max_bluff`` (over off-topic
queries), or answered at least ``min_answered`` (over answerable queries). It is met when the rate
measured here is within the bound; the verdict always comes with its count and its 95% interval, so
"met" with 30 off-topic queries still says how high the rate could be:
``"bluffs at most 5%: met, 0 of 30 off-topic queries (could be up to 12%)"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..core.goal import Goal, check_share, within_at_least, within_at_most
from ..core.words import count_rate_text, pct
from ..evaluation.rows import RateCell

__all__ = ["GoalVerdict", "judge_goals", "GOAL_MEASURES"]

#: The measures a goal can bound: (its words, the unit it counts, whether the bound is an upper one).
GOAL_MEASURES = {"bluffs": ("bluffs", "off-topic queries", True),
                 "answered": ("answered", "answerable queries", False)}


@dataclass(frozen=True)
class GoalVerdict:
    """One goal and what this run says about it.

    ``measure``: ``"bluffs"`` or ``"answered"``; ``bound``: the goal as a share; ``cell``: the rate measured
    at the gate (count, rate, 95% interval); ``total``: the queries it is over (0: not measurable here).
    """

    measure: str
    bound: float
    cell: RateCell | None
    total: int

    def __post_init__(self):
        if self.measure not in GOAL_MEASURES:
            raise ValueError(f"a goal bounds one of {', '.join(GOAL_MEASURES)}, got {self.measure!r}")
        object.__setattr__(self, "bound", check_share(self.bound, "bound"))

    @property
    def at_most(self) -> bool:
        """Whether the goal is an upper bound (bluffs) rather than a lower one (answered)."""
        return GOAL_MEASURES[self.measure][2]

    @property
    def goal_words(self) -> str:
        """``"bluffs at most 5%"``, ``"answered at least 50%"``."""
        name = GOAL_MEASURES[self.measure][0]
        return f"{name} {'at most' if self.at_most else 'at least'} {pct(self.bound, None)}"

    @property
    def met(self) -> bool | None:
        """Whether the rate measured here is within the bound (None: nothing to measure it on)."""
        if self.total == 0 or self.cell is None or self.cell.rate is None:
            return None
        r = self.cell.rate
        return within_at_most(r, self.bound) if self.at_most else within_at_least(r, self.bound)

    @property
    def status(self) -> str:
        """``"met"``, ``"not met"`` or ``"cannot be judged"``."""
        return {True: "met", False: "not met", None: "cannot be judged"}[self.met]

    @property
    def evidence(self) -> str:
        """The count with its rate and interval; at 0 events the upper bound alone."""
        unit = GOAL_MEASURES[self.measure][1]
        if self.met is None:
            return f"no {unit} were asked"
        c = self.cell
        if c.count == 0:
            return f"0 of {self.total} {unit} (could be up to {pct(c.high)})"
        return f"{count_rate_text(c, self.total).replace(':', f' {unit}:', 1)}"

    def sentence(self) -> str:
        """``"bluffs at most 5%: met, 0 of 30 off-topic queries (could be up to 12%)"``.

        >>> GoalVerdict("bluffs", 0.05, RateCell(0, 0.0, 0.0, 0.116), 30).sentence()
        'bluffs at most 5%: met, 0 of 30 off-topic queries (could be up to 12%)'
        >>> GoalVerdict("answered", 0.5, RateCell(16, 0.25, 0.18, 0.33), 64).sentence()
        'answered at least 50%: not met, 16 of 64 answerable queries: 25% (18–33)'
        """
        return f"{self.goal_words}: {self.status}, {self.evidence}"


def judge_goals(rates: Mapping[str, RateCell], goal: Goal | None = None, *, n_in: int, n_ood: int,
                max_bluff: float | None = None, min_answered: float | None = None) -> tuple[GoalVerdict, ...]:
    """The goals of ``goal`` (bluffs at most ``max_bluff``, answered at least ``min_answered``; or given as those
    two shares) judged on ``rates`` (``{"answered", "bluffs", ...}`` of one pipeline at its gate, e.g. a
    recommendation's), in that order; no goal stated: none.

    >>> cells = {"answered": RateCell(31, 31 / 64, 0.36, 0.61), "bluffs": RateCell(0, 0.0, 0.0, 0.116)}
    >>> [v.status for v in judge_goals(cells, Goal(max_bluff=0.05, min_answered=0.5), n_in=64, n_ood=30)]
    ['met', 'not met']
    """
    if goal is None:
        if max_bluff is None and min_answered is None:
            return ()
        goal = Goal(max_bluff, min_answered)
    out = []
    if goal.max_bluff is not None:
        out.append(GoalVerdict("bluffs", goal.max_bluff, rates.get("bluffs"), int(n_ood)))
    if goal.min_answered is not None:
        out.append(GoalVerdict("answered", goal.min_answered, rates.get("answered"), int(n_in)))
    return tuple(out)
