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
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from ui.html import md_text

from ragdiag.chunking import parse_strategies
from ragdiag.corpus import DEFAULT_CORPUS, Corpus, CorpusError, load_corpus
from ragdiag.evaluate import TOP, Config, Evaluation, parse_retrievers
from ragdiag.defaults import DEFAULT_CUT, DEFAULT_KEEP
from ragdiag.limits import LimitError, Limits, read_limited
from ragdiag.serving import Access, AccessError
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
    "background_state",
    "prioritize",
    "sweep_for",
    "config_select",
    "cut_keep_sliders",
    "TOP",
]

#: Every registered default retriever (rerankers included); RAGDIAG_RETRIEVERS narrows it.
DEFAULT_RETRIEVERS = None
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


def access() -> Access:
    """The operator's data and allowed roots (``RAGDIAG_CORPUS``, ``RAGDIAG_TRUTH``, ``RAGDIAG_ROOTS``, ``RAGDIAG_LOCKED``)."""
    return Access.from_env(default_corpus=DEFAULT_CORPUS)


def settings(*, report: bool = False) -> Settings:
    """What to load and evaluate: sidebar paths (defaults from the environment) and the env limits.

    ``report``: show bad ``RAGDIAG_STRATEGIES``/``RAGDIAG_RETRIEVERS`` values (the sidebar does, once).
    """
    acc = access()
    corpus = (None if acc.locked else st.session_state.get(CORPUS_KEY)) or acc.corpus
    truth = None if acc.locked else st.session_state.get(TRUTH_KEY)
    if truth is None:
        truth = acc.truth
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
    acc = access()
    with st.sidebar:
        st.subheader("Data")
        if acc.locked:  # presentation mode: the operator's data, no path fields
            s = settings(report=True)
            st.caption(f"corpus **{md_text(Path(s.corpus).name)}** · ground truth **{md_text(s.truth_path.name)}**  \n"
                       f"strategies {','.join(s.strategies)} · retrievers {','.join(s.retrievers)}")
            return
        st.text_input("Corpus folder", value=acc.corpus, key=CORPUS_KEY, max_chars=4096,
                      help="A folder of documents on the server (.md, .txt, .html, .pdf), under the folders "
                           "the operator allowed (RAGDIAG_ROOTS).")
        st.text_input("Ground-truth file", value=acc.truth, key=TRUTH_KEY, max_chars=4096,
                      placeholder="<corpus folder>.truth.json beside the folder",
                      help="JSON or YAML with questions (verbatim needles) and out-of-domain queries. "
                           "Empty: the file named after the corpus folder, beside it.")
        s = settings(report=True)
        st.caption(f"strategies {','.join(s.strategies)} · retrievers {','.join(s.retrievers)}  \n"
                   f"cache {s.cache or '.ragdiag-cache'}")


# ----- inputs ---------------------------------------------------------------

def _folder_signature(root: str) -> str:
    """Cheap change detector for a corpus folder: names, sizes and mtimes (bounded like loading)."""
    from ragdiag.corpus import walk_corpus

    h = hashlib.sha256()
    p = Path(root)
    if p.is_dir():
        try:
            for e in walk_corpus(p):
                h.update(f"{e.rel}\0{e.size}\0{e.mtime_ns}\0{e.reason}\n".encode())
        except (CorpusError, LimitError, OSError) as exc:  # load_corpus reports it
            h.update(str(exc).encode())
    return h.hexdigest()


def _file_sha(path: Path) -> str:
    try:
        return hashlib.sha256(read_limited(path, Limits.from_env().max_truth_bytes)).hexdigest()
    except (OSError, LimitError):
        return ""


def _check_access(s: Settings) -> None:
    """Stop the page unless the corpus and ground truth are the operator's or under the allowed roots."""
    acc = access()
    try:
        acc.check(s.corpus, "corpus folder")
        acc.check(s.truth_path, "ground-truth file")
    except AccessError as exc:
        st.error(f"Cannot open that: {exc}.")
        st.info("Choose the configured corpus (clear the sidebar fields), or ask the operator to add the folder "
                "to RAGDIAG_ROOTS.")
        st.stop()


@st.cache_resource(max_entries=4, show_spinner="Loading the corpus…")
def _corpus(root: str, signature: str) -> Corpus:
    return load_corpus(root)


