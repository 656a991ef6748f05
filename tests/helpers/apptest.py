"""The dashboard under ``streamlit.testing``: the tiny corpus, its fixtures and the helpers every page test uses.

A helper module, not a test file: ``test_app.py`` (real model), ``test_app_pages.py``
(FAKE encoder) and the other page tests import from here, so a broken helper
shows as itself. ``tiny`` and ``library`` are module-scoped fixtures (import
them into the test module that uses them).
"""

from __future__ import annotations

import json
import contextlib
import os
import re
from pathlib import Path

import pytest

__all__ = ["ROOT", "APP", "TEA_NEEDLE", "TRUTH", "ENV", "write_tiny_corpus", "tiny", "library", "app", "settle",
           "frame_with", "texts", "METHOD_WORDS", "plain_words_problems", "first_screen", "fake_tiny",
           "environment", "tiny_environment", "fake_evaluation", "FAKE_ENCODER", "ok", "serve_tiny"]

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")

TEA_INTRO = (
    "Tea is the dried leaf of Camellia sinensis, and how it tastes depends on how it was processed. "
    "White and green teas are barely oxidised, oolongs sit in the middle, and black teas are fully oxidised. "
    "Water quality matters as much as the leaf: soft, fresh water gives the clearest cup. "
    "Loose leaves need room to unfold, so use a pot or a wide basket rather than a small ball. "
    "A warmed pot keeps the water temperature steady while the leaves steep. "
)
TEA_NEEDLE = "Green tea should be brewed with water at about 80 degrees Celsius for two to three minutes."
TEA_REST = (
    " Boiling water scalds the leaves and makes the cup bitter and astringent.\n\n"
    "## Storage\n\n"
    "Keep tea in an opaque, airtight tin away from spices, because the leaves absorb smells. "
    "Most green teas lose their fresh aroma within a year of harvest.\n\n"
    "## Black tea\n\n"
    "Black tea tolerates boiling water and steeps for four to five minutes. Milk softens its tannins.\n"
)
BIKE = (
    "# Bicycle care\n\n"
    "A clean bicycle lasts longer and shifts more precisely. Wash the frame with mild soap, never a jet.\n\n"
    "## Chain\n\n"
    "The chain wears faster than any other part and stretches as its pins wear. "
    "Chain lubricant should be applied to the inner links and the excess wiped off after a minute. "
    "Measure chain stretch every thousand kilometres with a chain checker.\n\n"
    "## Tyres\n\n"
    "Road tyres run at six to eight bar; check the pressure weekly because air seeps through the tube.\n\n"
    "## Web page sample\n\n"
    "A shop page once embedded this raw snippet: <script>alert(1)</script> and nothing else ran.\n"
)
BREAD = (
    "# Sourdough\n\n"
    "Sourdough bread rises with wild yeast and lactic acid bacteria instead of baker's yeast.\n\n"
    "## Starter\n\n"
    "Feed the starter equal weights of flour and water once a day. "
    "A sourdough starter is ready to use when it doubles in volume within six hours of feeding. "
    "If it smells of acetone it is hungry and needs more frequent feeds.\n\n"
    "## Baking\n\n"
    "Bake the loaf in a preheated cast iron pot with the lid on for the first twenty minutes, "
    "then remove the lid so the crust can brown.\n"
)
TRUTH = {
    "questions": [
        {"id": "q1", "needle": TEA_NEEDLE,
         "queries": {"course": "At what temperature and for how long should green tea be brewed?",
                     "ticket": "my green tea always tastes bitter, what water temp do I use??"}},
        {"id": "q2", "needle": "Chain lubricant should be applied to the inner links and the excess wiped off after a minute.",
         "queries": {"course": "How should chain lubricant be applied?",
                     "ticket": "bike chain squeaks, how do I oil it properly"}},
        {"id": "q3", "needle": "A sourdough starter is ready to use when it doubles in volume within six hours of feeding.",
         "queries": {"course": "When is a sourdough starter ready to use?",
                     "ticket": "how do i know my starter is ready for baking bread"}},
        {"id": "q4", "needle": "Road tyres run at six to eight bar; check the pressure weekly because air seeps through the tube.",
         "queries": {"course": "What pressure do road tyres need?",
                     "ticket": "what psi/bar should my road bike tires be at"}},
    ],
    "ood": [
        {"id": "o1", "kind": "far", "query": "How do I renew my passport before travelling abroad?"},
        {"id": "o2", "kind": "near", "query": "What grind size should I use for espresso coffee?"},
    ],
}


