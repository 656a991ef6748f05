"""Every page keeps the context in its URL, those that never draw it included (Compare, History, Monitor, Variants,
Documents, the ground-truth pages, External run, Glossary; Compare draws it in its "What should we ship?" view):
a reload or a shared link opens on the same one. The tiny corpus with the FAKE encoder."""

from __future__ import annotations

import pytest

from fakeapp import fake_app, field, param, run  # noqa: F401 - fixtures

PAGES = ["compare", "history", "monitor", "variants", "documents", "ground_truth", "truth_review", "external",
         "glossary"]
FIELDS = ("config", "cut", "keep", "goal")
#: The pages that stop early on the tiny corpus (no run history, no query log, no run uploaded).
STOPS = ("history", "monitor", "external")
#: The pages whose default view draws the context's fields (not the sidebar's one-line caption).
DRAWS = ("compare", "truth_review")  # truth_review: its plan is the recommendation's pick against its runner-up


@pytest.mark.parametrize("name", PAGES)
def test_a_page_that_never_draws_the_context_keeps_it_in_its_url(fake_app, name):
    from streamlit.testing.v1 import AppTest

    from apptest import APP

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"config": "E/bm25", "cut": "0.61"})  # a link: a configuration and a cut of its own
    run(at)
    ctx = {k: param(at, k) for k in FIELDS}
    assert ctx["config"] == "E/bm25" and ctx["cut"] == "0.610", ctx
    at.switch_page(f"app_pages/{name}.py")
    run(at)
    assert {k: param(at, k) for k in FIELDS} == ctx, name
    if name in DRAWS:  # the sidebar's fields hold the link's context
        assert field(at, "config").value == "E/bm25" and f"{field(at, 'cut').value:.3f}" == "0.610"
    elif name not in STOPS:  # a page that stops early (nothing to show here) has no room for the sidebar's line
        sidebar = " ".join(c.value for c in at.sidebar.caption)
        assert "E/bm25" in sidebar and "0.610" in sidebar, sidebar


def test_a_reload_on_such_a_page_opens_on_the_url_s_context(fake_app):
    """A new session (a reload, a new tab) on the Glossary with the context in the URL: the sidebar says it, the
    URL keeps it, and the next page that draws the context shows it."""
    from streamlit.testing.v1 import AppTest

    from apptest import APP

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"config": "E/bm25", "cut": "0.61", "keep": "3", "goal": "10"})
    at.switch_page("app_pages/glossary.py")
    run(at)
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "E/bm25" in sidebar and "0.610" in sidebar and "3 passages" in sidebar, sidebar
    at.switch_page("app_pages/threshold.py")
    run(at)
    assert (param(at, "config"), param(at, "cut"), param(at, "keep"), param(at, "goal")) == ("E/bm25", "0.610", "3",
                                                                                         "10")


def test_a_provisional_pick_stays_out_of_the_url_and_never_becomes_your_choice(tmp_path):
    """A cold start: while some strategies still compute, the provisional configuration and cut are not in the URL
    (a reload or a reconnect then would read them back as the visitor's choice); once every strategy is in, the
    URL carries the final recommendation and the sidebar never says "Your choice"."""
    from streamlit.testing.v1 import AppTest

    from apptest import APP, ENV, environment, texts, write_tiny_corpus

    root, truth = write_tiny_corpus(tmp_path)
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(tmp_path / "cache"),
           "RAGDIAG_ENCODER": "fakes:fake_encoder"}
    with environment(env):
        at = AppTest.from_file(APP, default_timeout=120)
        at.run()  # the first run: the first strategy alone (the others compute in the background)
        assert not at.exception, [e.value for e in at.exception]
        provisional = any("Provisional" in c.value for c in at.sidebar.caption)
        if provisional:
            assert param(at, "config") is None and param(at, "cut") is None, dict(at.query_params)
        run(at)  # until every strategy is in
        assert not any("Provisional" in c.value for c in at.sidebar.caption)
        assert param(at, "config") and param(at, "cut")
        assert "Your choice" not in " ".join(c.value for c in at.sidebar.caption), texts(at)
        assert "The recommendation at its proposed cut." in [c.value for c in at.sidebar.caption]
