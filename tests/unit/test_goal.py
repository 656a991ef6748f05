"""The goal as one value (``ragdiag.core.goal``): one range per field, one rule of "met", one tolerance."""

from __future__ import annotations

import argparse
import math
import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from ragdiag.cli.common import UsageError
from ragdiag.cli.goal_args import goal_of
from ragdiag.core.goal import (MAX_BLUFF_COST, TOLERANCE, Goal, GoalError, allowed, needed, percent_share,
                               within_at_least, within_at_most)

from code_walk import nodes, source_files

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("fields, field", [
    (dict(max_bluff=-0.01), "max_bluff"),
    (dict(max_bluff=1.01), "max_bluff"),
    (dict(max_bluff=math.nan), "max_bluff"),
    (dict(max_bluff=math.inf), "max_bluff"),
    (dict(max_bluff=True), "max_bluff"),
    (dict(max_bluff="0.05"), "max_bluff"),
    (dict(min_answered=-0.5), "min_answered"),
    (dict(min_answered=2.0), "min_answered"),
    (dict(min_answered=math.nan), "min_answered"),
    (dict(max_bluff=0.05, min_answered=-math.inf), "min_answered"),
    (dict(max_bluff=0.05, bluff_cost=0), "bluff_cost"),
    (dict(max_bluff=0.05, bluff_cost=-3.0), "bluff_cost"),
    (dict(max_bluff=0.05, bluff_cost=math.nan), "bluff_cost"),
    (dict(max_bluff=0.05, bluff_cost=math.inf), "bluff_cost"),
    (dict(max_bluff=0.05, bluff_cost=2 * MAX_BLUFF_COST), "bluff_cost"),
    (dict(bluff_cost=3.0), "max_bluff"),  # a cost goal alone: no rate goal for a cut to follow
    (dict(), "max_bluff"),
])
def test_each_bad_value_is_a_value_error_naming_its_field(fields, field):
    with pytest.raises(ValueError, match=field) as info:
        Goal(**fields)
    assert isinstance(info.value, GoalError)


@pytest.mark.parametrize("fields", [
    dict(max_bluff=0.0), dict(max_bluff=1.0), dict(min_answered=0.0), dict(min_answered=1.0),
    dict(max_bluff=0.05, min_answered=0.5, bluff_cost=3), dict(min_answered=0.5, bluff_cost=MAX_BLUFF_COST),
])
def test_the_ends_of_each_range_are_goals(fields):
    g = Goal(**fields)
    assert {k: getattr(g, k) for k in fields} == {k: float(v) for k, v in fields.items()}
    assert hash(g) == hash(Goal(**fields))  # frozen: a cache key


@pytest.mark.parametrize("max_bluff, ok", [(0.0, False), (1.0, False), (0.05, True), (0.995, True)])
def test_a_recommendation_needs_a_bluff_goal_strictly_between_0_and_1(max_bluff, ok):
    if ok:
        assert Goal.recommending(max_bluff).max_bluff == max_bluff
    else:
        with pytest.raises(GoalError, match=r"max_bluff must be a rate in \(0, 1\)"):
            Goal.recommending(max_bluff)


@pytest.mark.parametrize("rate, bound, at_most, met", [
    (0.05, 0.05, True, True),  # equal is met
    (0.05 + TOLERANCE / 2, 0.05, True, True),  # within the tolerance: a share of counts in floating point
    (0.05 + 1e-9, 0.05, True, False),
    (0.0, 0.0, True, True),
    (None, 0.05, True, False),  # nothing measured: never met
    (0.5, 0.5, False, True),
    (0.5 - TOLERANCE / 2, 0.5, False, True),
    (0.5 - 1e-9, 0.5, False, False),
    (1.0, 1.0, False, True),
    (None, 0.0, False, False),
])
def test_met_at_the_boundary(rate, bound, at_most, met):
    assert (within_at_most if at_most else within_at_least)(rate, bound) is met
    goal = Goal(max_bluff=bound) if at_most else Goal(min_answered=bound)
    assert goal.met_by(rate) is met
    assert (goal.bluffs_met(rate) if at_most else goal.answered_met(rate)) is met


