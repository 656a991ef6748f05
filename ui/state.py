"""Settings, inputs and the data sidebar: what the dashboard evaluates, loaded through :mod:`ui.cache`.

The caches themselves live in :mod:`ui.cache`; the shared background
evaluation in :mod:`ui.jobs`; the configuration, cut and keep every page uses
in :mod:`ui.context`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ui import cache
from ui.html import md_text
from ui.serving import install as _close_protocol

from ragdiag.index.chunking import parse_strategies
from ragdiag.documents.corpus import DEFAULT_CORPUS, Corpus
from ragdiag.documents.walk import CorpusError
from ragdiag.core.defaults import TOP
from ragdiag.evaluation.records import Evaluation
from ragdiag.retrieval.registry import parse_retrievers
from ragdiag.core.defaults import DEFAULT_CUT, DEFAULT_KEEP
from ragdiag.core.limits import LimitError, Limits, read_limited
from ragdiag.present.serving import Access, AccessError
from ragdiag.documents.truth import GroundTruth, TruthError, default_truth_path

_close_protocol(script_path=False)  # a client's clear-cache clears only its own session (ui.serve: more)

__all__ = [
    "FAVICON",
    "DEFAULT_CUT",
    "DEFAULT_KEEP",
    "DEFAULT_RETRIEVERS",
    "Settings",
    "settings",
    "operator_settings",
    "sidebar",
    "load_inputs",
    "read_inputs",
    "load_corpus_only",
    "config_labels",
    "default_config",
    "TOP",
]

#: The page icon: a file served by this server (a ``:material/...:`` icon makes every browser fetch it from a
#: font server outside, which an air-gapped team sees fail).
FAVICON = Path(__file__).with_name("favicon.png")

#: Every registered default retriever (rerankers included); RAGDIAG_RETRIEVERS narrows it.
DEFAULT_RETRIEVERS = None
CORPUS_KEY, TRUTH_KEY = "corpus_path", "truth_path"
#: Session key of the retrievers that could not run in this session's evaluation (kept out of pickers).
UNAVAILABLE_KEY = "_unavailable_retrievers"


@dataclass(frozen=True)
class Settings:
    """What the dashboard evaluates: corpus, ground truth, strategies, retrievers and store folder."""

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
    return _settings(corpus, acc.truth if truth is None else truth, report=report)


def operator_settings() -> Settings:
    """What every visitor gets first: the operator's configured data (the environment), no session's choice."""
    acc = access()
    return _settings(acc.corpus, acc.truth)


def _settings(corpus: str, truth: str, *, report: bool = False) -> Settings:
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


def _ran(s: Settings) -> str:
    """The retrievers that run (one that could not, e.g. without its weights offline, is said in "About this run")."""
    gone = set(st.session_state.get(UNAVAILABLE_KEY, ()))
    return ",".join(r for r in s.retrievers if r not in gone)


def sidebar() -> None:
    """Corpus folder and ground-truth file (paths on the server)."""
    acc = access()
    with st.sidebar:
        st.subheader("Data")
        if acc.locked:  # presentation mode: the operator's data, no path fields
            s = settings(report=True)
            st.caption(f"corpus **{md_text(Path(s.corpus).name)}** · ground truth **{md_text(s.truth_path.name)}**  \n"
                       f"strategies {','.join(s.strategies)} · retrievers {_ran(s)}")
            return
        st.text_input("Corpus folder", value=acc.corpus, key=CORPUS_KEY, max_chars=4096,
                      help="A folder of documents on the server (.md, .txt, .html, .pdf), under the folders "
                           "the operator allowed (RAGDIAG_ROOTS).")
        st.text_input("Ground-truth file", value=acc.truth, key=TRUTH_KEY, max_chars=4096,
                      placeholder="<corpus folder>.truth.json beside the folder",
                      help="JSON or YAML with questions (verbatim needles) and out-of-domain queries. "
                           "Empty: the file named after the corpus folder, beside it.")
        s = settings(report=True)
        st.caption(f"strategies {','.join(s.strategies)} · retrievers {_ran(s)}  \n"
                   f"cache {s.cache or '.ragdiag-cache'}")


# ----- inputs ---------------------------------------------------------------

def _folder_signature(root: str) -> str:
    """Cheap change detector for a corpus folder: names, sizes and mtimes (bounded like loading)."""
    from ragdiag.documents.walk import walk_corpus

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


def _allowed(s: Settings) -> None:
    """:class:`AccessError` unless the corpus and ground truth are the operator's or under the allowed roots."""
    acc = access()
    acc.check(s.corpus, "corpus folder")
    acc.check(s.truth_path, "ground-truth file")