def write_tiny_corpus(base: Path) -> tuple[Path, Path]:
    """Write the tiny corpus and its ground truth under ``base``; return (folder, truth file)."""
    root = base / "tiny"
    root.mkdir(parents=True, exist_ok=True)
    head = "# Tea\n\n## Brewing\n\n"
    tea = head + TEA_INTRO + TEA_NEEDLE + TEA_REST
    start = tea.index(TEA_NEEDLE)
    assert start < 512 < start + len(TEA_NEEDLE), "the tea needle must straddle the first 512-character cut"
    (root / "tea.md").write_text(tea, encoding="utf-8")
    (root / "bike.md").write_text(BIKE, encoding="utf-8")
    (root / "bread.md").write_text(BREAD, encoding="utf-8")
    truth = base / "tiny.truth.json"
    truth.write_text(json.dumps(TRUTH, indent=2), encoding="utf-8")
    return root, truth


ENV = {"RAGDIAG_STRATEGIES": "A,E", "RAGDIAG_RETRIEVERS": "dense,bm25,hybrid"}



def _set_environment(env: dict[str, str | None]) -> None:
    for k, v in env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@contextlib.contextmanager
def environment(env: dict[str, str | None]):
    """``env`` set in ``os.environ`` for the block (the app reads its settings there; a None value unsets its
    variable), then what was there before."""
    saved = {k: os.environ.get(k) for k in env}
    _set_environment(env)
    try:
        yield
    finally:
        _set_environment(saved)


#: The app's environment for the FAKE encoder (``fakes:fake_encoder``): pages in seconds.
FAKE_ENCODER = {"RAGDIAG_ENCODER": "fakes:fake_encoder"}


@contextlib.contextmanager
def tiny_environment(base: Path, **extra: str | None):
    """The tiny corpus and its truth written under ``base``; for the block the app's environment points at them and
    at a cache folder there (``extra`` on top: more settings, None unsets one). Yields the paths (``root``,
    ``truth``, ``cache``)."""
    root, truth = write_tiny_corpus(base)
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(base / "cache"),
           **extra}
    with environment(env):
        yield {"root": root, "truth": truth, "cache": base / "cache"}


def fake_evaluation(paths: dict, strategies: str = ENV["RAGDIAG_STRATEGIES"],
                    retrievers: str = ENV["RAGDIAG_RETRIEVERS"]):
    """The library's evaluation of the corpus and truth at ``paths`` with the FAKE encoder (the pages' oracle)."""
    from fakes import fake_encoder
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate

    corpus = load_corpus(paths["root"])
    truth = load_truth(paths["truth"], corpus)
    return evaluate(corpus, truth, encoder=fake_encoder(), strategies=strategies, retrievers=retrievers)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Tiny corpus, truth and cache folder; the app's environment points at them for this module."""
    # the tests type paths under pytest's temporary folders and the fixture knowledge base
    roots = os.pathsep.join([str(tmp_path_factory.getbasetemp()), str(ROOT / "tests" / "fixtures")])
    with tiny_environment(tmp_path_factory.mktemp("app"), RAGDIAG_ROOTS=roots) as paths:
        yield paths


def fake_tiny_paths(tmp_path_factory):
    """The tiny corpus as :func:`tiny`, embedded by the FAKE encoder (``fakes:fake_encoder``): pages in seconds.
    The module fixture ``fake_tiny`` here, ``fake_app`` in ``fakeapp``."""
    with tiny_environment(tmp_path_factory.mktemp("fakeapp"), **FAKE_ENCODER) as paths:
        yield paths


fake_tiny = pytest.fixture(scope="module", name="fake_tiny")(fake_tiny_paths)


@pytest.fixture(scope="module")
def library(tiny):
    """The library's own evaluation of the same inputs (oracle for the numbers the pages show)."""
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.index.store import Store
    from ragdiag.documents.truth import load_truth
    from ui.cache import encoder as _encoder

    corpus = load_corpus(tiny["root"])
    truth = load_truth(tiny["truth"], corpus)
    with Store(tiny["cache"]) as store:
        return evaluate(corpus, truth, encoder=_encoder(), strategies="A,E", retrievers="dense,bm25,hybrid",
                        store=store)


