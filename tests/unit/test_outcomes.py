"""Tests for ragdiag.analyses.outcomes: one ladder, and every consumer agrees with it query by query.

Evaluations used: RANDOM synthetic ones (hand-made rankings and distances drawn by Hypothesis, not produced by any
retriever; holders, destroyed and truncated needles set by hand), the table-driven synthetic one of
test_funnel.py, and the tiny corpus evaluated with the FAKE encoder (conftest.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiag.evaluation.evaluate import _config_result
from ragdiag.evaluation.records import Config, Evaluation
from ragdiag.analyses.funnel import funnel
from ragdiag.analyses.outcomes import (LADDER, OOD_OUTCOMES, OUTCOMES, gate_values, ladder_codes,
                              outcome_counts)
from ragdiag.analyses.threshold import rate_rows, sweep
from ragdiag.analyses.gate_table import GateTable, gate_table, query_outcomes
from ragdiag.core.gate import Gate
from ragdiag.documents.truth import Query
from funnel_cases import FakeIndex, synthetic_eval

N_CHUNKS = 30


class _FakeIndex(FakeIndex):
    """A FAKE strategy index (:class:`funnel_cases.FakeIndex`) whose truncation counts only where the question has a
    holder (with none its needle was destroyed)."""

    def truncated_before_needle(self, question_id, needle_end):
        return super().truncated_before_needle(question_id, needle_end) and bool(self.holders[question_id].size)


#: The rungs that lose the answer before the gate (the needle is not in the top k).
BEFORE_GATE = LADDER[:4]


def random_eval(seed: int, n_in: int = 10, n_ood: int = 5) -> Evaluation:
    """A RANDOM synthetic evaluation: random rankings (unrelated to the distances, as BM25's), random distances,
    0-2 holders per question (0: destroyed), some questions truncated, a few ood queries."""
    rng = np.random.default_rng(seed)
    queries = tuple(Query(f"q{i}:course", f"q{i}", "course", question_id=f"q{i}") for i in range(n_in)) + tuple(
        Query(f"o{i}", f"o{i}", "ood", kind="near" if i % 2 else "far") for i in range(n_ood))
    holders = {f"q{i}": rng.choice(N_CHUNKS, size=rng.integers(0, 3), replace=False) for i in range(n_in)}
    truncated = {q for q in holders if rng.random() < 0.3}
    index = _FakeIndex(holders, truncated)
    truth = SimpleNamespace(question=lambda qid: SimpleNamespace(end=100))
    orders = np.stack([rng.permutation(N_CHUNKS) for _ in queries])
    dist = np.round(rng.uniform(0.05, 0.95, size=(len(queries), N_CHUNKS)), 2)  # ties on purpose
    cfg = Config("E", "dense")
    res = _config_result(cfg, index, truth, queries, orders, -dist, dist, seconds=0.0)
    return Evaluation(corpus=None, truth=truth, queries=queries, indexes={"E": index}, results={cfg: res})


def _one(inputs: GateTable, i: int) -> GateTable:
    """The gate inputs of query ``i`` alone (so the sweep's counts say what it does to that query)."""
    sel = np.arange(len(inputs.query_ids)) == i
    reached = None if inputs.reached is None else inputs.reached[sel]
    return GateTable((inputs.query_ids[i],), inputs.in_domain[sel], inputs.closest[sel], inputs.closest_holder[sel],
                      inputs.window, reached=reached)


def check_agreement(ev: Evaluation, label: str, k: int, keep: int, cut: float) -> None:
    """Sweep, rate masks, funnel and per-query outcomes agree at (k, keep, cut), query by query."""
    outs = query_outcomes(ev, label, Gate(keep, cut, k))
    assert [o.query_id for o in outs] == [q.id for q in ev.queries]
    counts = outcome_counts(outs)
    inputs = gate_table(ev, label, Gate(keep, k=k))
    table = sweep(inputs, [cut])
    # the sweep's counts are the ladder's
    assert table.answered[0] == counts["answered"]
    assert table.gate_rungs["refused"][0] == counts["refused"]
    assert table.gate_rungs["kept-but-wrong"][0] == counts["kept-but-wrong"]
    assert (table.bluffs[0], table.abstained[0]) == (counts["bluff"], counts["abstained"])
    assert table.n_reached == sum(counts[r] for r in ("refused", "kept-but-wrong", "answered"))
    # what the gate hands over, whatever the rung
    assert table.wrong_sources[0] == sum(o.in_domain and o.kept > 0 and o.outcome != "answered" for o in outs)
    assert table.no_answer[0] == sum(o.in_domain and o.kept == 0 for o in outs)
    rates = rate_rows(inputs, [cut])[0]
    assert (rates.answered.count, rates.wrong_sources.count, rates.no_answer.count, rates.bluffs.count) == (
        table.answered[0], table.wrong_sources[0], table.no_answer[0], table.bluffs[0])
    # query by query: the sweep of each query alone, and the funnel's row
    f = funnel(ev, label, gate=Gate(keep=keep, cut=cut, k=k))
    stages = {r.query_id: r.stage for r in f.rows}
    assert f.counts() == {r: counts[r] for r in LADDER}
    for i, o in enumerate(outs):
        alone = sweep(_one(inputs, i), [cut])
        if not o.in_domain:
            assert o.outcome in OOD_OUTCOMES and (o.outcome == "bluff") == bool(alone.bluffs[0])
            assert o.query_id not in stages
            continue
        assert stages[o.query_id] == o.outcome
        assert (o.outcome == "answered") == bool(alone.answered[0])
        assert (o.kept > 0 and o.outcome != "answered") == bool(alone.wrong_sources[0])
        assert (o.outcome in BEFORE_GATE) == (not (o.needle_rank and o.needle_rank <= k))
        if o.outcome not in BEFORE_GATE:
            assert alone.gate_rungs[o.outcome][0] == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), k=st.integers(1, 20), keep=st.integers(1, 20),
       cut=st.floats(0.0, 1.0, allow_nan=False))