@st.cache_resource(max_entries=4, show_spinner=False)
def _truth(path: str, file_sha: str, corpus_sha: str, _corpus: Corpus) -> GroundTruth:
    return load_truth(path, _corpus)


def load_corpus_only(s: Settings | None = None) -> Corpus:
    """The corpus, or an error in the page (and the page stops)."""
    s = s or settings()
    _check_access(s)
    try:
        return _corpus(s.corpus, _folder_signature(s.corpus))
    except CorpusError as exc:
        st.error(f"Cannot load the corpus: {md_text(exc)}")
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
        st.error(f"Cannot use the ground truth {md_text(path.name)}: {len(exc.problems)} problem(s)")
        st.code("\n".join(exc.problems), language=None, wrap_lines=True)
        st.info("Fix the file, or choose another ground-truth file in the sidebar.")
        st.stop()
    return corpus, truth


# ----- models and the store ---------------------------------------------------

def _encoder():
    from ragdiag.encoder import ENCODER_ENV

    return _encoder_for(os.environ.get(ENCODER_ENV, ""))


@st.cache_resource(max_entries=2, show_spinner=False)
def _encoder_for(spec: str):
    """The encoder named by ``RAGDIAG_ENCODER`` (``spec``, the cache key), else MiniLM."""
    from ragdiag.encoder import load_encoder

    return load_encoder()


@st.cache_resource(max_entries=2, show_spinner=False)
def _store(root: str | None):
    from ragdiag.store import Store

    return Store(root)


@dataclass
class _Background:
    """One input set's background job, shared by every browser session (held by ``st.cache_resource``).

    ``scheduler`` evaluates one strategy at a time (:mod:`ragdiag.progressive`);
    ``notes`` are its messages for the page (e.g. whether the shipped index was used).
    """

    scheduler: object
    notes: list = field(default_factory=list)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)


def first_strategy(s: Settings) -> str:
    """The strategy a first look starts with: the default one when configured, else the first."""
    from ragdiag.defaults import DEFAULT_STRATEGY

    return DEFAULT_STRATEGY if DEFAULT_STRATEGY in s.strategies else s.strategies[0]


def url_strategies(s: Settings) -> list[str]:
    """The configured strategies the URL names (``strategies``, or a configuration such as ``a=C/dense``)."""
    named: list[str] = []
    for key in ("strategies", "strategy", "trunc", "config", "a", "b", "run_vs"):
        for value in st.query_params.get_all(key):
            for part in str(value).split(","):
                name = part.split("/", 1)[0].strip().upper()
                if name in s.strategies and name not in named:
                    named.append(name)
    return named


@st.cache_resource(max_entries=4, show_spinner=False)
def _background(corpus_root: str, truth_path: str, strategies: tuple[str, ...], retrievers: tuple[str, ...],
                corpus_sha: str, truth_sha: str, cache: str | None, first: str, _corpus: Corpus,
                _truth: GroundTruth) -> _Background:
    from ragdiag.evaluate import evaluate
    from ragdiag.progressive import Scheduler, first_order
    from ragdiag.store import record_evaluation

    encoder = _encoder()  # cheap: the model itself loads on the first vector to compute
    notes: list[str] = []
    try:
        store = _store(cache)
    except Exception as exc:  # noqa: BLE001 - a cache folder that cannot be used: results anyway, stored nowhere
        notes.append(f"The cache folder cannot be used ({getattr(exc, 'strerror', None) or exc}); "
                     "everything is computed and nothing is stored.")
        store = None

    def prepare(report) -> None:
        from ragdiag.snapshot import seed_from_snapshot

        report("checking the shipped index", 0, 0)
        if store is not None:  # nothing to seed without a store
            seed_from_snapshot(store, _corpus, _truth, encoder, strategies=strategies, log=notes.append)

    def work(name: str, report):
        ev = evaluate(_corpus, _truth, encoder=encoder, strategies=[name], retrievers=retrievers, store=store,
                      progress=lambda event: report(event.label, event.done, event.total))
        try:  # stamp the index in the store's catalogue, as the CLI does
            if store is not None:
                record_evaluation(store, ev)
        except Exception as exc:  # noqa: BLE001 - the catalogue is bookkeeping; the results stand
            notes.append(f"Could not record the index stamps of {name} in the store: {exc}")
        return ev

    return _Background(Scheduler(strategies, work, order=first_order(strategies, first=[first]), prepare=prepare),
                       notes)


