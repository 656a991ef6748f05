"""Settings, cached loaders and the shared evaluation (the only place the app caches).

Heavy imports (torch, transformers, the encoder) happen inside the loaders,
never at import time. Caches are bounded and keyed by content (corpus sha256,
ground-truth file sha256) plus the chosen strategies and retrievers; big
objects are passed as ``_``-prefixed arguments with a token standing in for
them in the key.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from ragdiag.chunking import parse_strategies
from ragdiag.corpus import DEFAULT_CORPUS, Corpus, CorpusError, load_corpus
from ragdiag.evaluate import TOP, Config, Evaluation, parse_retrievers
from ragdiag.defaults import DEFAULT_CUT, DEFAULT_KEEP
from ragdiag.truth import GroundTruth, TruthError, default_truth_path, load_truth

__all__ = [
    "DEFAULT_CUT",
    "DEFAULT_KEEP",
    "DEFAULT_RETRIEVERS",
    "Settings",
    "settings",
    "sidebar",
    "load_inputs",
    "load_corpus_only",
    "evaluation",
    "sweep_for",
    "config_select",
    "cut_keep_sliders",
    "TOP",
]

DEFAULT_RETRIEVERS = "dense,bm25,hybrid,rerank-maxsim,rerank-ce"
CORPUS_KEY, TRUTH_KEY = "corpus_path", "truth_path"


@dataclass(frozen=True)
class Settings:
    corpus: str
    truth: str  # "" -> the corpus's conventional truth file
    strategies: tuple[str, ...]
    retrievers: tuple[str, ...]
    cache: str | None

    @property
    def truth_path(self) -> Path:
        return Path(self.truth) if self.truth else default_truth_path(self.corpus)


def _env_default_corpus() -> str:
    return os.environ.get("RAGDIAG_CORPUS") or str(DEFAULT_CORPUS)


def settings(*, report: bool = False) -> Settings:
    """What to load and evaluate: sidebar paths (defaults from the environment) and the env limits.

    ``report``: show bad ``RAGDIAG_STRATEGIES``/``RAGDIAG_RETRIEVERS`` values (the sidebar does, once).
    """
    corpus = st.session_state.get(CORPUS_KEY) or _env_default_corpus()
    truth = st.session_state.get(TRUTH_KEY)
    if truth is None:
        truth = os.environ.get("RAGDIAG_TRUTH", "")
    errors = []
    try:
        strategies = tuple(s.name for s in parse_strategies(os.environ.get("RAGDIAG_STRATEGIES") or None))
    except ValueError as exc:
        errors.append(f"RAGDIAG_STRATEGIES: {exc}")
        strategies = tuple(s.name for s in parse_strategies(None))
    try:
        retrievers = tuple(parse_retrievers(os.environ.get("RAGDIAG_RETRIEVERS") or DEFAULT_RETRIEVERS))
    except ValueError as exc:
        errors.append(f"RAGDIAG_RETRIEVERS: {exc}")
        retrievers = tuple(parse_retrievers(DEFAULT_RETRIEVERS))
    for e in errors if report else ():
        st.warning(e)
    return Settings(corpus.strip(), truth.strip(), strategies, retrievers, os.environ.get("RAGDIAG_CACHE") or None)


def sidebar() -> None:
    """Corpus folder and ground-truth file (paths on the server)."""
    with st.sidebar:
        st.subheader("Data")
        st.text_input("Corpus folder", value=_env_default_corpus(), key=CORPUS_KEY,
                      help="A folder of documents on the server (.md, .txt, .html, .pdf).")
        st.text_input("Ground-truth file", value=os.environ.get("RAGDIAG_TRUTH", ""), key=TRUTH_KEY,
                      placeholder="<corpus folder>.truth.json beside the folder",
                      help="JSON or YAML with questions (verbatim needles) and out-of-domain queries. "
                           "Empty: the file named after the corpus folder, beside it.")
        s = settings(report=True)
        st.caption(f"strategies {','.join(s.strategies)} · retrievers {','.join(s.retrievers)}  \n"
                   f"cache {s.cache or '.ragdiag-cache'}")


# ----- inputs ---------------------------------------------------------------

def _folder_signature(root: str) -> str:
    """Cheap change detector for a corpus folder: names, sizes and mtimes."""
    h = hashlib.sha256()
    p = Path(root)
    if p.is_dir():
        for f in sorted(p.rglob("*")):
            try:
                st_ = f.stat()
            except OSError:
                continue
            h.update(f"{f.relative_to(p)}\0{st_.st_size}\0{st_.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _file_sha(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


@st.cache_resource(max_entries=4, show_spinner="Loading the corpus…")
def _corpus(root: str, signature: str) -> Corpus:
    return load_corpus(root)


@st.cache_resource(max_entries=4, show_spinner=False)
def _truth(path: str, file_sha: str, corpus_sha: str, _corpus: Corpus) -> GroundTruth:
    return load_truth(path, _corpus)


def load_corpus_only(s: Settings | None = None) -> Corpus:
    """The corpus, or an error in the page (and the page stops)."""
    s = s or settings()
    try:
        return _corpus(s.corpus, _folder_signature(s.corpus))
    except CorpusError as exc:
        st.error(f"Cannot load the corpus: {exc}")
        st.info("Choose another corpus folder in the sidebar.")
        st.stop()


def load_inputs(s: Settings | None = None) -> tuple[Corpus, GroundTruth]:
    """Corpus and ground truth, or their validation errors in the page (and the page stops)."""
    s = s or settings()
    corpus = load_corpus_only(s)
    path = s.truth_path
    try:
        truth = _truth(str(path), _file_sha(path), corpus.sha256, corpus)
    except TruthError as exc:
        st.error(f"Cannot use the ground truth {str(path)!r}: {len(exc.problems)} problem(s)")
        st.code("\n".join(exc.problems), language=None, wrap_lines=True)
        st.info("Fix the file, or choose another ground-truth file in the sidebar.")
        st.stop()
    return corpus, truth


# ----- models and the store ---------------------------------------------------

@st.cache_resource(max_entries=1, show_spinner=False)
def _encoder():
    from ragdiag.encoder import Encoder

    return Encoder()


@st.cache_resource(max_entries=2, show_spinner=False)
def _store(root: str | None):
    from ragdiag.store import Store

    return Store(root)


@dataclass
class _Job:
    """One evaluation's slot in the cache: filled once, by whichever session gets the lock first."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    result: Evaluation | None = None
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    seconds: float = 0.0


