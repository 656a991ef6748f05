"""Shared fixtures: the bundled corpus and its ground truth, the real encoder, a fake tokenizer; and the folders' markers.

The tests sit in folders by what they need (``scripts/test_layout.py`` says which folder a file belongs in):
``unit`` (no model, no browser, fast), ``pages`` (the dashboard headless on the FAKE encoder), ``model`` (the real
all-MiniLM-L6-v2), ``slow`` (over about 5 s, no model), ``ray`` (a local Ray instance) and ``browser`` (headless
Chromium). Every test gets its folder's marker, so ``pytest tests/unit`` is the fast loop and ``-m model`` selects
the model folder. Helpers shared by test files live in ``tests/helpers`` (on ``sys.path``, pyproject's
``pythonpath``): a test file never imports another test file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from ragdiag.documents.corpus import DEFAULT_CORPUS, Corpus, load_corpus
from ragdiag.documents.truth import GroundTruth, load_truth

from fakes import FakeEncoder, FakeTokenizer  # noqa: F401 - re-exported for the tests
from file_order import costliest_first, read_costs
from tiny import TINY_DOCS, TINY_TRUTH
from timing import pytest_configure  # noqa: F401 - RAGDIAG_TEST_TIMES=PATH: each file's times, each failure at once

# CI runs the same examples every time (a failure there is reproducible); locally Hypothesis explores. Neither has
# a deadline: Hypothesis's default fails an example that takes over 200 ms, a moment on a busy machine (a loaded run
# failed a sort check that way, which 5,000 examples without the deadline pass); speed is measured in benchmarks/.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "explore")


#: the marker each folder of ``tests/`` adds to every test in it (``scripts/test_layout.py`` holds the rule).
FOLDER_MARKERS = {"unit": "unit", "pages": "pages", "model": "model", "slow": "slow", "ray": "ray",
                  "browser": "browser"}
TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before pyproject's -m deselects by marker
def pytest_collection_modifyitems(config, items):
    """Each test carries its folder's marker (``tests/model/...`` is ``model``, and so on); its own markers stay.
    The files of ``tests/file_costs.tsv`` come first, longest first, so that the workers start them first."""
    for item in items:
        try:
            folder = Path(str(item.path)).resolve().relative_to(TESTS).parts[0]
        except ValueError:  # a doctest of ragdiag/ or ui/
            continue
        marker = FOLDER_MARKERS.get(folder)
        if marker is not None:
            item.add_marker(marker)
    # The longest files first (tests/helpers/file_order.py); run.sh keeps this order (--no-loadscope-reorder)
    items[:] = costliest_first(items, read_costs(TESTS / "file_costs.tsv"), TESTS.parent)


BUNDLED_TRUTH = DEFAULT_CORPUS.parent / "sklearn-user-guide.truth.json"


@pytest.fixture(scope="session", autouse=True)
def _default_cache_outside_the_checkout(tmp_path_factory):
    """A test that opens the default cache (``Store()``, a command without ``--cache``, a dashboard without
    ``RAGDIAG_CACHE``) opens one of this run's, shared by its workers, never the checkout's ``.ragdiag-cache``: a
    run writes nothing into the checkout. A ``RAGDIAG_CACHE`` set before the run is kept."""
    if os.environ.get("RAGDIAG_CACHE"):
        yield
        return
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "default-cache"
    os.environ["RAGDIAG_CACHE"] = str(shared)
    try:
        yield
    finally:
        os.environ.pop("RAGDIAG_CACHE", None)


@pytest.fixture(scope="session", autouse=True)
def _compile_each_page_once():
    """Streamlit's AppTest compiles the page anew on every run (a fresh ScriptCache each time, about a
    quarter of a second for a page); one cache for the session compiles each page file once. The pages
    do not change while the tests run, so every run executes the same code as before."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import local_script_runner

    original = local_script_runner.ScriptCache
    shared = ScriptCache()
    local_script_runner.ScriptCache = lambda: shared
    yield
    local_script_runner.ScriptCache = original