def test_a_share_of_counts_at_the_bound_meets_it():
    # 7 of 100 computed as 0.07 * 100 is 7.000000000000001 in floating point: it needs 7, not 8
    assert 0.07 * 100 > 7 and needed(0.07, 100) == 7
    assert 0.29 * 100 < 29 and allowed(0.29, 100) == 29
    assert Goal(min_answered=0.07).met_by(7 / 100) and Goal(max_bluff=0.29).met_by(29 / 100)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 1000), st.integers(0, 1000))
def test_allowed_and_needed_are_the_exact_floor_and_ceiling(per_mille, n):
    """Oracle: exact rational arithmetic (``fractions``) on the share as typed (a number of thousandths)."""
    share, exact = per_mille / 1000, Fraction(per_mille, 1000) * n
    assert allowed(share, n) == math.floor(exact) == Goal(max_bluff=share).allowed_bluffs(n)
    assert needed(share, n) == math.ceil(exact) == Goal(min_answered=share).needed_answers(n)


def test_a_cut_follows_one_goal():
    both = Goal(max_bluff=0.05, min_answered=0.5, bluff_cost=3)
    assert both.cut_goal == Goal(max_bluff=0.05) and both.measure == "bluffs"
    assert Goal(min_answered=0.5, bluff_cost=3).cut_goal == Goal(min_answered=0.5)
    assert Goal(min_answered=0.5).measure == "answered"
    assert "at most 5.0%" in both.rule and "at least 50.0%" in Goal(min_answered=0.5).rule
    with pytest.raises(GoalError, match="no answered goal"):
        Goal(max_bluff=0.05).answered_met(0.5)
    with pytest.raises(GoalError, match="no bluff goal"):
        Goal(min_answered=0.5).bluffs_met(0.0)


@pytest.mark.parametrize("text, open_, share", [("5", True, 0.05), ("99.5", True, 0.995), ("0", False, 0.0),
                                                ("100", False, 1.0), ("50", False, 0.5)])
def test_a_percentage_in_the_url_reads_as_a_share(text, open_, share):
    assert percent_share(text, "goal", "bluffs", open_=open_) == share


@pytest.mark.parametrize("text, open_", [("0", True), ("100", True), ("-1", False), ("101", False), ("nan", False),
                                         ("five", True), ("inf", False)])
def test_a_bad_percentage_in_the_url_names_its_parameter(text, open_):
    with pytest.raises(GoalError, match=r"^goal must be a percentage of bluffs"):
        percent_share(text, "goal", "bluffs", open_=open_)


@pytest.mark.parametrize("options, kw, message", [
    (dict(max_bluff=1.5, min_answered=None), {}, r"^--max-bluff must be a rate in \[0, 1\], got 1.5$"),
    (dict(max_bluff=0.05, min_answered=0.5), dict(one=True), r"^state exactly one goal: --max-bluff"),
    (dict(max_bluff=None, min_answered=None), dict(one=True), r"^state exactly one goal"),
    (dict(max_bluff=0.05, bluff_cost=0.0), {}, r"^--bluff-cost must be a positive number of lost answers"),
    (dict(max_bluff=1.0, min_answered=None), dict(recommending=True), r"^--max-bluff must be a rate in \(0, 1\)"),
    (dict(max_bluff=0.05, min_answered=-1.0), dict(recommending=True), r"^--min-answered must be a rate in \[0, 1\]"),
])
def test_the_cli_says_the_goals_range_with_the_options_name(options, kw, message):
    with pytest.raises(UsageError, match=message):
        goal_of(argparse.Namespace(**options), **kw)


def test_the_cli_reads_all_three_goals_as_one_value():
    args = argparse.Namespace(max_bluff=0.05, min_answered=0.5, bluff_cost=3.0)
    assert goal_of(args, recommending=True) == Goal(0.05, 0.5, 3.0)
    assert goal_of(argparse.Namespace(max_bluff=None, min_answered=0.5), one=True) == Goal(min_answered=0.5)


_GOAL_WORDS = re.compile(r"bluff|answered|goal|target", re.IGNORECASE)