def test_random_evaluations_agree_query_by_query(seed, k, keep, cut):
    check_agreement(random_eval(seed), "E/dense", k, keep, cut)


@settings(max_examples=30, deadline=None)
@given(k=st.integers(1, 20), keep=st.integers(1, 20), cut=st.sampled_from([0.0, 0.25, 0.3, 0.6, 0.7, 0.9, 1.0]))
def test_the_funnels_synthetic_table_agrees(k, keep, cut):
    ev = synthetic_eval()
    for label in ("E/dense", "E/bm25", "E/hybrid", "E/rerank-maxsim"):
        check_agreement(ev, label, k, keep, cut)


@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 10), keep=st.integers(1, 10), cut=st.floats(0.0, 1.05, allow_nan=False))
def test_fake_encoder_evaluation_agrees(tiny_eval, k, keep, cut):
    width = tiny_eval.result("C/dense").top_order.shape[1]
    for label in ("C/dense", "C/bm25", "C/hybrid"):
        check_agreement(tiny_eval, label, min(k, width), keep, cut)


def test_issue_case_needle_sixth_at_keep_eight():
    """A needle ranked 6th and under the cut: answered at k = keep = 8, ranked-low at k = 4, whatever keep."""
    ev = synthetic_eval([("six", True, False, 6, 6, 6, 6, 0.3, 0.3, "", "", "")])
    at8 = query_outcomes(ev, "E/dense", Gate(8, 0.6, 8))[0]
    assert (at8.outcome, at8.needle_rank, at8.kept) == ("answered", 6, 2)  # rank 1 (0.3) and the needle (0.3)
    for keep in (4, 8):  # the gate is handed the top 4: the needle never reaches it
        assert query_outcomes(ev, "E/dense", Gate(keep, 0.6, 4))[0].outcome == "ranked-low"
    assert funnel(ev, "E/dense", gate=Gate(keep=8, cut=0.6, k=8)).rows[0].stage == "answered"