@st.cache_resource(max_entries=4, show_spinner=False)
def _job(corpus_root: str, truth_path: str, strategies: tuple[str, ...], retrievers: tuple[str, ...],
         corpus_sha: str, truth_sha: str, cache: str | None) -> _Job:
    return _Job()


def _run_evaluation(corpus: Corpus, truth: GroundTruth, s: Settings) -> Evaluation:
    from ragdiag.encoder import ModelUnavailable
    from ragdiag.evaluate import evaluate
    from ragdiag.views import progress_fraction

    bar = st.progress(0.0, text="Loading the embedding model…")
    try:
        try:
            encoder = _encoder()
        except ModelUnavailable as exc:
            bar.empty()
            st.error(str(exc))
            st.stop()
        store = _store(s.cache)
        bar.progress(0.0, text="Building the indexes (vectors already in the store are reused)…")

        def progress(stage: str, done: int, total: int) -> None:
            frac = progress_fraction(stage, done, total, s.strategies, s.retrievers)
            bar.progress(frac, text=f"{stage}: {done}/{total}")

        ev = evaluate(corpus, truth, encoder=encoder, strategies=s.strategies, retrievers=s.retrievers,
                      store=store, progress=progress)
        try:  # stamp the indexes in the store's catalogue, as the CLI does (when the store supports it)
            from ragdiag import store as store_module

            record = getattr(store_module, "record_evaluation", None)
            if record is not None:
                record(store, ev)
        except Exception as exc:  # noqa: BLE001 - the catalogue is bookkeeping; the results stand
            st.warning(f"Could not record the index stamps in the store: {exc}")
        return ev
    finally:
        bar.empty()


