"""A real browser on the dashboard serving the operator's BEIR collection (RAGDIAG_COLLECTION): the measures,
the one sentence saying the chunk analysis is off, no error. The FAKE encoder keeps it to seconds (plumbing:
the numbers are the library's, checked headless in tests/pages/test_collection_page.py)."""

from __future__ import annotations


import pytest

from ragdiag.documents.collections import DOCUMENT_LEVEL_NOTE
from browser_wait import count, main_text
from browsing import browser, start_server, stop_server  # noqa: F401 - the shared Chromium fixture
from processes import child_pythonpath

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module")
def served(tmp_path_factory, corpus, truth):
    from ragdiag.documents.collections.examples import make_examples

    base = tmp_path_factory.mktemp("served-collection")
    make_examples(base, corpus, truth)
    env = {"RAGDIAG_COLLECTION": f"beir:{base}/beir-sklearn", "RAGDIAG_ENCODER": "fakes:fake_encoder",
           "PYTHONPATH": child_pythonpath(),
           "RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_STRATEGIES": "E", "RAGDIAG_RETRIEVERS": "dense,bm25",
           "RAGDIAG_LOCKED": "1"}
    proc, url = start_server(env, base / "streamlit.log")
    try:
        yield url
    finally:
        stop_server(proc)


def test_the_served_collection_says_the_chunk_analysis_is_off(served, browser):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1440, "height": 1800})
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    try:
        page.goto(served)
        text = main_text(page, "ranks the judged documents best")
        assert DOCUMENT_LEVEL_NOTE in " ".join(text.split())
        assert "ranks the judged documents best on beir:beir-sklearn" in text
        assert count(page.locator("[data-testid='stException']")) == 0
        assert count(page.locator("input[type='text']")) == 0  # no path field: the operator chose the data
    finally:
        ctx.close()
