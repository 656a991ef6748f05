"""URLs no link of the dashboard makes, served locked (headless AppTest, FAKE encoder, fast selection): a
``?config=`` holding a Markdown image and backticks is said as text in the sidebar, and a whole number typed as
``1e999`` for a field bound to the URL falls back to the field's default instead of ending the run.

The browser walk over every page with these URLs, the requests it makes and the server's log is
``tests/test_browser_served_walk.py``.
"""

from __future__ import annotations

import pytest

from apptest import APP, ENV, environment, write_tiny_corpus

pytestmark = pytest.mark.slow  # each visitor session evaluates the tiny corpus: ~26 s in all

IMAGE = "![x](http://example.invalid/a.png)"


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    """The tiny corpus served locked, one cache for the module (each test is a visitor's session of its own)."""
    base = tmp_path_factory.mktemp("hostile-urls")
    root, truth = write_tiny_corpus(base)
    with environment({**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(base / "c"),
                      "RAGDIAG_LOCKED": "1", "RAGDIAG_ROOTS": "", "RAGDIAG_ENCODER": "fakes:fake_encoder"}):
        yield


def _open(page: str | None, **params: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(params)
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    return at


@pytest.mark.parametrize("config", [IMAGE, "``` x `" + IMAGE])
def test_a_crafted_config_is_said_as_text_in_the_sidebar(locked, config):
    at = _open(None, config=config)
    assert not at.exception, [e.value for e in at.exception]
    said = [c.value for c in at.sidebar.caption if "is not evaluated here" in c.value]
    assert len(said) == 1, [c.value for c in at.sidebar.caption]
    assert "[x](" not in said[0] and "\\[x\\](http" in said[0]  # the brackets escaped: Markdown shows it as typed
    assert "`" not in said[0].replace("\\`", "")  # no code span can open around the rest


def test_an_overlong_config_is_cut_short_where_it_is_said(locked):
    at = _open(None, config="E/" + "x" * 5000)
    said = next(c.value for c in at.sidebar.caption if "is not evaluated here" in c.value)
    assert len(said) < 200 and "…" in said


@pytest.mark.parametrize("page, key, value, default", [
    ("app_pages/hubs.py", "top", "1e999", 20), ("app_pages/hubs.py", "top", "-1e999", 20),
    ("app_pages/hubs.py", "top", "35", 35), ("app_pages/cost.py", "sample", "1e999", None),
])
def test_a_whole_number_field_bound_to_the_url_survives_any_number(locked, page, key, value, default):
    from ragdiag.analyses.cost import LATENCY_SAMPLE

    at = _open(page, **{key: value})
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key=key).value == (LATENCY_SAMPLE if default is None else default)


@pytest.mark.parametrize("value, part", [("1e999", 1), ("-1e999", 1), ("nan", 1), ("3", 3), ("9", 1)])
def test_the_part_of_a_long_text_survives_any_number(value, part):
    from streamlit.testing.v1 import AppTest

    def page():
        import streamlit as st

        from ui.state import text_part

        st.write(text_part(200_000))  # four parts of 50,000 characters

    at = AppTest.from_function(page, default_timeout=30)
    at.query_params["part"] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="part").value == part