@pytest.fixture(scope="session", autouse=True)
def _scan_installed_components_once():
    """Every new AppTest reads the metadata of every installed distribution, looking for Streamlit components
    (about 0.15 CPU seconds each time, the most of a small page's run under load); the installed packages do
    not change while the tests run, so the scan's answer is kept for the session."""
    import functools

    from streamlit.components.v2 import manifest_scanner

    original = manifest_scanner.scan_component_manifests
    manifest_scanner.scan_component_manifests = functools.cache(original)
    yield
    manifest_scanner.scan_component_manifests = original

@pytest.fixture(scope="session")
def corpus() -> Corpus:
    """The bundled scikit-learn user guide, loaded once per session."""
    return load_corpus(DEFAULT_CORPUS)


@pytest.fixture(scope="session")
def kb_corpus() -> Corpus:
    """The fixture knowledge base ``tests/fixtures/kb`` (Markdown, HTML, PDF), loaded once per session:
    extracting its PDFs and HTML pages takes seconds."""
    from pathlib import Path

    return load_corpus(Path(__file__).parent / "fixtures" / "kb")


@pytest.fixture(scope="session")
def truth(corpus) -> GroundTruth:
    """The bundled ground truth, validated against the bundled corpus."""
    return load_truth(BUNDLED_TRUTH, corpus)


@pytest.fixture(scope="session")
def encoder():
    """The real all-MiniLM-L6-v2 encoder (loaded once; skipped when the weights are not installed)."""
    from ragdiag.index.encoder.model import Encoder
    from ragdiag.index.encoder.resolve import ModelUnavailable

    try:
        return Encoder()
    except ModelUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def fake_tokenizer():
    """The :class:`FakeTokenizer` class (call it with ``max_seq_length=...``)."""
    return FakeTokenizer


# ---------------------------------------------------------------------------
# A FAKE encoder and a tiny hand-made corpus, for plumbing tests of the evaluation
# ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tiny_corpus() -> Corpus:
    """Two hand-made documents (see ``TINY_DOCS``)."""
    from ragdiag.documents.corpus import make_document

    docs = tuple(make_document(doc_id, text, path=f"{doc_id}.md") for doc_id, text in TINY_DOCS.items())
    return Corpus(root="tiny", documents=docs, name="tiny")


@pytest.fixture(scope="session")
def tiny_truth(tiny_corpus) -> GroundTruth:
    """Four questions (hit, ranked-low, destroyed, truncated cases) and two ood queries."""
    from ragdiag.documents.truth import parse_truth

    return parse_truth(TINY_TRUTH, tiny_corpus, source="tiny.truth.json")


@pytest.fixture(scope="session")
def fake_encoder() -> FakeEncoder:
    """A FAKE bag-of-words encoder with a 40-token window (38 words), collision-free on the tiny corpus."""
    enc = FakeEncoder(max_seq_length=40)
    texts = list(TINY_DOCS.values()) + [t for q in TINY_TRUTH["questions"] for t in q["queries"].values()]
    enc.check_no_collisions(texts + [o["query"] for o in TINY_TRUTH["ood"]])
    return enc


@pytest.fixture(scope="session")
def tiny_eval(tiny_corpus, tiny_truth, fake_encoder):
    """The tiny corpus evaluated with the FAKE encoder: strategy C, dense/bm25/hybrid."""
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C",
                    retrievers="dense,bm25,hybrid")


@pytest.fixture(scope="session")
def bundled_store(corpus, truth, encoder, tmp_path_factory):
    """A store of the bundled corpus's vectors, every strategy's and the queries', made once per session as a
    user's first run makes it: from the shipped index (``data/sklearn-user-guide.index.npz``, through
    :func:`~ragdiag.index.snapshot.seed_from_snapshot`, which re-embeds a sample with the real encoder and uses the
    index only when it agrees), so the session does not embed 5,000 chunks (minutes on a busy 2-core machine);
    ``tests/model/test_snapshot.py`` checks that index against this installation's model. A test never opens the
    checkout's own cache (``Store()``): that would embed anew in a fresh clone and write into it.
    ``RAGDIAG_TEST_STORE`` names a folder to keep the store in between sessions (by default a temporary one).
    """
    from ragdiag.index.snapshot import seed_from_snapshot
    from ragdiag.index.store import Store

    store = Store(os.environ.get("RAGDIAG_TEST_STORE") or tmp_path_factory.mktemp("bundled-store"))
    seed_from_snapshot(store, corpus, truth, encoder)  # when it cannot serve, the tests embed (test_snapshot.py)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture(scope="session")
