"""One gate and one goal on every page: the context's keep and bluff goal reach the Summary, Compare's
recommendation, Cost's prompts, Overview's funnel and the Inspector (FAKE encoder, fast selection)."""

from __future__ import annotations

import pytest

from apptest import APP, fake_tiny, run, texts  # noqa: F401 - fake_tiny is a module fixture

GOAL = 0.10


@pytest.fixture(scope="module")
def lib(fake_tiny):
    """The library's evaluation of the same inputs with the same FAKE encoder (the oracle)."""
    from fakes import fake_encoder
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate

    corpus = load_corpus(fake_tiny["root"])
    return evaluate(corpus, load_truth(fake_tiny["truth"], corpus), encoder=fake_encoder(), strategies="A,E",
                    retrievers="dense,bm25,hybrid")


def opened(keep: int, page: str | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"keep": str(keep), "goal": f"{100 * GOAL:g}"})
    run(at)
    if page:
        at.switch_page(page)
        run(at)
    return at


# keep 6: more passages than the default 4 priced and found; keep 1: another recommendation than the default's
@pytest.mark.parametrize("KEEP", [6, 1])
def test_keep_and_goal_in_the_context_reach_every_page(fake_tiny, lib, KEEP):
    from fakes import fake_encoder
    from ragdiag.analyses.cost import prompt_tokens
    from ragdiag.analyses.funnel import funnels
    from ragdiag.analyses.recommend import recommend
    from ragdiag.core.gate import Gate, cut_text

    rec = recommend(lib, Gate(KEEP), max_bluff=GOAL)
    if KEEP == 1:  # the check below tells the context's recommendation from the default one
        assert rec.config != recommend(lib, Gate(4), max_bluff=0.05).config
    summary = opened(KEEP)
    assert f"Ship **{rec.words}** at strictness {cut_text(rec.cut)}" in texts(summary)
    cut = float(summary.query_params["cut"][0] if isinstance(summary.query_params["cut"], list)
                else summary.query_params["cut"])
    gate = Gate(KEEP, cut)

    # Compare's "What should we ship?" names the Summary's recommendation (the context's keep and goal)
    compare = opened(KEEP, "app_pages/compare.py")
    assert [s.value for s in compare.success][:1] == [rec.sentence()]

    # Cost prices the prompt at the context's keep (6 passages at most) and cut, recall at the gate's k
    cost = opened(KEEP, "app_pages/cost.py")
    assert f"keeping at most {KEEP} chunks" in texts(cost)
    cost.toggle(key="measure").set_value(True)
    run(cost)
    table = next(d.value for d in cost.dataframe if "configuration" in d.value.columns)
    table = table.data if hasattr(table, "data") else table
    assert f"R@{KEEP} (share of queries)" in table.columns
    if "prompt tokens/query" in table.columns:
        row = table[table["configuration"] == rec.config].iloc[0]
        expected = float(prompt_tokens(lib, rec.config, fake_encoder(), gate).mean())
        assert row["prompt tokens/query"] == pytest.approx(expected)
    else:  # the same on every row: the caption says it
        expected = {round(float(prompt_tokens(lib, c.label, fake_encoder(), gate).mean()), 2) for c in lib.results}
        assert len(expected) == 1

    # Overview's funnel and the Inspector read the same gate
    fs = {f.config.label: f for f in funnels(lib, gate=gate)}
    overview = opened(KEEP, "app_pages/overview.py")
    n = fs[rec.config].counts().get("answered", 0)
    assert f"{rec.config} answers {n} of {len(fs[rec.config].rows)} answerable queries" in texts(overview)
    inspector = opened(KEEP, "app_pages/inspector.py")
    assert not inspector.exception