def test_the_tolerance_of_goal_met_is_written_once():
    """Every ``1e-12`` in the library, the dashboard's helpers and its pages: the goal's tolerance only in
    ``core/goal.py``; elsewhere only tolerances of something else (a norm's floor, a cut's equality, a margin),
    never on a line about a goal."""
    home = ROOT / "ragdiag" / "core" / "goal.py"
    found = []
    for path in source_files():
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"1e-12", line, re.IGNORECASE):
                found.append((path, no, line))
    assert any(p == home for p, _, _ in found), "the goal's tolerance lives in ragdiag/core/goal.py"
    about_goals = [f"{p.relative_to(ROOT)}:{no}: {line.strip()}" for p, no, line in found
                   if p != home and _GOAL_WORDS.search(line)]
    assert about_goals == [], ("a goal compared with its own tolerance (use ragdiag.core.goal):\n"
                               + "\n".join(about_goals))
    assert sum(p == home for p, _, _ in found) == 1  # one constant, TOLERANCE


def test_the_dashboards_context_holds_one_goal_and_carries_it_in_the_url():
    from ragdiag.core.gate import Gate
    from ui.context import Context, _parse

    goal = Goal(max_bluff=0.1, min_answered=0.5, bluff_cost=3)
    ctx = Context("E/dense", Gate(keep=6, cut=0.5), False, goal)
    assert (ctx.max_bluff, ctx.min_answered, ctx.bluff_cost) == (0.1, 0.5, 3.0)  # views of ctx.goal, no copies
    assert hash(ctx) == hash(Context("E/dense", Gate(keep=6, cut=0.5), False, Goal(0.1, 0.5, 3.0)))
    params = ctx.params()
    assert (params["goal"], params["answered"], params["bluff_cost"]) == ("10", "50", "3")
    # read back, each parameter by the Goal's range, into the same goal
    back = Goal(_parse("goal", params["goal"]), _parse("answered", params["answered"]),
                _parse("bluff_cost", params["bluff_cost"]))
    assert back == goal
    for field, text in (("goal", "0"), ("goal", "100"), ("answered", "101"), ("bluff_cost", "0"),
                        ("bluff_cost", "2e6")):
        with pytest.raises(ValueError):
            _parse(field, text)


GOAL_FIELDS = ("max_bluff", "min_answered", "bluff_cost")
GOAL_HOME = ("ragdiag/core/goal.py", "Goal")


def loose_goal_fields(source: str) -> list[str]:
    """``Class.field`` for each class-level field (an annotated name in a class body: a dataclass's, a named
    tuple's or a typed dict's field) of ``source`` named like one of the goal's numbers.

    >>> loose_goal_fields("class A:\\n    max_bluff: float\\n    cut: float\\n\\nclass B:\\n    goal: Goal")
    ['A.max_bluff']
    """
    import ast

    return [f"{c.name}.{s.target.id}" for c in nodes(source, ast.ClassDef) for s in c.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id in GOAL_FIELDS]


def test_the_finder_sees_a_loose_goal_field():
    assert loose_goal_fields("@dataclass\nclass R:\n    config: str\n    bluff_cost: float = 3.0\n") == [
        "R.bluff_cost"]
    assert loose_goal_fields("class R(OnGoal):\n    goal: Goal\n    def f(self, max_bluff: float): ...\n") == []


def test_no_record_but_the_goal_holds_a_goal_number():
    """A record holds the goal whole (``goal: Goal``, its numbers read through :class:`ragdiag.core.goal.OnGoal` or a
    property), never ``max_bluff``, ``min_answered`` or ``bluff_cost`` as a field of its own (issue 43)."""
    offenders, home = [], []
    for path in source_files():
        rel = path.relative_to(ROOT).as_posix()
        for field in loose_goal_fields(path.read_text(encoding="utf-8")):
            (home if (rel, field.split(".")[0]) == GOAL_HOME else offenders).append(f"{rel}: {field}")
    assert not offenders, "hold `goal: Goal` (and inherit core.goal.OnGoal) instead:\n" + "\n".join(offenders)
    assert len(home) == len(GOAL_FIELDS), "the goal's fields moved: point this test at their new home"