def _background_for(s: Settings, corpus: Corpus, truth: GroundTruth) -> _Background:
    from ragdiag.encoder import ModelUnavailable

    try:
        return _background(s.corpus, str(s.truth_path), s.strategies, s.retrievers, corpus.sha256,
                           _file_sha(s.truth_path), s.cache, first_strategy(s), corpus, truth)
    except ModelUnavailable as exc:
        st.error(str(exc))
        st.stop()


def prioritize(names) -> None:
    """Move strategies the user picked to the front of the shared background job."""
    s = settings()
    corpus, truth = load_inputs(s)
    _background_for(s, corpus, truth).scheduler.prioritize(*names)


def background_state():
    """The shared background job's state (what is ready, computing, queued) for the current settings."""
    s = settings()
    corpus, truth = load_inputs(s)
    return _background_for(s, corpus, truth).scheduler.state()


@st.fragment(run_every=1.5)
def _poll(bg: _Background, shown: tuple[str, ...]) -> None:
    """While strategies are still computing: one status line, and a rerun of the page when one is ready."""
    state = bg.scheduler.state()
    if state.ready != shown or state.finished:
        st.rerun()
    st.caption(f"Strategies still computing in the background (tables grow as they finish): {state.describe()}")


def evaluation(need=None, want=None) -> tuple[Evaluation, str]:
    """The evaluation of the strategies ready so far, and its cache token.

    One background job per input set, shared by every session, computes one
    strategy at a time. ``want`` (default: what the URL names) moves to the
    front; the page waits, with a progress bar, only for ``need`` (default:
    ``want``, else the default strategy), never for the rest. While others
    are computing, a status line says so and the page reruns as each finishes.
    """
    from ragdiag.progressive import merge_evaluations

    s = settings()
    corpus, truth = load_inputs(s)
    bg = _background_for(s, corpus, truth)
    sched = bg.scheduler
    named = url_strategies(s)
    want = [n for n in (want if want is not None else named) if n in s.strategies]
    need = [n for n in (need if need is not None else want) if n in s.strategies] or [first_strategy(s)]
    sched.prioritize(*need, *want)
    if not sched.wait(need, timeout=0):
        bar = st.progress(0.0, text="Starting…")
        while not sched.wait(need, timeout=0.3):
            state = sched.state()
            frac = state.done / state.total if state.total else 0.0
            bar.progress(min(max(frac, 0.0), 1.0), text=state.describe())
        bar.empty()
    state = sched.state()
    for name in need:
        if name in state.failed:
            st.error(f"Strategy {name} could not be evaluated: {state.failed[name]}")
            st.stop()
    for note in bg.notes:
        st.caption(note)
    parts = sched.results()
    if not state.finished:
        _poll(bg, state.ready)
    return merge_evaluations(list(parts.values())), f"{bg.token}:{','.join(parts)}"


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
    from ui.frames import sweep_frame

    inputs = gate_inputs_for(_ev, config, keep=keep)
    table = sweep(inputs)
    return table, sweep_frame(table, rate_rows(inputs, default_cuts()))


@st.cache_resource(max_entries=64, show_spinner=False)
def distances_for(token: str, config: str, keep: int, _ev: Evaluation):
    """The gate's own per-query values (what the histograms plot), for one configuration and keep."""
    from ragdiag.results import gate_inputs_for
    from ragdiag.threshold import distance_samples
    from ui.frames import distance_frame

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


#: Long documents go to the browser in parts of this many characters, never in one piece.
TEXT_PART = 50_000


def text_part(n_chars: int, *, container=st) -> tuple[int, int]:
    """Which part of a long text to show (a number input bound to the URL's ``part``): ``(start, end)``."""
    n_parts = max(1, -(-n_chars // TEXT_PART))
    part = 1
    if n_parts > 1:
        part = int(container.number_input(f"Part (of {n_parts}, {TEXT_PART:,} characters each)", 1, n_parts, 1,
                                          key="part", bind="query-params"))
        container.caption(f"characters {(part - 1) * TEXT_PART:,} to {min(part * TEXT_PART, n_chars):,} "
                          f"of {n_chars:,}")
    return (part - 1) * TEXT_PART, part * TEXT_PART


def parse_config(label: str) -> Config:
    return Config.parse(label)
