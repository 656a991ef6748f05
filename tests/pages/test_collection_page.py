"""The dashboard opening the operator's collection (RAGDIAG_COLLECTION), headless, on the FAKE encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from apptest import FAKE_ENCODER, environment, fake_evaluation, tiny_environment
from ragdiag.documents.collections import DOCUMENT_LEVEL_NOTE, NO_OOD_NOTE
from ragdiag.documents.collections.examples import make_examples

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def collection_app(tmp_path_factory, corpus, truth):
    base = tmp_path_factory.mktemp("collection-app")
    make_examples(base, corpus, truth)
    env = {"RAGDIAG_COLLECTION": f"beir:{base}/beir-sklearn", "RAGDIAG_ENCODER": "fakes:fake_encoder",
           "RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_STRATEGIES": "E", "RAGDIAG_RETRIEVERS": "dense,bm25"}
    with environment(env):
        yield base


def test_the_collection_page_shows_the_librarys_measures_and_says_the_chunk_analysis_is_off(collection_app):
    from streamlit.testing.v1 import AppTest

    from fakes import fake_encoder
    from ragdiag.analyses.measures import measure_rows
    from ragdiag.documents.collections import open_collection
    from ragdiag.evaluation.collection import evaluate_collection

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.info] == [DOCUMENT_LEVEL_NOTE]
    assert NO_OOD_NOTE in [e.value for e in at.caption]
    runs = evaluate_collection(open_collection(f"beir:{collection_app}/beir-sklearn"), encoder=fake_encoder(),
                               strategies="E", retrievers="dense,bm25")
    rows = measure_rows(runs, k=10)
    table = at.dataframe[0].value
    assert list(table["configuration"]) == [r.config for r in rows]
    assert list(table["nDCG@10 (primary)"]) == [r.cell("ndcg").words() for r in rows]
    assert "Slices by tag" in [e.value for e in at.subheader]  # the example's questions are tagged early/mid/late
    assert len(at.dataframe[1].value) == 3


def test_a_collection_that_cannot_be_read_is_one_error_not_a_traceback(collection_app, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("RAGDIAG_COLLECTION", "beir:/no/such/folder")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    assert "does not exist" in at.error[0].value


def test_overview_slices_are_the_librarys(tmp_path_factory):
    """The Overview's slices section (tiny corpus, FAKE encoder): its table is the library's slice table of the
    context's configuration."""
    import fakeapp as pages

    from ragdiag.analyses.slices import evaluation_slices
    from ui.collection_view import slice_frame
    from ui.fmt import drop_constant
    from ui.state import default_config

    # the corpus and its ground truth, not a collection
    with tiny_environment(tmp_path_factory.mktemp("overview-slices"), **FAKE_ENCODER,
                          RAGDIAG_COLLECTION=None) as paths:
        at = pages.app("app_pages/overview.py")
        shown = next(d.value for d in at.dataframe if "slice" in d.value.columns)
        ev = fake_evaluation(paths)
        expected, _ = drop_constant(slice_frame(evaluation_slices(ev, default_config(ev), by="phrasing", k=4)))
        assert shown.reset_index(drop=True).equals(expected.reset_index(drop=True))  # a constant column said once
