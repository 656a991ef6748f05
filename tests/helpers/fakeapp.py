"""The dashboard on the tiny corpus with the FAKE encoder, headless (``AppTest``): the fixtures ``fake_app`` (the
app's environment pointing at a tiny corpus and the FAKE encoder) and ``lib`` (the library's evaluation of the
same inputs, the oracle), and how a test opens a page and reads it. The tests import the fixtures they use
(``from fakeapp import app, fake_app, lib``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from apptest import ENV, environment, first_screen, plain_words_problems, run, texts as shown, write_tiny_corpus  # noqa: F401 - re-exported
from apptest import fake_evaluation, fake_tiny_paths

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


#: Tiny corpus, truth and cache; the app's environment points at them and at the FAKE encoder.
fake_app = pytest.fixture(scope="module", name="fake_app")(fake_tiny_paths)


@pytest.fixture(scope="module")
def lib(fake_app):
    """The library's evaluation of the same inputs with the same FAKE encoder (the oracle)."""
    return fake_evaluation(fake_app)


def texts(at) -> str:
    """What the page shows (:func:`apptest.texts`), Markdown escapes removed."""
    return shown(at).replace("\\", "")


def app(page: str | None = None, **params):
    """The app opened at ``page`` with URL parameters ``params`` (as a link opens it)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(params)
    run(at)
    if page:
        at.switch_page(page)
        run(at)
    return at


def rec_of(lib):
    from ragdiag.analyses.recommend import recommend

    return recommend(lib)


def field(at, name: str):
    """The context's sidebar field ``name`` (``config``, ``cut``, ``slider``, ``keep``, ``goal``, ``answered``): its
    key is ``ctx_<name>`` (the configuration's and the slider's carry a version)."""
    kinds = {"config": at.selectbox, "cut": at.number_input, "keep": at.number_input, "slider": at.select_slider,
             "goal": at.number_input, "answered": at.number_input}
    found = [w for w in kinds[name] if str(w.key or "") == f"ctx_{name}" or str(w.key or "").startswith(f"ctx_{name}_")]
    assert len(found) == 1, [w.key for w in kinds[name]]
    return found[0]


def param(at, key: str):
    v = at.query_params.get(key)
    return v[0] if isinstance(v, list) else v


def frames(at) -> list:
    """The data of every table the page shows, in order."""
    return [d.value.data if hasattr(d.value, "data") else d.value for d in at.dataframe]


_frames = frames  # the name the pages' tests knew it by
