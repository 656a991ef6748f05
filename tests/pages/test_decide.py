"""The decision is on answered at each configuration's own cut (issue 44), on the tiny corpus with the FAKE encoder.

The oracle is written here by hand: each configuration's proposed cut for the bluff goal, the answered column
under it, Hsu's comparison with the best over questions (the library's ``best_of``, itself checked against an
independent Hsu in ``tests/model/test_statistics_corpora.py``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from ragdiag.analyses.recommend import answered_at_cut, compare_answered, complexity_key, recommend
from ragdiag.core.gate import Gate

from fakeapp import app, fake_app, lib, texts  # noqa: F401 - fixtures


@pytest.fixture(scope="module")
def six(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A,B,C,D,E,F",
                    retrievers="dense,bm25,hybrid")


@pytest.mark.parametrize("max_bluff", [0.05, 0.5])
def test_the_cut_for_a_bluff_goal_reads_only_the_off_topic_queries(six, max_bluff):
    """Moving every answerable query's distances moves no cut: "answered at the cut" is a per-query outcome."""
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.threshold import Goal, propose_cut

    at = answered_at_cut(six, Gate(k=2), max_bluff=max_bluff)
    rng = np.random.default_rng(44)
    for label, a in at.items():
        t = gate_table(six, label, Gate(k=2))
        ind = t.in_domain
        shaken = replace(t, closest=np.where(ind, rng.uniform(0, 2, ind.size), t.closest),
                         closest_holder=np.where(ind, rng.uniform(0, 2, ind.size), t.closest_holder))
        assert propose_cut(shaken, Goal(max_bluff=max_bluff)).cut == a.cut, label
        assert a.answered().sum() == a.rates["answered"].count  # the column is the card's count


def test_the_pick_answers_at_least_every_member_or_says_why_not(six):
    for gate in (Gate(k=2), Gate(k=4), Gate(keep=2, k=2)):
        rec = recommend(six, gate)
        means = {r.config: r.mean for r in rec.comparison.rows}
        assert rec.comparison.metric == rec.measure == "answered at its own cut for at most 5% bluffs"
        assert rec.answered.rate == pytest.approx(means[rec.config])
        if rec.config == rec.best:
            assert all(means[rec.config] >= means[m] for m in rec.best_set)
            # ties in the estimate go to the simplest
            tied = [c for c, m in means.items() if m == means[rec.config]]
            assert rec.config == min(tied, key=complexity_key)
        else:  # traded for simplicity: only a loss the data rule out (shown within the margin)
            assert "is shown within 5 points of the best" in rec.why
        if rec.runner_up is not None:
            assert rec.runner_up_rates["answered"].rate == pytest.approx(means[rec.runner_up])
            if rec.config == rec.best:
                assert means[rec.config] >= means[rec.runner_up]
        doc = rec.as_json()
        assert doc["decided_on"] == rec.measure and doc["recall_at_k"]["count"] >= doc["answered"]["count"]
        rows = doc["comparison"]["rows"]
        assert [r["answered"] for r in rows] == sorted((r["answered"] for r in rows), reverse=True)
        assert {r["config"]: r["cut"] for r in rows} == rec.cuts


def test_compare_answered_refuses_mixed_goals(six):
    a = answered_at_cut(six, Gate(k=2), max_bluff=0.05, configs=["A/dense"])
    b = answered_at_cut(six, Gate(k=2), max_bluff=0.5, configs=["E/dense"])
    with pytest.raises(ValueError, match="same bluff goal"):
        compare_answered(six, {**a, **b}, k=2)


def test_the_summarys_runner_up_line_agrees_with_the_pick(fake_app, lib):
    """The line under the Summary's cards compares the pick with the runner-up at its own cut: the answered
    difference is the pick's minus the runner-up's, never against the pick when the pick is the best."""
    from ragdiag.analyses.versus import difference_words, versus

    rec = recommend(lib)
    assert rec.runner_up is not None
    vs = versus(lib, rec.config, Gate(rec.keep, rec.cut, rec.k), rec.runner_up, Gate(rec.keep, rec.runner_up_cut,
                                                                                      rec.k))
    d = vs.differences["answered"]
    assert d.estimate == pytest.approx(rec.answered.rate - rec.runner_up_rates["answered"].rate)
    if rec.config == rec.best:
        assert d.estimate >= 0
    at = app("app_pages/summary.py")
    assert not at.exception, [e.value for e in at.exception]
    assert f"answered: {difference_words(d)}" in texts(at)


def test_an_answered_goal_moves_the_pick_on_or_says_none_can(six):
    base = recommend(six, Gate(k=2))
    assert base.feasible is None and base.verdict == "" and base.as_json()["min_answered"] is None
    best_rate = base.comparison.rows[[r.config for r in base.comparison.rows].index(base.best)].mean
    met = recommend(six, Gate(k=2), min_answered=best_rate)  # the best meets it: so does the pick
    assert met.feasible is True and met.answered.rate >= best_rate - 1e-12 and "Both goals" in met.verdict
    missed = recommend(six, Gate(k=2), min_answered=min(1.0, best_rate + 0.01))
    assert missed.feasible is False and missed.config == missed.best
    assert missed.verdict.startswith("No configuration meets both goals") and missed.best in missed.verdict
    with pytest.raises(ValueError, match="min_answered"):
        recommend(six, min_answered=1.5)
