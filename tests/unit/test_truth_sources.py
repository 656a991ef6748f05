"""Drafted questions as a slice: dropping them from an evaluation equals evaluating without them."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from ragdiag.analyses.compare.best import best
from ragdiag.analyses.compare.sources import source_effect, without_questions
from ragdiag.documents.truth import parse_truth
from ragdiag.evaluation.evaluate import evaluate

from tiny import TINY_TRUTH


def test_without_questions_equals_evaluating_without_them(tiny_corpus, tiny_eval, fake_encoder):
    # the oracle: evaluate afresh on a truth without q2 (BM25 idf and the vectors do not depend on the queries)
    data = copy.deepcopy(TINY_TRUTH)
    data["questions"] = [q for q in data["questions"] if q["id"] != "q2"]
    fresh = evaluate(tiny_corpus, parse_truth(data, tiny_corpus), encoder=fake_encoder, strategies="C",
                     retrievers="dense,bm25,hybrid")
    cut = without_questions(tiny_eval, {"q2"})
    assert [q.id for q in cut.queries] == [q.id for q in fresh.queries]
    for key, res in fresh.results.items():
        np.testing.assert_array_equal(cut.results[key].needle_rank, res.needle_rank)
        np.testing.assert_allclose(cut.results[key].top_distance, res.top_distance)
    assert best(cut, k=2).best_set == best(fresh, k=2).best_set


def test_source_effect_names_the_drafted_questions(tiny_eval):
    assert source_effect(tiny_eval, k=2) is None  # no question came from a draft
    drafted = replace(tiny_eval.truth, questions=tuple(replace(q, source="draft") if q.id == "q1" else q
                                                        for q in tiny_eval.truth.questions))
    eff = source_effect(replace(tiny_eval, truth=drafted), k=2)
    assert (eff.n_source, eff.n_questions) == (1, len(tiny_eval.truth.questions))
    rest = best(without_questions(tiny_eval, {"q1"}), k=2)
    assert eff.best_set_without == rest.best_set and eff.best_without == rest.best
    assert eff.sentence().startswith("1 of 4 questions came from drafts; without them the verdict at R@2 ")


def test_the_report_says_how_many_questions_came_from_drafts(tiny_eval):
    from ragdiag.present.report.build import build_report
    from ragdiag.present.report.render import render

    plain = render(build_report(tiny_eval), "report.md.j2")
    assert "came from drafts" not in plain  # a truth without drafts: the report is as before
    drafted = replace(tiny_eval.truth, questions=tuple(replace(q, source="draft") if q.id == "q1" else q
                                                        for q in tiny_eval.truth.questions))
    ev = replace(tiny_eval, truth=drafted)
    text = render(build_report(ev), "report.md.j2")
    assert source_effect(ev).sentence() in text.replace("\\", "")