def app(page: str | None = None, **params):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({k: v for k, v in params.items()})  # the URL a link opens
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page:  # the entry point (the Summary), then the page, the URL's parameters still there
        settle(at)
        at.switch_page(page)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return settle(at)


def settle(at, seconds: float = 120.0):
    """Rerun until the shared background job has every strategy (the page then says nothing is computing)."""
    import time

    deadline = time.monotonic() + seconds
    while "still computing" in texts(at) and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at


#: Method words that have no place on a first screen (PRESENTING.md, "Plain words"): they live one click away.
METHOD_WORDS = ("R@", "k =", "conformal", "MaxSim", "simultaneous", "contrast", "family", "RAGDIAG_")
#: A configuration's id (``F/rerank-maxsim``, ``E/dense@int8``): an identifier that may follow its words, not prose.
CONFIG_ID = re.compile(r"\b[A-Z]/[a-z0-9][a-z0-9@.-]*")
#: A snake_case word (an option, a field or a variable name in prose).
SNAKE_CASE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")


def plain_words_problems(text: str) -> list[str]:
    """The method words and snake_case words in ``text`` (a first screen's text).

    Configuration ids are stripped first: ``F/rerank-maxsim`` names a configuration (its words come first), so the
    ``maxsim`` inside it is not prose; the same words outside an id are.
    """
    text = CONFIG_ID.sub(" ", text)
    found = [w for w in METHOD_WORDS if w.lower() in text.lower()]
    found += SNAKE_CASE.findall(text)
    return found


def first_screen(at) -> str:
    """A page's first screen as a person reads it: the main area's sentences, captions, alerts and cards, without
    expanders ("How we know" is one click away) and the sidebar."""
    hidden = {e.value for ex in at.expander for e in [*ex.markdown, *ex.caption]}
    main = at.main
    alerts = [e.value for kind in ("info", "warning", "error", "success") for e in getattr(main, kind)]
    return "\n".join([e.value for e in [*main.markdown, *main.caption] if e.value not in hidden] + alerts
                     + [f"{m.label} {m.value} {m.proto.delta}" for m in main.metric]).replace("\\", "")


def frame_with(at, column: str):
    """The first dataframe shown that has ``column`` (a styled one as its data)."""
    frames = [d.value.data if hasattr(d.value, "data") else d.value for d in at.dataframe]
    return next(f for f in frames if column in f.columns)


def texts(at) -> str:
    """All text a page shows in markdown, captions, html, code, text, metrics and alerts."""
    parts = [e.value for e in at.markdown] + [e.value for e in at.caption] + [e.value for e in at.text]
    parts += [e.proto.body for e in at.html] + [e.value for e in at.code]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    parts += [e.value for kind in ("error", "warning", "info", "success") for e in getattr(at, kind)]
    parts += [e.value for e in at.title] + [e.value for e in at.subheader]
    return "\n".join(str(p) for p in parts)


def ok(at):
    """``at`` once it is known that its run raised nothing (else the exceptions' messages fail the test)."""
    assert not at.exception, [e.value for e in at.exception]
    return at


def run(at):
    """Run the page until the shared background job has every strategy (it says "still computing" until then)."""
    import time

    ok(at.run())
    deadline = time.monotonic() + 60
    while "still computing" in texts(at) and time.monotonic() < deadline:
        ok(at.run(timeout=60))
    return at


def serve_tiny(base: Path, monkeypatch, *unset: str) -> tuple[Path, Path]:
    """The tiny corpus and its truth written under ``base`` as the operator's data (the environment set through
    ``monkeypatch``, a cache folder under ``base``), the ``unset`` variables removed: (corpus folder, truth path)."""
    root, truth = write_tiny_corpus(base)
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(base / "cache")}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for k in unset:
        monkeypatch.delenv(k, raising=False)
    return root, truth


def open_page(page: str, *, timeout: float = 60, **params):
    """The app opened at the URL's ``params``, run until computed, then switched to ``page`` (as a link does)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params.update(params)
    run(at)
    at.switch_page(page)
    return run(at)
