"""The shared background evaluation: one job per input set, shared by every browser session.

The job (held by :func:`ui.cache.background`, the app's only global state) seeds
the store from the shipped index, then evaluates the configured strategies in one
pass (:func:`ragdiag.evaluation.progressive.evaluation_pass`): the first configuration's
strategy first, each strategy's tables shown as soon as it is ranked, the
run-level work (query vectors, shared models) done once. Picking a strategy
that is not ready moves it to the front; what was embedded before is kept in
the store whatever happens.
"""

from __future__ import annotations

import streamlit as st

from ragdiag.documents.corpus import Corpus
from ragdiag.evaluation.records import Evaluation
from ragdiag.documents.truth import GroundTruth
from ui import cache
from ui.background import Background
from ui.html import md_text
from ui.state import Settings, _file_sha, load_inputs, operator_settings, read_inputs, settings

__all__ = ["evaluation", "evaluation_of", "first_strategy", "job_notes", "start_operator_job", "url_strategies",
           "progress_words"]


def first_strategy(s: Settings) -> str:
    """The strategy a first look starts with: the default one when configured, else the first."""
    from ragdiag.core.defaults import DEFAULT_STRATEGY

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


def _job(s: Settings, corpus: Corpus, truth: GroundTruth) -> Background:
    """The shared job of these inputs, started on first use."""
    return cache.background(s.corpus, str(s.truth_path), s.strategies, s.retrievers, corpus.sha256,
                       _file_sha(s.truth_path), s.cache, first_strategy(s), corpus, truth)


def _background_for(s: Settings, corpus: Corpus, truth: GroundTruth) -> Background:
    from ragdiag.index.encoder.resolve import ModelUnavailable

    try:
        return _job(s, corpus, truth)
    except ModelUnavailable as exc:
        st.error(str(exc))
        st.stop()


def start_operator_job() -> Background:
    """Start the operator's configured evaluation (the one every visitor gets first) before anyone visits.

    The same shared job a first page view would start, from the environment
    alone (no session): it is the one pages find already running, or done.
    Raises what loading would show a visitor (access, corpus, ground truth,
    model), for the server's log; pages report it again in the browser.
    """
    s = operator_settings()
    return _job(s, *read_inputs(s))


def progress_words(state) -> str:
    """Where the shared job is, in plain words, with a rough time left: "Strategies still computing: 4 of 6
    (C, A, B, D), about 3 min left; the results shown are provisional."."""
    import time

    left = ([state.running] if state.running else []) + list(state.queued)
    total = len(state.ready) + len(state.failed) + len(left)
    about = ""
    if state.ended and state.started:
        per = (time.monotonic() - state.started) / len(state.ended)  # the first includes loading the model
        minutes = max(1, round(per * len(left) / 60))
        about = f", about {minutes} min left"
    return (f"Strategies still computing: {len(left)} of {total} ({', '.join(left)}){about}; the results shown are "
            "provisional.")


@st.fragment(run_every=1.5)
def _poll(bg: Background, shown: tuple[str, ...]) -> None:
    """While strategies are still computing: one status line, and a rerun of the page when one is ready."""
    state = bg.scheduler.state()
    if state.ready != shown or state.finished:
        st.rerun()
    st.caption(progress_words(state))


def evaluation(need=None, want=None) -> tuple[Evaluation, str]:
    """The evaluation of the strategies ready so far, and its cache token.

    One background job per input set, shared by every session, computes the
    strategies in one pass. ``want`` (default: what the URL names) moves to
    the front; the page waits, with a progress bar, only for ``need``
    (default: ``want``, else the default strategy), never for the rest.
    While others are computing, a status line says so and the page reruns as
    each finishes.
    """
    s = settings()
    corpus, truth = load_inputs(s)
    bg = _background_for(s, corpus, truth)
    sched = bg.scheduler
    named = url_strategies(s)
    if need is None and want is None and not named:  # no configuration chosen: the recommended one is over all
        need = list(s.strategies)
    want = [n for n in (want if want is not None else named) if n in s.strategies]
    need = [n for n in (need if need is not None else want) if n in s.strategies] or [first_strategy(s)]
    sched.prioritize(*need, *want)
    state = _wait_for(sched, need)
    ev, ready = bg.merged()
    if not state.finished:
        _poll(bg, ready)
    return ev, f"{bg.token}:{','.join(ready)}"


def _wait_for(sched, need: list[str]):
    """Wait for the strategies ``need`` with a progress bar; stop the page with the reason if one failed."""
    if not sched.wait(need, timeout=0):
        bar = st.progress(0.0, text="Starting…")
        while not sched.wait(need, timeout=1.0):  # once a second: each redraw costs the browser work
            state = sched.state()
            frac = state.done / state.total if state.total else 0.0
            step = f": {state.stage}, {state.done} of {state.total}" if state.total else ""
            bar.progress(min(max(frac, 0.0), 1.0),
                         text=f"Computing the first results (chunking strategy {state.running or '…'}{step})")
        bar.empty()
    state = sched.state()
    for name in need:
        if name in state.failed:
            st.error(f"Strategy {md_text(name)} could not be evaluated: {md_text(state.failed[name])}")
            st.stop()
    return state


def job_notes() -> list[str]:
    """The shared job's messages (e.g. that the store was seeded from the shipped index): for "About this run"."""
    s = settings()
    corpus, truth = load_inputs(s)
    return list(_background_for(s, corpus, truth).notes)


def evaluation_of(strategies: tuple[str, ...], retrievers: tuple[str, ...]) -> tuple[Evaluation, str]:
    """The shared job of these inputs for other ``strategies`` and ``retrievers`` (the Variants page's), waited for.

    The same job as :func:`evaluation` (one per input set and retriever set, shared by every session, the
    store reused), started on first use; the page waits, with a progress bar, until it is done.
    """
    s = settings()
    corpus, truth = load_inputs(s)
    from ragdiag.index.encoder.resolve import ModelUnavailable

    try:
        bg = cache.background(s.corpus, str(s.truth_path), tuple(strategies), tuple(retrievers), corpus.sha256,
                         _file_sha(s.truth_path), s.cache, strategies[0], corpus, truth)
    except ModelUnavailable as exc:
        st.error(str(exc))
        st.stop()
    sched = bg.scheduler
    need = list(strategies)
    _wait_for(sched, need)
    ev, ready = bg.merged()
    return ev, f"{bg.token}:{','.join(ready)}"
