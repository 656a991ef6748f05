"""The plan counts its steps for a progress bar, and "Grow the ground truth" plans the Summary's pick against its
runner-up, with no code quotes in its words (FAKE encoder on de-haushalt)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "app_pages" / "truth_review.py")
DATA = ROOT / "data"



@pytest.mark.parametrize("decide", ["versus", "best", "gate"])
def test_the_plan_reports_each_step_once_in_order(tiny_eval, decide):
    from ragdiag.authoring.plan import plan

    steps = []
    labels = [c.label for c in tiny_eval.results]
    other = {"versus": {"versus": labels[1]}, "best": {}, "gate": {"baseline": labels[1]}}[decide]
    p = plan(tiny_eval, labels[0], decide=decide, k=2, progress=steps.append, **other)
    total = 7 if decide == "versus" else 4  # versus: 4 sizing steps (3 searches, 1 power) + hubs, drafts, where
    assert [s.done for s in steps] == list(range(1, total + 1))
    assert {s.total for s in steps} == {total} and steps[-1].fraction == 1.0
    assert all(s.words for s in steps) and len({s.words for s in steps}) == total
    assert p == plan(tiny_eval, labels[0], decide=decide, k=2, **other)  # the callback changes nothing


def test_the_headline_quotes_documents_only_where_asked(tiny_eval):
    from ragdiag.authoring.plan import plan

    labels = [c.label for c in tiny_eval.results]
    p = plan(tiny_eval, labels[0], versus=labels[1], k=2)
    if p.needed:  # the CLI's words keep the code quotes, the dashboard's have none
        assert "`" in p.headline() and "`" not in p.headline(quote="")
        assert p.headline(quote="") == p.headline().replace("`", "")


def test_the_page_plans_the_recommendation_against_its_runner_up(haushalt_fake):
    from streamlit.testing.v1 import AppTest

    from fakes import fake_encoder
    from ragdiag.analyses.recommend import recommend
    from ragdiag.core.gate import Gate
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate

    corpus = load_corpus(DATA / "de-haushalt")
    ev = evaluate(corpus, load_truth(haushalt_fake, corpus), encoder=fake_encoder(), strategies="E,F",
                  retrievers="bm25,hybrid")
    rec = recommend(ev, Gate(4))  # the Summary's: the context's keep and goal, by default
    assert rec.runner_up is not None

    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert (at.selectbox(key="gt_plan_a").value, at.selectbox(key="gt_plan_b").value) == (rec.config, rec.runner_up)
    assert at.selectbox(key="gt_plan_a").format_func(rec.config) == f"{rec.config} · recommended"
    assert at.selectbox(key="gt_plan_b").format_func(rec.runner_up) == f"{rec.runner_up} · runner-up"
    # the plan's words (the review queue below quotes its rules and the file's field as code, on purpose)
    plan_words = "\n".join(t for t in (e.value for e in [*at.markdown, *at.caption])
                           if "source: draft" not in t and "rule `" not in t)
    assert f"{rec.config} vs {rec.runner_up} at R@4" in plan_words.replace("\\", "")
    assert "`" not in plan_words  # no code quotes, escaped or not
    assert not at.progress  # the bar is gone once the plan is in