# Hand table of the rule on arrays (k = 4, pool = 25, cut 0.5): final rank, pool rank, first, good, flags -> outcome.
HAND = [
    # final, pool, first, good, destroyed, truncated, in_domain, expected
    (0, 0, 0.2, np.inf, True, False, True, "destroyed"),
    (9, 9, 0.2, np.inf, False, True, True, "truncated"),
    (2, 2, 0.2, 0.2, False, True, True, "answered"),  # truncated holders, but one is in the top k: found
    (30, 30, 0.2, np.inf, False, False, True, "not-in-pool"),
    (0, 0, 0.2, np.inf, False, False, True, "not-in-pool"),  # BM25: the holder shares no word with the query
    (7, 7, 0.2, np.inf, False, False, True, "ranked-low"),
    (3, 30, 0.2, 0.2, False, False, True, "answered"),  # the pool rank only matters below k
    (1, 1, 0.5, 0.5, False, False, True, "refused"),  # d < cut: 0.5 is not under 0.5
    (2, 2, 0.1, 0.7, False, False, True, "kept-but-wrong"),
    (4, 4, 0.1, np.inf, False, False, True, "kept-but-wrong"),  # the holder is in the top k, past keep
    (0, 0, 0.4, np.inf, False, False, False, "bluff"),
    (0, 0, 0.6, np.inf, False, False, False, "abstained"),
]


def test_ladder_codes_hand_table():
    cols = list(zip(*HAND))
    codes = ladder_codes(final_rank=np.array(cols[0]), pool_rank=np.array(cols[1]), closest=np.array(cols[2]),
                         closest_holder=np.array(cols[3]), destroyed=np.array(cols[4]), truncated=np.array(cols[5]),
                         in_domain=np.array(cols[6]), k=4, pool=25, gate=Gate(4, 0.5))
    assert [OUTCOMES[c] for c in codes] == list(cols[7])


def test_gate_values_look_at_the_top_min_k_keep():
    d = np.array([[0.4, 0.3, 0.2, 0.1]])
    h = np.array([[False, False, False, True]])
    assert [v.tolist() for v in gate_values(d, h, gate=Gate(4, k=4))] == [[0.1], [0.1]]
    assert [v.tolist() for v in gate_values(d, h, gate=Gate(4, k=2))] == [[0.3], [np.inf]]  # handed the top 2
    assert [v.tolist() for v in gate_values(d, h, gate=Gate(3, k=4))] == [[0.2], [np.inf]]  # keeps 3
    assert [v.tolist() for v in gate_values(d, h, gate=Gate(9))] == [[0.1], [0.1]]  # fewer chunks than keep: all


def test_counts_list_every_outcome_and_reject_unknown_names():
    assert list(outcome_counts([])) == list(LADDER + OOD_OUTCOMES)
    with pytest.raises(ValueError, match="unknown outcome 'hit'"):
        outcome_counts(["hit"])


def test_bad_parameters_are_value_errors(tiny_eval):
    for make, message in ((lambda: Gate(4, k=0), "k must be a whole number from 1 to 20"),
                          (lambda: Gate(0), "keep must be a whole number from 1 to 20")):
        with pytest.raises(ValueError, match=message):
            make()
    with pytest.raises(ValueError, match="the pool"):
        query_outcomes(tiny_eval, "C/dense", Gate(4), pool=2)


def test_a_corpus_smaller_than_k_ranks_every_chunk(tiny_folder):
    """Two chunks and k = 4: the top 4 is every chunk, not an error (the Inspector of a small corpus)."""
    import ragdiag
    from fakes import fake_encoder

    corpus = ragdiag.load_corpus(tiny_folder)
    truth = ragdiag.load_truth(tiny_folder.parent / "tiny.truth.json", corpus)
    ev = ragdiag.evaluate(corpus, truth, encoder=fake_encoder(), strategies="E", retrievers="dense")
    res = ev.result("E/dense")
    width = res.top_distance.shape[1]
    out = query_outcomes(ev, "E/dense", Gate(width + 2, 2.0, width + 2))
    same = query_outcomes(ev, "E/dense", Gate(width, 2.0, width))
    assert [o.outcome for o in out] == [o.outcome for o in same]