def _check_access(s: Settings) -> None:
    """Stop the page unless the corpus and ground truth are the operator's or under the allowed roots."""
    try:
        _allowed(s)
    except AccessError as exc:
        st.error(f"Cannot open that: {md_text(exc)}.")
        st.info("Choose the configured corpus (clear the sidebar fields), or ask the operator to add the folder "
                "to RAGDIAG_ROOTS.")
        st.stop()


def _corpus_of(s: Settings) -> Corpus:
    return cache.corpus(s.corpus, _folder_signature(s.corpus))


def _truth_of(s: Settings, corpus: Corpus) -> GroundTruth:
    return cache.truth(str(s.truth_path), _file_sha(s.truth_path), corpus.sha256, corpus)


def read_inputs(s: Settings) -> tuple[Corpus, GroundTruth]:
    """Corpus and ground truth of ``s`` (cached), or the error a page would show: outside a page, e.g. at start-up.

    Raises :class:`~ragdiag.present.serving.AccessError`, :class:`~ragdiag.documents.corpus.CorpusError` or
    :class:`~ragdiag.documents.truth.TruthError`.
    """
    _allowed(s)
    corpus = _corpus_of(s)
    return corpus, _truth_of(s, corpus)


def load_corpus_only(s: Settings | None = None) -> Corpus:
    """The corpus, or an error in the page (and the page stops)."""
    s = s or settings()
    _check_access(s)
    try:
        return _corpus_of(s)
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
        truth = _truth_of(s, corpus)
    except TruthError as exc:
        st.error(f"Cannot use the ground truth {md_text(path.name)}: {len(exc.problems)} problem(s)")
        st.code("\n".join(exc.problems), language=None, wrap_lines=True)
        st.info("Fix the file, or choose another ground-truth file in the sidebar.")
        st.stop()
    return corpus, truth


# ----- models and the store ---------------------------------------------------

#: The encoder and the store (held by :mod:`ui.cache`), under the names the pages used.
_encoder = cache.encoder
_store = cache.store


def recorded_stamps(s: Settings | None = None) -> list:
    """The store's catalogue of stamped indexes (empty when it cannot be read)."""
    s = s or settings()
    try:
        return list(_store(s.cache).indexes())
    except Exception:  # noqa: BLE001 - the catalogue is informative only
        return []


# ----- shared widgets ------------------------------------------------------------

def config_labels(ev: Evaluation) -> list[str]:
    """Every evaluated configuration's label (external runs included), in evaluation order."""
    return [c.label for c in ev.results]


def default_config(ev: Evaluation) -> str:
    """The library's rule (:func:`ragdiag.present.report.default_config`), as a label."""
    from ragdiag.present.report.build import default_config as rule

    return rule(ev).label


#: Long documents go to the browser in parts of this many characters, never in one piece.
TEXT_PART = 50_000


def text_part(n_chars: int, *, container=st) -> tuple[int, int]:
    """Which part of a long text to show (a number input bound to the URL's ``part``): ``(start, end)``."""
    n_parts = max(1, -(-n_chars // TEXT_PART))
    part = 1
    if n_parts > 1:
        # a float field read as a whole number: ?part=1e999 falls back to 1 (a whole-number field: int(inf), an error)
        part = round(container.number_input(f"Part (of {n_parts}, {TEXT_PART:,} characters each)", 1.0,
                                            float(n_parts), 1.0, step=1.0, format="%.0f", key="part",
                                            bind="query-params"))
        container.caption(f"characters {(part - 1) * TEXT_PART:,} to {min(part * TEXT_PART, n_chars):,} "
                          f"of {n_chars:,}")
    return (part - 1) * TEXT_PART, part * TEXT_PART

