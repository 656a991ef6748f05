"""The Inspector opens on a failure and opens the cut or the configuration its sentence names (FAKE encoder).

The tiny corpus under the bag-of-words fake (:mod:`fakes`): under E/dense the
answer of ``q1:course`` sits at a distance whose smallest answering cut is 0.538,
``q1:ticket``'s at 0.723 (the library's :func:`~ragdiag.analyses.cause.causes`,
read here as the oracle); at cut 0.54 the first query is answered and the second
refused. A/dense splits q1's answer (chunking), so only E/... can answer it.
"""

from __future__ import annotations

import pytest

from apptest import fake_tiny, open_page, run  # noqa: F401  (fixture)


def _app(page: str, **params):
    return open_page(page, timeout=60, **params)


def _oracle(fake_tiny, config: str, cut: float):
    """The library's outcomes and causes of ``config`` at ``cut`` (keep 4), on the same inputs and fake."""
    from fakes import fake_encoder
    from ragdiag.analyses.cause import causes
    from ragdiag.analyses.gate_table import query_outcomes
    from ragdiag.core.gate import Gate
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate

    corpus = load_corpus(fake_tiny["root"])
    ev = evaluate(corpus, load_truth(fake_tiny["truth"], corpus), encoder=fake_encoder(), strategies="A,E",
                  retrievers="dense,bm25,hybrid")
    gate = Gate(4, cut)
    return ({o.query_id: o.outcome for o in query_outcomes(ev, config, gate)},
            {c.query_id: c for c in causes(ev, config, gate)})


def test_opens_on_the_first_failure_not_an_answered_query(fake_tiny):
    outcomes, _ = _oracle(fake_tiny, "E/dense", 0.54)
    ids = list(outcomes)
    assert outcomes[ids[0]] == "answered"  # the old default (the first query) would open on an answered one
    first_failed = next(q for q in ids if outcomes[q] in ("refused", "kept-but-wrong", "ranked-low", "not-in-pool",
                                                          "truncated", "destroyed"))
    at = _app("app_pages/inspector.py", config="E/dense", cut="0.54")
    assert at.selectbox(key="q").value == first_failed == "q1:ticket"
    assert at.query_params["q"] in (first_failed, [first_failed])
    assert at.error and not at.success  # the verdict is a failure's (red)


def _cut_field(at):
    return at.number_input(key="ctx_cut").value


def test_open_at_that_cut_answers_the_query(fake_tiny):
    _, why = _oracle(fake_tiny, "E/dense", 0.54)
    assert why["q1:ticket"].cause == "cut"
    answer_cut = why["q1:ticket"].answer_cut  # 0.723: the smallest printed cut that keeps its answer
    at = _app("app_pages/inspector.py", config="E/dense", cut="0.54", q="q1:ticket")
    assert at.error and f"Answered at cut {answer_cut:.3f}" in at.error[0].value
    at.button(key="open_cut").click()
    run(at)
    assert _cut_field(at) == pytest.approx(answer_cut)
    assert at.query_params["cut"] in (f"{answer_cut:.3f}", [f"{answer_cut:.3f}"])
    assert at.selectbox(key="q").value == "q1:ticket"  # the query stays
    assert at.success and not at.error  # ... and is answered there
    assert at.success[0].value.replace("\\", "").startswith("**paragraph cuts + section header, dense retrieval (E/dense)** — Answered: ")


def test_open_with_that_configuration_answers_the_query(fake_tiny):
    outcomes, why = _oracle(fake_tiny, "A/dense", 0.5)
    assert outcomes["q3:course"] == "refused" and why["q3:course"].answered_by[0] == "E/dense"
    at = _app("app_pages/inspector.py", config="A/dense", cut="0.5", q="q3:course")
    assert "Answered at this cut by: E/dense" in at.error[0].value.replace("\\", "")
    assert at.selectbox(key="open_config_pick").value == "E/dense"
    at.button(key="open_config").click()
    run(at)
    assert at.query_params["config"] in ("E/dense", ["E/dense"])
    assert _cut_field(at) == pytest.approx(0.5)  # the cut stays: "answered at this cut"
    assert at.selectbox(key="q").value == "q3:course"
    assert at.success and not at.error