def bundled_eval_c(corpus, truth, encoder, bundled_store):
    """The bundled corpus, strategy C, dense/bm25/hybrid, with the REAL encoder and the shipped vectors
    (:func:`bundled_store`): computed once per session. Every test that needs real rankings on the bundled corpus
    reuses this one evaluation."""
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(corpus, truth, encoder=encoder, strategies="C", retrievers="dense,bm25,hybrid",
                    store=bundled_store)


@pytest.fixture(scope="session")
def bundled_eval_all(corpus, truth, encoder, bundled_store):
    """The bundled corpus, every strategy and default retriever, with the REAL encoder and the shipped vectors
    (:func:`bundled_store`): computed once per session, for the modules that read the whole study
    (``test_statistics_corpora``, ``test_verdicts_corpora``); a test must not change it."""
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(corpus, truth, encoder=encoder, store=bundled_store)


@pytest.fixture(scope="session")
def haushalt_eval(encoder):
    """``data/de-haushalt`` (German), every strategy with dense, bm25 and hybrid, the REAL encoder: computed once
    per session for the modules that read it (``test_verdicts_corpora``, ``test_one_gate``); a test must not change
    it."""
    from pathlib import Path

    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate

    data = Path(__file__).resolve().parents[1] / "data"
    de = load_corpus(data / "de-haushalt")
    return evaluate(de, load_truth(data / "de-haushalt.truth.json", de), encoder=encoder,
                    retrievers="dense,bm25,hybrid")


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory):
    """The tiny corpus as files: ``<tmp>/tiny/{animals,plants}.md`` and its truth at ``<tmp>/tiny.truth.json``."""
    import json

    base = tmp_path_factory.mktemp("tiny-corpus")
    folder = base / "tiny"
    folder.mkdir()
    for doc_id, text in TINY_DOCS.items():
        (folder / f"{doc_id}.md").write_text(text, encoding="utf-8")
    (base / "tiny.truth.json").write_text(json.dumps(TINY_TRUTH, indent=1), encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def bundled_dashboard(tmp_path_factory):
    """One dashboard on the bundled corpus (default settings, an empty cache seeded by the shipped index), shared by
    the browser modules that only read it (``test_browser_context``, ``test_browser_decide``,
    ``test_browser_every_page``, ``test_browser_threshold_page``): each page they open is a session of its own,
    and the corpus is evaluated once per worker rather than once per module."""
    from browsing import start_server, stop_server

    base = tmp_path_factory.mktemp("bundled-dashboard")
    proc, url = start_server({"RAGDIAG_CACHE": str(base / "cache")}, base / "streamlit.log")
    try:
        yield url
    finally:
        stop_server(proc)


@pytest.fixture
def haushalt_fake(tmp_path, monkeypatch):
    """de-haushalt served by the dashboard on the FAKE encoder: a copy of its truth (pages write it), strategies E and
    F with BM25 and hybrid, a cache of the test's own; returns the truth's copy."""
    import shutil

    data = Path(__file__).resolve().parents[1] / "data"
    truth = tmp_path / "de-haushalt.truth.json"
    shutil.copy(data / "de-haushalt.truth.json", truth)
    for k, v in {"RAGDIAG_CORPUS": str(data / "de-haushalt"), "RAGDIAG_TRUTH": str(truth),
                 "RAGDIAG_CACHE": str(tmp_path / "cache"), "RAGDIAG_STRATEGIES": "E,F",
                 "RAGDIAG_RETRIEVERS": "bm25,hybrid", "RAGDIAG_ENCODER": "fakes:fake_encoder"}.items():
        monkeypatch.setenv(k, v)
    return truth
