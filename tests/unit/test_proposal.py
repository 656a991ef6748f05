"""What a proposed cut costs, who decides it, a cost goal, and the cut a team already runs (issue: the cut where it is used).

Hand-made gate tables (the arithmetic in the comments), brute-force oracles,
and the bundled corpus through the CLI for the audit of a current cut.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.analyses.gate_table import GateTable
from ragdiag.analyses.threshold import Goal, cut_choice, rates_at
from ragdiag.analyses.threshold.proposal import (audit, candidates, cost_cut, cut_from_file, cut_from_units,
                                                 sensitivity)

DATA = Path(__file__).resolve().parents[2] / "data"

# 8 answerable queries (one phrasing each) and 20 off-topic ones: o01 sits far below the others (0.24), the rest at
# 0.445 and up. Answer distances spread 0.20-0.60.
ANSWER = [0.20, 0.30, 0.35, 0.40, 0.43, 0.47, 0.50, 0.60]
OOD = [0.24] + [round(0.445 + 0.02 * i, 3) for i in range(19)]


def _table(answer=ANSWER, ood=OOD) -> GateTable:
    n_in, n_ood = len(answer), len(ood)
    ids = tuple(f"q{i:02d}" for i in range(n_in)) + tuple(f"o{i + 1:02d}" for i in range(n_ood))
    closest = np.array(list(answer) + list(ood))
    holder = np.array(list(answer) + [np.inf] * n_ood)
    return GateTable(ids, np.array([True] * n_in + [False] * n_ood), closest, holder, 4)


def test_one_near_query_that_sets_the_cut_is_named_and_the_next_cut_shown():
    t = _table()
    goal = Goal(max_bluff=0.05)  # 20 off-topic: conformal j = floor(0.05 * 21) = 1 -> the smallest, o01 at 0.24
    p = cut_choice(t, goal).proposal
    assert p.cut == 0.24 and p.method == "conformal"
    table = candidates(t, goal, p.cut)
    # proposed: answers under 0.24 = 1 of 8; next: let o01 through, not o02 (0.445) -> cut 0.445, 5 answered
    assert [(c.cut, c.answered.count, c.bluffs.count) for c in table[:2]] == [(0.24, 1, 0), (0.445, 5, 1)]
    assert table[0].proposed and table[0].meets_goal and table[0].guarantee == pytest.approx(1 / 21)
    assert not table[1].meets_goal and table[1].guarantee == pytest.approx(2 / 21)  # 9.5% > 5%
    movers = sensitivity(t, goal, p.cut)
    assert [m.query_id for m in movers] == ["o01"]
    # without o01: 19 off-topic, j = floor(0.05 * 20) = 1 -> o02 at 0.445
    assert movers[0].cut_without == 0.445 and movers[0].answered_without.count == 5
    assert "o01 alone moves the cut from 0.445 to 0.240" in movers[0].words(p.cut)


def test_no_mover_when_the_off_topic_queries_agree():
    t = _table(ood=[round(0.445 + 0.001 * i, 4) for i in range(20)])
    p = cut_choice(t, Goal(max_bluff=0.05)).proposal
    assert sensitivity(t, Goal(max_bluff=0.05), p.cut) == ()


def _brute_cost(t: GateTable, n: float) -> tuple[float, float]:
    """Every cut on a fine grid: the lowest cut of least cost n x bluffs + lost."""
    best = None
    for c in np.round(np.arange(0, 2.0005, 0.001), 3):
        ind = t.in_domain
        cost = n * int((t.closest[~ind] < c).sum()) + int((~(t.closest_holder[ind] < c)).sum())
        if best is None or cost < best[1]:
            best = (float(c), float(cost))
    return best


def test_the_cost_goal_is_the_brute_force_minimum():
    t = _table()
    cc = cost_cut(t, Goal(max_bluff=0.05, bluff_cost=3.0))
    assert cc.bluff_cost == 3.0 and cc.goal.max_bluff == 0.05  # the record holds the goal whole
    assert (cc.cut, cc.cost) == _brute_cost(t, 3.0)
    # a bluff costs 3 answers: letting o01 through (3) buys answers at 0.30-0.43 (4): 0.431, not 0.24
    assert cc.cut == 0.431 and cc.answered.count == 5 and cc.bluffs.count == 1
    # chosen on these 20 off-topic queries: the bound that holds after the choice, 1/20 + sqrt(ln 20 / 40)
    assert cc.guarantee == pytest.approx(1 / 20 + np.sqrt(np.log(20) / 40)) and "1/20 + 27.4%" in cc.guarantee_words
    assert set(cc.cross_validated) == {"answered", "wrong_sources", "no_answer", "bluffs"}


@settings(max_examples=40, deadline=None)
@given(answer=st.lists(st.floats(0.05, 0.95), min_size=1, max_size=12),
       ood=st.lists(st.floats(0.05, 0.95), min_size=1, max_size=12), n=st.sampled_from([0.5, 1.0, 3.0, 10.0]))
def test_cost_goal_matches_brute_force_on_random_tables(answer, ood, n):
    t = _table([round(a, 4) for a in answer], [round(o, 4) for o in ood])
    cc = cost_cut(t, Goal(max_bluff=0.05, bluff_cost=n), folds=2)
    assert cc.cost == _brute_cost(t, n)[1]


def test_bad_cost_and_units_are_one_line_errors(tmp_path):
    with pytest.raises(ValueError, match="positive number of lost answers"):
        cost_cut(_table(), Goal(max_bluff=0.05, bluff_cost=0))
    with pytest.raises(ValueError, match="states no cost goal: give bluff_cost"):
        cost_cut(_table(), Goal(max_bluff=0.05))
    with pytest.raises(ValueError, match="--units must be one of"):
        cut_from_units(0.5, "score")
    with pytest.raises(ValueError, match="similarity lies in"):
        cut_from_units(3.0, "similarity")
    assert cut_from_units(0.47, "similarity")[0] == 0.53
    none = tmp_path / "none.yaml"
    none.write_text("retriever:\n  k: 4\n")
    with pytest.raises(ValueError, match="no score_threshold"):
        cut_from_file(none)
    several = tmp_path / "several.json"
    several.write_text(json.dumps({"a": {"score_threshold": 0.5}, "b": {"distance_threshold": 0.4}}))
    with pytest.raises(ValueError, match="several cuts"):
        cut_from_file(several)
    toml = tmp_path / "llama.toml"
    toml.write_text("[postprocessor]\nsimilarity_cutoff = 0.47\n")
    assert cut_from_file(toml) == (0.47, "similarity", "similarity_cutoff")


def test_audit_lists_exactly_the_queries_that_change_between_the_cuts():
    t = _table()
    goal = Goal(max_bluff=0.05)
    cur = audit(t, 0.55, "similarity", goal, 0.24)  # distance 0.45
    assert cur.cut_distance == 0.45
    now, then = 0.45, 0.24
    ind = t.in_domain
    ids = np.array(t.query_ids)
    assert set(cur.gained) == set(ids[ind & (t.closest_holder < then) & ~(t.closest_holder < now)])
    assert set(cur.lost) == set(ids[ind & (t.closest_holder < now) & ~(t.closest_holder < then)])
    assert set(cur.bluffs_removed) == set(ids[~ind & (t.closest < now) & ~(t.closest < then)])
    assert cur.bluffs_added == ()
    assert cur.rates["answered"].count == rates_at(t, 0.45)["answered"].count
    assert not cur.meets_goal  # 2 of 20 bluff at 0.45: 10% > 5%


def test_a_safety_cut_that_answers_under_half_of_what_is_found_is_flagged_with_the_next_cut():
    from dataclasses import replace

    from ragdiag.analyses.recommend import _caution

    t = replace(_table(), reached=np.array([True] * 8 + [False] * 20))  # every needle is in the top k
    at = rates_at(t, 0.24)["answered"]  # 1 of 8 answered
    words = _caution(t, 0.24, at, 0.05)
    assert "costs 7 of the 8 answers the retriever finds" in words and "The next cut, 0.445" in words
    assert _caution(t, 0.445, rates_at(t, 0.445)["answered"], 0.05) == ""  # 5 of 8: over half
