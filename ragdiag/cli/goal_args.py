"""The :class:`~ragdiag.core.goal.Goal` of a command's ``--max-bluff``, ``--min-answered`` and ``--bluff-cost``.

The goal's ranges are the :class:`~ragdiag.core.goal.Goal`'s (checked there, once); a value out of range is a
:class:`~ragdiag.cli.common.UsageError` naming the option, one line and exit status 2.
"""

from __future__ import annotations

from .common import UsageError

__all__ = ["goal_of"]

_FLAGS = (("max_bluff", "--max-bluff"), ("min_answered", "--min-answered"), ("bluff_cost", "--bluff-cost"))


def _flags(text: str) -> str:
    for name, flag in _FLAGS:
        text = text.replace(name, flag)
    return text


def goal_of(args, *, recommending: bool = False, one: bool = False):
    """The goal of ``args`` (absent options: not stated).

    ``recommending``: the goal a recommendation follows (:meth:`~ragdiag.core.goal.Goal.recommending`: a bluff
    goal in (0, 1)); ``one``: exactly one of ``--max-bluff`` and ``--min-answered`` (the ``threshold`` command
    chooses a cut for one goal).

    >>> import argparse
    >>> goal_of(argparse.Namespace(max_bluff=0.05, min_answered=None))
    Goal(max_bluff=0.05, min_answered=None, bluff_cost=None)
    >>> goal_of(argparse.Namespace(max_bluff=1.0), recommending=True)
    Traceback (most recent call last):
    ragdiag.cli.common.UsageError: --max-bluff must be a rate in (0, 1), e.g. 0.05; got 1.0
    """
    from ..core.goal import Goal, GoalError

    max_bluff, min_answered = getattr(args, "max_bluff", None), getattr(args, "min_answered", None)
    bluff_cost = getattr(args, "bluff_cost", None)
    if one and (max_bluff is None) == (min_answered is None):
        raise UsageError("state exactly one goal: --max-bluff (e.g. 0.05) or --min-answered (e.g. 0.5)")
    try:
        if recommending:
            return Goal.recommending(max_bluff, min_answered, bluff_cost)
        return Goal(max_bluff, min_answered, bluff_cost)
    except GoalError as exc:
        raise UsageError(_flags(str(exc))) from None