def evaluation() -> tuple[Evaluation, str]:
    """The shared evaluation for the current settings and its cache token.

    The first call builds it, drawing a progress bar fed by ``evaluate``'s
    progress callback; other sessions wait for it; later calls are instant.
    """
    s = settings()
    corpus, truth = load_inputs(s)
    job = _job(s.corpus, str(s.truth_path), s.strategies, s.retrievers, corpus.sha256,
               _file_sha(s.truth_path), s.cache)
    if job.result is None:
        if not job.lock.acquire(blocking=False):
            with st.spinner("Another session is building these indexes…"):
                job.lock.acquire()
        try:
            if job.result is None:
                t = time.perf_counter()
                job.result = _run_evaluation(corpus, truth, s)
                job.seconds = time.perf_counter() - t
        finally:
            job.lock.release()
    return job.result, job.token


def recorded_stamps(s: Settings | None = None) -> list:
    """The store's catalogue of stamped indexes (empty when it cannot be read)."""
    s = s or settings()
    try:
        return list(_store(s.cache).indexes())
    except Exception:  # noqa: BLE001 - the catalogue is informative only
        return []


# ----- derived, cached per evaluation ------------------------------------------

@st.cache_resource(max_entries=64, show_spinner=False)
def sweep_for(token: str, config: str, keep: int, _ev: Evaluation):
    """The sweep over every cut for one configuration and keep (computed once), and its long frame with rates."""
    from ragdiag.results import gate_inputs_for
    from ragdiag.threshold import default_cuts, rate_rows, sweep
    from ragdiag.views import sweep_frame

    inputs = gate_inputs_for(_ev, config, keep=keep)
    table = sweep(inputs)
    return table, sweep_frame(table, rate_rows(inputs, default_cuts()))


@st.cache_resource(max_entries=64, show_spinner=False)
def distances_for(token: str, config: str, keep: int, _ev: Evaluation):
    """The gate's own per-query values (what the histograms plot), for one configuration and keep."""
    from ragdiag.results import gate_inputs_for
    from ragdiag.threshold import distance_samples
    from ragdiag.views import distance_frame

    return distance_frame(distance_samples(gate_inputs_for(_ev, config, keep=keep)), keep=keep)


# ----- shared widgets ------------------------------------------------------------

def config_labels(ev: Evaluation) -> list[str]:
    return [c.label for c in ev.results]


def default_config(ev: Evaluation) -> str:
    """The library's rule (:func:`ragdiag.report.default_config`), as a label."""
    from ragdiag.report import default_config as rule

    return rule(ev).label


def config_select(ev: Evaluation, label: str = "Configuration", *, key: str = "config",
                  default: str | None = None, container=st) -> str:
    labels = config_labels(ev)
    default = default if default in labels else default_config(ev)
    return container.selectbox(label, labels, index=labels.index(default), key=key, bind="query-params",
                               help="strategy/retriever")


def cut_keep_sliders(container=st, keep_container=None) -> tuple[float, int]:
    """The gate's two settings, bound to the URL (``cut``, ``keep``)."""
    keep_container = keep_container or container
    cut = container.slider("Cut (cosine distance): keep chunks closer than this", 0.0, 1.0, DEFAULT_CUT,
                           step=0.005, format="%.3f", key="cut", bind="query-params")
    keep = keep_container.slider("Keep at most N chunks", 1, TOP, DEFAULT_KEEP, key="keep", bind="query-params")
    return round(float(cut), 6), int(keep)


def parse_config(label: str) -> Config:
    return Config.parse(label)
