"""The binding cause of a failed query (ragdiag.analyses.cause), checked by brute force against the gate's own rule,
and the paired differences of two pipelines (ragdiag.analyses.versus) against a hand count.

The brute force does not reuse the module's shortcuts: it changes the ranked list of one query (a cut from every
3-decimal value, or the best passage holding the answer moved to rank 1) and asks whether a passage holding the
answer is kept (``Gate.kept`` on the changed row, ``top_holds`` for what holds the answer).
"""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.analyses.cause import CAUSES, causes, higher_cut_to_answer, lower_cut_to_refuse
from ragdiag.core.gate import Gate

CUTS = np.round(np.arange(0.0, 2.0005, 0.001), 3)


def _answered(dist: np.ndarray, holds: np.ndarray, gate: Gate) -> bool:
    return bool((gate.kept(dist[None, :])[0] & holds).any())


def _given_any(dist: np.ndarray, gate: Gate) -> bool:
    return bool(gate.kept(dist[None, :])[0].any())


def _brute(ev, config: str, gate: Gate) -> dict:
    """Per failed query: which single change answers it, found by trying them."""
    res = ev.result(config)
    out = {}
    for i, q in enumerate(ev.queries):
        dist, holds = res.top_distance[i].astype(float), res.top_holds[i].astype(bool)
        if not q.in_domain:
            if _given_any(dist, gate):  # a bluff: the largest printed cut that refuses it
                refusing = [c for c in CUTS if not _given_any(dist, gate.with_cut(c))]
                out[q.id] = ("bluff", max(refusing))
            continue
        if _answered(dist, holds, gate):
            continue
        answering = [c for c in CUTS if c > gate.cut and _answered(dist, holds, gate.with_cut(c))]
        nd = float(res.needle_distance[i])
        first = np.concatenate([[nd], dist]) if np.isfinite(nd) else dist
        holds_first = np.concatenate([[True], holds]) if np.isfinite(nd) else holds
        by_rank = np.isfinite(nd) and _answered(first, holds_first, gate)
        both = [c for c in CUTS if np.isfinite(nd) and _answered(first, holds_first, gate.with_cut(c))]
        out[q.id] = ("cut" if answering else "ranking" if by_rank else "both",
                     min(answering) if answering else (min(both) if both and not by_rank else None))
    return out


def _check(ev, config: str, gate: Gate) -> int:
    found = {c.query_id: c for c in causes(ev, config, gate)}
    brute = _brute(ev, config, gate)
    assert set(found) == set(brute), (config, set(found) ^ set(brute))
    for qid, c in found.items():
        kind, cut = brute[qid]
        if kind == "bluff":
            assert c.outcome == "bluff" and c.cause == "cut" and c.answer_cut == pytest.approx(cut), (qid, c)
        elif c.cause == "chunking":  # no passage holds it whole: no cut or ranking finds one
            assert kind == "both" and cut is None, (qid, c, kind)
        else:
            assert c.cause == kind, (qid, c, kind)
            if kind in ("cut", "both") and cut is not None:
                assert c.answer_cut == pytest.approx(cut), (qid, c, cut)
    return len(found)


def test_cut_helpers_are_the_printed_neighbours():
    assert higher_cut_to_answer(0.648) == 0.649 and higher_cut_to_answer(0.6481) == 0.649
    assert lower_cut_to_refuse(0.52499) == 0.524 and lower_cut_to_refuse(0.525) == 0.525
    assert higher_cut_to_answer(1.9999) == 2.0 and higher_cut_to_answer(2.0) is None


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.9])
def test_every_cause_is_the_change_that_alone_answers_it_tiny(tiny_eval, cut):
    n = sum(_check(tiny_eval, c.label, Gate(2, cut)) for c in tiny_eval.results)
    assert n > 0  # the tiny set has failures at every cut tried: the check is not empty


def test_causes_name_only_known_causes_and_other_configurations(tiny_eval):
    labels = {c.label for c in tiny_eval.results}
    for c in causes(tiny_eval, "C/dense", Gate(2, 0.6)):
        assert c.cause in CAUSES
        assert set(c.answered_by) <= labels - {"C/dense"}


@pytest.mark.model
def test_bundled_failures_at_the_recommended_cut_name_a_change_that_answers_them(bundled_eval_c):
    """Issue 38: every failed query of the bundled corpus at the recommended cut, each configuration."""
    from ragdiag.analyses.recommend import recommend
    from ui.inspect_words import cause_sentence, outcome_of, reranks
    from ragdiag.analyses.gate_table import query_outcomes

    rec = recommend(bundled_eval_c)
    gate = Gate(rec.keep, rec.cut, rec.k)
    total = 0
    for cfg in bundled_eval_c.results:
        total += _check(bundled_eval_c, cfg.label, gate)
        why = {c.query_id: c for c in causes(bundled_eval_c, cfg.label, gate)}
        for o in query_outcomes(bundled_eval_c, cfg.label, gate):
            words = cause_sentence(outcome_of(o, cfg.label), why.get(o.query_id), reranker=reranks(cfg.label))
            assert "reranker" not in words, (cfg.label, words)  # dense, BM25 and hybrid re-score nothing
    assert total > 10


def test_versus_is_the_difference_of_the_hand_counted_rates(tiny_eval):
    from ragdiag.analyses.versus import detectable, gate_rates, versus

    a, b = Gate(2, 0.9), Gate(2, 0.3)
    vs = versus(tiny_eval, "C/dense", a, "C/bm25", b)
    ra, rb = gate_rates(tiny_eval, "C/dense", a), gate_rates(tiny_eval, "C/bm25", b)
    for m in ("answered", "bluffs", "lost"):
        d = vs.differences[m]
        if ra[m].rate is not None:
            assert d.estimate == pytest.approx(ra[m].rate - rb[m].rate)
            assert d.low <= d.estimate <= d.high
    same = versus(tiny_eval, "C/dense", a, "C/dense", a)
    assert not any(detectable(d) for d in same.differences.values())  # a pipeline against itself: nothing
