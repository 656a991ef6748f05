"""Tests for ragdiag.analyses.threshold: the abstention gate and the sweep of its cut."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.analyses.threshold.gate import (Bluff, bluffs_at, default_cuts, distance_samples, sweep,
                                             MAX_DISTANCE)
from ragdiag.analyses.gate_table import table_from, GateTable
from ragdiag.core.gate import Gate
from ragdiag.analyses.threshold import kept_chunks
from ragdiag.analyses.threshold.choice import Goal, choose_cut, conformal_cut, cross_validate, cut_choice
from ragdiag.analyses.threshold.rates import rate_rows
from ragdiag.evaluation.rows import OUTCOME_KEYS, SweepRow
from ragdiag.analyses.threshold.choice import _folds
from ragdiag.documents.truth import Query


def fake_result(top_distance, top_holds, top_order=None, *, needle_distance=None, top1=None):
    """A FAKE ConfigResult carrying only what the gate reads."""
    d = np.asarray(top_distance, dtype=np.float64)
    order = np.tile(np.arange(d.shape[1]), (d.shape[0], 1)) if top_order is None else np.asarray(top_order)
    return SimpleNamespace(top_distance=d, top_holds=np.asarray(top_holds, dtype=bool), top_order=order,
                           needle_distance=needle_distance, top1_distance=top1)


def brute_force(result, in_domain, cuts, keep):
    """The gate applied query by query, cut by cut: the definition the sweep must equal."""
    counts = {k: [] for k in ("answered", "wrong_sources", "no_answer", "bluffs", "abstained")}
    for cut in cuts:
        c = dict.fromkeys(counts, 0)
        for i, ind in enumerate(in_domain):
            kept = [j for j in range(keep) if result.top_distance[i, j] < cut]
            if not ind:
                c["bluffs" if kept else "abstained"] += 1
            elif not kept:
                c["no_answer"] += 1
            elif any(result.top_holds[i, j] for j in kept):
                c["answered"] += 1
            else:
                c["wrong_sources"] += 1
        for k in counts:
            counts[k].append(c[k])
    return counts


# Three in-domain queries and two ood, top 3, keep 2:
#   a: distances (0.2, 0.5, 0.1), holds (F, T, T) -> first 0.2, good 0.5 (the 0.1 holder is third: not kept)
#   b: (0.3, 0.4, 0.9), holds none                 -> first 0.3, good inf
#   c: (0.6, 0.7, 0.8), holds (T, F, F)            -> first 0.6, good 0.6
#   o1: (0.35, 0.9, 0.9)                           -> first 0.35
#   o2: (0.8, 0.1, 0.9)                            -> first 0.1 (its second chunk)
HAND = fake_result(
    [[0.2, 0.5, 0.1], [0.3, 0.4, 0.9], [0.6, 0.7, 0.8], [0.35, 0.9, 0.9], [0.8, 0.1, 0.9]],
    [[0, 1, 1], [0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 0, 0]],
)
HAND_IN = np.array([True, True, True, False, False])
HAND_TABLE = [
    # cut: answered, wrong_sources, no_answer, bluffs, abstained  (kept iff distance < cut)
    (0.1, 0, 0, 3, 0, 2),  # nothing strictly under 0.1
    (0.2, 0, 0, 3, 1, 1),  # o2's 0.1 passes: a bluff
    (0.25, 0, 1, 2, 1, 1),  # a keeps its 0.2 non-holder
    (0.35, 0, 2, 1, 1, 1),  # b keeps 0.3 (no holder); o1's 0.35 is not under 0.35
    (0.5, 0, 2, 1, 2, 0),  # o1 bluffs; a's holder at 0.5 is not yet under the cut
    (0.6, 1, 1, 1, 2, 0),  # a answered
    (0.65, 2, 1, 0, 2, 0),  # c answered: everything kept somewhere
    (1.0, 2, 1, 0, 2, 0),
]


def test_gate_inputs_hand_computed():
    g = table_from(HAND, ["a", "b", "c", "o1", "o2"], HAND_IN, Gate(2))
    assert g.closest.tolist() == [0.2, 0.3, 0.6, 0.35, 0.1]
    assert g.closest_holder.tolist() == [0.5, np.inf, 0.6, np.inf, np.inf]
    assert g.window == 2 and g.query_ids == ("a", "b", "c", "o1", "o2")
    # keep 3: a's third chunk (0.1, a holder) now counts
    assert table_from(HAND, list("abcde"), HAND_IN, Gate(3)).closest_holder.tolist()[0] == 0.1


def test_ood_queries_never_count_as_answered_even_on_a_holder():
    r = fake_result([[0.1], [0.1]], [[1], [1]])
    g = table_from(r, ["a", "o"], np.array([True, False]), Gate(1))
    assert g.closest_holder.tolist() == [0.1, np.inf]


@pytest.mark.parametrize("row", HAND_TABLE, ids=[str(r[0]) for r in HAND_TABLE])
def test_sweep_hand_table(row):
    cut, *expected = row
    table = sweep(table_from(HAND, list("abcde"), HAND_IN, Gate(2)), [c for c, *_ in HAND_TABLE])
    got = table.row(cut)
    answered, wrong_sources, no_answer, bluffs, abstained = expected
    assert got == SweepRow(cut, answered, wrong_sources, no_answer, 3 - answered, bluffs, abstained, {})
    assert got.cells() == {"cut": cut, "answered": answered, "wrong_sources": wrong_sources, "no_answer": no_answer,
                           "lost": 3 - answered, "bluffs": bluffs, "abstained": abstained}


def test_sweep_equals_brute_force_on_hand_table():
    cuts = [c for c, *_ in HAND_TABLE]
    table = sweep(table_from(HAND, list("abcde"), HAND_IN, Gate(2)), cuts)
    bf = brute_force(HAND, HAND_IN, cuts, 2)
    for k, v in bf.items():
        assert getattr(table, k).tolist() == v, k


DIST = st.sampled_from([0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.9, 1.0, 1.3])


@st.composite
def gate_cases(draw):
    n = draw(st.integers(1, 8))
    width = draw(st.integers(1, 5))
    d = draw(st.lists(st.lists(DIST, min_size=width, max_size=width), min_size=n, max_size=n))
    holds = draw(st.lists(st.lists(st.booleans(), min_size=width, max_size=width), min_size=n, max_size=n))
    in_domain = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    keep = draw(st.integers(1, width))
    cuts = draw(st.lists(st.one_of(DIST, st.floats(0, 1.5)), min_size=1, max_size=8))
    return fake_result(d, holds), np.array(in_domain), sorted(cuts), keep


@settings(max_examples=150, deadline=None)
@given(gate_cases())
def test_sweep_equals_brute_force(case):
    result, in_domain, cuts, keep = case
    table = sweep(table_from(result, [str(i) for i in range(len(in_domain))], in_domain, Gate(keep)), cuts)
    bf = brute_force(result, in_domain, cuts, keep)
    for k, v in bf.items():
        assert getattr(table, k).tolist() == v, k
    assert (table.n_in, table.n_ood) == (int(in_domain.sum()), int((~in_domain).sum()))
    # monotone in the cut: a looser gate answers more, refuses less, bluffs more
    for k in ("answered", "bluffs"):
        assert (np.diff(getattr(table, k)) >= 0).all(), k
    for k in ("no_answer", "abstained"):
        assert (np.diff(getattr(table, k)) <= 0).all(), k
    # and it agrees with gate(), one query at a time
    for i, ind in enumerate(in_domain):
        if not ind:
            continue
        for cut, ans in zip(cuts, _answered_each(result, i, cuts, keep)):
            kept = kept_chunks(result, i, Gate(keep, cut))
            assert ans == any(result.top_holds[i, p] for p, _ in kept)


def _answered_each(result, i, cuts, keep):
    return [any(result.top_holds[i, j] and result.top_distance[i, j] < c for j in range(keep)) for c in cuts]


def test_sweep_default_cuts_and_rows():
    cuts = default_cuts()
    assert cuts[0] == 0.0 and cuts[-1] == 1.0 and len(cuts) == 201
    table = sweep(table_from(HAND, list("abcde"), HAND_IN, Gate(2)))
    rows = table.rows()
    assert len(rows) == 201
    # no threshold at all (cut 1.0 keeps every distance < 1): both ood queries bluff
    assert rows[-1].bluffs == 2 and rows[0].bluffs == 0


def test_row_with_a_cut_not_in_the_sweep_raises():
    table = sweep(table_from(HAND, list("abcde"), HAND_IN, Gate(2)), [0.2, 0.5])
    with pytest.raises(ValueError, match="not in this sweep"):
        table.row(0.3)
    assert table.row(0.5).bluffs == 2


@pytest.mark.parametrize("keep", [0, -1])
def test_gate_keep_is_validated(keep):
    with pytest.raises(ValueError, match="keep must be a whole number from 1 to 20"):
        table_from(HAND, list("abcde"), HAND_IN, Gate(keep))


def test_gate_keep_above_the_list_keeps_the_whole_list():
    """A corpus with fewer chunks than keep: the gate keeps what there is (tiny corpora work everywhere)."""
    wide = table_from(HAND, list("abcde"), HAND_IN, Gate(4))
    exact = table_from(HAND, list("abcde"), HAND_IN, Gate(3))
    assert wide.window == 3
    assert wide.closest.tolist() == exact.closest.tolist() and wide.closest_holder.tolist() == exact.closest_holder.tolist()


def test_gate_keeps_under_the_cut_in_rank_order():
    r = fake_result([[0.4, 0.2, 0.3, 0.1]], [[0, 0, 0, 0]], top_order=[[7, 3, 5, 9]])
    assert kept_chunks(r, 0, Gate(3, 0.35)) == [(3, 0.2), (5, 0.3)]  # 0.1 is fourth: not kept with keep 3
    assert kept_chunks(r, 0, Gate(3, 0.3)) == [(3, 0.2)]  # 0.3 is not strictly under 0.3
    assert kept_chunks(r, 0, Gate(4, 0.1)) == []


def test_bluffs_at_orders_by_the_closest_kept_chunk():
    queries = [
        Query("q1:course", "x", "course", question_id="q1"),
        Query("o1", "far away", "ood", kind="far"),
        Query("o2", "next door", "ood", kind="near"),
        Query("o3", "nothing close", "ood", kind="far"),
    ]
    r = fake_result(
        [[0.1, 0.2], [0.45, 0.3], [0.25, 0.6], [0.9, 0.8]],
        [[1, 0], [0, 0], [0, 0], [0, 0]],
        top_order=[[0, 1], [2, 3], [4, 5], [6, 7]],
    )
    bluffs = bluffs_at(r, queries, Gate(2, 0.5))
    # o2 closest at 0.25, then o1 at 0.3; o3 keeps nothing; the in-domain query is no bluff
    assert [b.query_id for b in bluffs] == ["o2", "o1"]
    assert bluffs[0] == Bluff("o2", "near", ((4, 0.25),))
    assert bluffs[1].kept == ((3, 0.3), (2, 0.45))  # closest first, not rank order
    assert bluffs_at(r, queries, Gate(2, 0.2)) == []


HAND_KINDS = (None, None, None, "near", "far")
HAND_GROUPS = ("qa", "qa", "qb", "o1", "o2")  # a and b: two phrasings of one question


def hand_inputs(keep=2):
    return table_from(HAND, ["a", "b", "c", "o1", "o2"], HAND_IN, Gate(keep), groups=HAND_GROUPS, kinds=HAND_KINDS)


def test_distance_samples_are_the_gates_own_values():
    s = distance_samples(hand_inputs())
    assert s.answer.tolist() == [0.5, 0.6]  # a's kept holder 0.5 (not its third chunk 0.1), c's 0.6; b has none
    assert s.kept.tolist() == [0.2, 0.3, 0.6]  # closest of the top 2, every answerable query
    assert {k: v.tolist() for k, v in s.ood.items()} == {"near": [0.35], "far": [0.1]}  # o2: its SECOND chunk


@pytest.mark.parametrize("cut", [c for c, *_ in HAND_TABLE] + [0.0, 0.3, 0.55, 2.0])
def test_histogram_counts_under_the_cut_equal_the_table_row(cut):
    from ui.frames import distance_frame, under_cut_counts

    inputs = hand_inputs()
    row = sweep(inputs, [cut]).row(cut)
    under = under_cut_counts(distance_frame(distance_samples(inputs), keep=2), cut)
    assert under["answer"] == row.answered
    assert under["kept"] == row.answered + row.wrong_sources
    assert (under["near"], under["far"]) == (row.bluffs_by_kind["near"], row.bluffs_by_kind["far"])
    assert under["near"] + under["far"] == row.bluffs


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.lists(st.tuples(st.booleans(), st.sampled_from(["near", "far"])), min_size=2, max_size=12),
       st.data())
def test_histogram_and_sweep_agree_on_random_gates(keep, kinds, data):
    from ui.frames import distance_frame, under_cut_counts

    n = len(kinds)
    d = np.array(data.draw(st.lists(st.lists(st.floats(0, 1, allow_nan=False), min_size=4, max_size=4),
                                    min_size=n, max_size=n)))
    holds = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=n, max_size=n)))
    ind = np.array([k[0] for k in kinds])
    inputs = table_from(fake_result(d, holds), [str(i) for i in range(n)], ind, Gate(keep),
                         kinds=[None if i else k for i, (_, k) in zip(ind, kinds)])
    frame = distance_frame(distance_samples(inputs), keep=keep)
    for cut in (0.0, 0.25, 0.5, 0.75, 1.0, 1.5):
        row = sweep(inputs, [cut]).row(cut)
        under = under_cut_counts(frame, cut)
        assert under.get("answer", 0) == row.answered
        assert under.get("kept", 0) == row.answered + row.wrong_sources
        assert under.get("near", 0) + under.get("far", 0) == row.bluffs


def test_rate_rows_counts_intervals_and_zero_bluff_bound():
    from ragdiag.analyses.compare.intervals import rate_interval

    inputs = hand_inputs()
    rows = rate_rows(inputs, [0.1, 0.6])
    assert rows[0].bluffs.cells() == {"count": 0, "rate": 0.0, "low": 0.0, "high": pytest.approx(1 - 0.025 ** 0.5)}
    r = rows[1]
    assert (r.answered.count, r.wrong_sources.count, r.no_answer.count) == (1, 1, 1)
    assert (r.bluffs.count, r.bluffs_near.count, r.bluffs_far.count) == (2, 1, 1)
    assert r.bluffs_near.high == rate_interval(1, 1).high
    for cell in r.outcomes().values():
        assert cell.low <= cell.rate <= cell.high
    assert list(r.cells()) == ["cut", *OUTCOME_KEYS] and r.cells()["bluffs"] == r.bluffs.cells()


def test_choose_cut_by_the_written_rule():
    inputs = hand_inputs()  # ood firsts: o2 0.1, o1 0.35; answer distances: 0.5, 0.6 (b: none)
    assert choose_cut(inputs, Goal(max_bluff=0.0)) == 0.1  # d < 0.1 keeps no ood query
    assert choose_cut(inputs, Goal(max_bluff=0.5)) == 0.35  # one of two may bluff
    assert choose_cut(inputs, Goal(max_bluff=1.0)) == MAX_DISTANCE
    assert choose_cut(inputs, Goal(min_answered=0.3)) == pytest.approx(0.5) and choose_cut(
        inputs, Goal(min_answered=0.3)) > 0.5  # just above a's 0.5: 1 of 3 answered
    assert choose_cut(inputs, Goal(min_answered=0.9)) is None  # b never keeps its answer
    with pytest.raises(ValueError, match="exactly one goal"):
        Goal()
    with pytest.raises(ValueError, match="max_bluff"):
        Goal(max_bluff=1.5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30), st.floats(0, 1))
def test_choose_cut_is_the_largest_cut_within_the_bluff_budget(ood, a):
    n = len(ood)
    inputs = GateTable(tuple(map(str, range(n))), np.zeros(n, bool), np.array(ood), np.full(n, np.inf), 4)
    cut = choose_cut(inputs, Goal(max_bluff=a))
    bluffs = lambda c: int((np.array(ood) < c).sum())  # noqa: E731
    assert bluffs(cut) <= a * n + 1e-9
    if cut < MAX_DISTANCE:  # any larger cut lets one more through
        assert bluffs(np.nextafter(cut, 3)) > a * n + 1e-9


def test_conformal_cut_and_when_it_cannot_certify():
    inputs = hand_inputs()
    cut, why = conformal_cut(inputs, 0.05)  # 2 ood queries: 1/0.05 - 1 = 19 needed
    assert cut is None and "at least 19" in why
    n = 30
    g = GateTable(tuple(map(str, range(n))), np.zeros(n, bool), np.arange(1, n + 1) / 100, np.full(n, np.inf), 4)
    assert conformal_cut(g, 0.05)[0] == 0.01  # j = floor(0.05 * 31) = 1
    assert conformal_cut(g, 0.1)[0] == 0.03  # j = floor(3.1) = 3


def test_conformal_cut_guarantee_by_simulation():
    # exchangeable ood distances: a new query bluffs (d < cut) with probability <= a, over 4,000 seeded sets
    rng = np.random.default_rng(7)
    a, n = 0.1, 30
    sets = np.sort(rng.random((4000, n)), axis=1)
    j = int(np.floor(a * (n + 1)))
    new = rng.random(4000)
    rate = (new < sets[:, j - 1]).mean()
    assert rate <= a + 0.015  # j / (n + 1) = 0.0968, plus sampling noise
    g = GateTable(tuple(map(str, range(n))), np.zeros(n, bool), sets[0], np.full(n, np.inf), 4)
    cut = conformal_cut(g, a)[0]
    # the order statistic rounded down to 3 decimals: never above it (the guarantee holds), within 0.001 below it
    assert cut == np.floor(sets[0, j - 1] * 1000) / 1000 and sets[0, j - 1] - 0.001 < cut <= sets[0, j - 1]
    assert (sets[0] < cut).sum() == j - 1  # still only the j - 1 smaller distances pass: the same bluffs


def test_the_proposed_cut_is_the_number_printed():
    """An order statistic printed with 3 or 4 decimals rounds up past itself and lets that query through."""
    first = np.array([0.52498711, 0.61, 0.7])
    g = GateTable(("o1", "o2", "o3"), np.zeros(3, bool), first, np.full(3, np.inf), 4)
    cut = conformal_cut(g, 0.5)[0]  # j = floor(0.5 * 4) = 2: s_(2) = 0.61
    assert cut == 0.61
    g1 = GateTable(("o1", "o2", "o3"), np.zeros(3, bool), first, np.full(3, np.inf), 4)
    cut1 = conformal_cut(g1, 0.25)[0]  # j = 1: s_(1) = 0.52498711 -> 0.524
    assert cut1 == 0.524 and float(f"{cut1:.4f}") == cut1 and (first < float(f"{cut1:.3f}")).sum() == 0


def test_conformal_guarantee_chance_of_exceeding_the_goal_matches_simulation():
    from ragdiag.analyses.threshold import conformal_guarantee, exceed_chance, in_sample_words

    # the realised bluff rate of the conformal cut is F(s_(j)) ~ Beta(j, n + 1 - j); with uniform distances it is
    # s_(j) itself: count the seeded sets where it exceeds the goal
    rng = np.random.default_rng(11)
    for a, n in ((0.05, 30), (0.1, 30), (0.1, 60)):
        j = int(np.floor(a * (n + 1)))
        realised = np.sort(rng.random((20_000, n)), axis=1)[:, j - 1]
        assert exceed_chance(j, n, a) == pytest.approx((realised > a).mean(), abs=0.012)
    assert exceed_chance(1, 30, 0.05) == pytest.approx(0.95 ** 30)  # Beta(1, 30): P(X > a) = (1 - a)^30
    words = conformal_guarantee(1, 30, 0.05)
    assert "on average over sets of off-topic queries" in words and "is 21%" in words and "1/31 = 3.2%" in words
    # the in-sample cut for a 5% goal: the 2nd smallest of 30, so a new query bluffs with probability 2/31
    assert "2/31 = 6.5%" in in_sample_words(30, 0.05) and in_sample_words(30, 0.05).startswith("in sample (optimistic)")
    sets = np.sort(rng.random((20_000, 30)), axis=1)
    assert (rng.random(20_000) < sets[:, 1]).mean() == pytest.approx(2 / 31, abs=0.005)


def test_cut_choice_proposes_the_conformal_cut_for_a_bluff_goal():
    n = 30
    g = GateTable(tuple(map(str, range(n))), np.zeros(n, bool), np.arange(1, n + 1) / 100, np.full(n, np.inf), 4)
    choice = cut_choice(g, Goal(max_bluff=0.05))
    doc = choice.as_json()
    assert doc["proposed"]["cut"] == 0.01 and doc["proposed"]["method"] == "conformal"
    assert "chance that the realised rate exceeds 5.0%" in doc["proposed"]["guarantee"]
    # the guarantee never without its premise: here, and in the export file's header comment
    from ragdiag.analyses.threshold.choice import CONFORMAL_PREMISE
    from ragdiag.analyses.threshold.export import thresholds_yaml

    assert doc["proposed"]["guarantee"].endswith(CONFORMAL_PREMISE) and "resemble the ones written" in CONFORMAL_PREMISE
    text = thresholds_yaml(g, choice, config="E/dense", model={"model": "m", "weights_sha256": "7e54"})
    assert f"# A conformal cut's guarantee: {CONFORMAL_PREMISE}." in text.splitlines()[:4]
    # one cut: the top-level cut is the proposed one; the in-sample cut (2nd smallest) only by name
    assert doc["cut"] == doc["proposed"]["cut"] == 0.01 and doc["cut_method"] == "conformal"
    assert doc["in_sample_cut"] == 0.02 and doc["in_sample_label"] == "in sample (optimistic)"
    assert cut_choice(g, Goal(min_answered=0.5)).proposed is None


def test_cross_validation_folds_keep_questions_whole_and_are_seeded():
    rng = np.random.default_rng(0)
    n_q, n_ood = 20, 15
    groups = tuple(f"q{i // 2}" for i in range(2 * n_q)) + tuple(f"o{i}" for i in range(n_ood))
    ind = np.array([True] * (2 * n_q) + [False] * n_ood)
    first = rng.random(ind.size)
    good = np.where(ind & (rng.random(ind.size) < 0.7), first, np.inf)
    inputs = GateTable(groups, ind, first, good, 4, groups)
    folds = _folds(inputs, 5, 1)
    for q in range(n_q):
        assert folds[2 * q] == folds[2 * q + 1]  # both phrasings in one fold
    assert sorted(np.bincount(folds[ind])) == [8] * 5 and sorted(np.bincount(folds[~ind])) == [3] * 5
    assert (_folds(inputs, 5, 1) == folds).all()
    cv, cuts = cross_validate(inputs, Goal(max_bluff=0.1), seed=1)
    assert cross_validate(inputs, Goal(max_bluff=0.1), seed=1) == (cv, cuts)
    assert len(cuts) == 5
    # the pooled held-out outcomes, query by query: each fold under the cut chosen on the other four
    answered = wrong_sources = no_answer = bluffs = 0
    for f in range(5):
        train = folds != f
        rest = GateTable(tuple(np.array(groups)[train]), ind[train], first[train], good[train], 4,
                          tuple(np.array(groups)[train]))
        c = choose_cut(rest, Goal(max_bluff=0.1))
        for i in np.flatnonzero(folds == f):
            kept, ans = c is not None and first[i] < c, c is not None and good[i] < c
            if not ind[i]:
                bluffs += kept
            else:
                answered += ans
                wrong_sources += kept and not ans
                no_answer += not kept
    assert (cv["answered"].count, cv["wrong_sources"].count, cv["no_answer"].count, cv["bluffs"].count) == (
        answered, wrong_sources, no_answer, bluffs)
    assert answered > 0 and no_answer > 0
    choice = cut_choice(inputs, Goal(max_bluff=0.1))
    assert choice.cut == choose_cut(inputs, Goal(max_bluff=0.1))
    assert choice.in_sample.bluffs.count <= 1  # floor(0.1 * 15)
    assert choice.as_json()["cross_validated"] == {k: v.cells() for k, v in cross_validate(inputs, Goal(max_bluff=0.1))[0].items()}


def test_sweep_on_the_tiny_evaluation(tiny_eval):
    from ragdiag.analyses.threshold.gate import sweep_table

    table = sweep_table(tiny_eval, "C/dense", Gate(2), cuts=[0.5, 0.6, 1.0, 1.01])
    # answered needs a holder among the top 2 under the cut. Needle distances of the hits in the top 2:
    # q1:course 0.5477, q2:course 0.4226, q2:ticket 0.4037, q4:ticket 0.0004 (see test_evaluate.py)
    assert table.answered.tolist() == [3, 4, 4, 4]
    # o1 reaches the zebra chunk at 0.6985; o2 shares no word (distance 1.0, kept only past 1.0)
    assert table.bluffs.tolist() == [0, 0, 1, 2]
    expected = brute_force(tiny_eval.result("C/dense"), tiny_eval.in_domain, [0.5, 0.6, 1.0, 1.01], 2)
    assert (table.wrong_sources.tolist(), table.no_answer.tolist()) == (expected["wrong_sources"], expected["no_answer"])
