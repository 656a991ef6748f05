"""The one context every page reads: configuration, cut and keep, set once in the sidebar and kept in the URL.

The sidebar's three fields are drawn by the entry point (``app.py``) before a
page runs, so their URL parameters (``config``, ``cut``, ``keep``) survive a
change of page. A page asks :func:`context` for the values; a "use this"
button calls :func:`use` (as an ``on_click`` callback) to set them.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ragdiag.core.defaults import DEFAULT_CUT, DEFAULT_KEEP, TOP
from ragdiag.evaluation.records import Evaluation
from ui.state import UNAVAILABLE_KEY as _UNAVAILABLE, Settings, settings

__all__ = ["Context", "context", "gate_settings", "context_sidebar", "use", "config_words", "remember_unavailable",
           "url_synced", "write_url", "recommendation", "CONFIG_KEY", "CUT_KEY", "KEEP_KEY"]

CONFIG_KEY, CUT_KEY, KEEP_KEY = "config", "cut", "keep"


@dataclass(frozen=True)
class Context:
    """What every page shows: one configuration (``chosen`` when the visitor picked it, else the
    recommended one), the gate's cut (cosine distance) and keep (at most that many chunks)."""

    config: str
    cut: float
    keep: int
    chosen: bool


def config_words(label: str) -> str:
    """A configuration in words ("paragraph cuts + section header, hybrid retrieval"), the code after it."""
    from ragdiag.analyses.recommend import describe_config

    try:
        return f"{describe_config(label)} ({label})"
    except ValueError:  # a label the library cannot decode (an external run): its code alone
        return label


def _options(s: Settings) -> list[str]:
    gone = set(st.session_state.get(_UNAVAILABLE, ()))
    return [f"{st_}/{r}" for st_ in s.strategies for r in s.retrievers if r not in gone]


def remember_unavailable(ev: Evaluation) -> None:
    """Keep retrievers that could not run (e.g. a reranker without its weights offline) out of the picker."""
    gone = tuple(sorted(ev.unavailable))
    if tuple(st.session_state.get(_UNAVAILABLE, ())) != gone:
        st.session_state[_UNAVAILABLE] = gone


def url_synced(key: str, options: list | None = None, *, fallback=None, parse=str) -> None:
    """Keep a widget in step with ``?key=`` by value, without binding it (so its labels may be words).

    A link that names a new value (``?q=q03:course``, ``?cut=0.5285``) wins over
    the session's; otherwise the session's choice stays; else ``fallback``.
    ``options``: the allowed values (None: any that ``parse`` accepts). Call
    before drawing the widget with ``key`` (and no default of its own); call
    :func:`write_url` with its value after.
    """
    url = st.query_params.get(key)
    seen = st.session_state.get(f"_url_{key}")
    value = None
    if url is not None and url != seen:
        try:
            value = parse(url)
        except (TypeError, ValueError):
            value = None
    if value is not None and (options is None or value in options):
        st.session_state[key] = value
    elif key not in st.session_state or (options is not None and st.session_state[key] not in options):
        st.session_state[key] = fallback


def write_url(key: str, value) -> None:
    """Put ``value`` in the URL under ``key`` (nothing when None) and remember it as the URL's."""
    if value is None:
        st.query_params.pop(key, None)
    elif st.query_params.get(key) != str(value):
        st.query_params[key] = str(value)
    st.session_state[f"_url_{key}"] = None if value is None else str(value)


def _cut(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(text)
    return value


def _keep(text: str) -> int:
    value = int(text)
    if not 1 <= value <= TOP:
        raise ValueError(text)
    return value


def context_sidebar() -> None:
    """The context's three fields, in the sidebar, kept in the URL (drawn by the entry point on every page)."""
    s = settings()
    options = _options(s)
    url_synced(CONFIG_KEY, options)
    url_synced(CUT_KEY, fallback=DEFAULT_CUT, parse=_cut)
    url_synced(KEEP_KEY, fallback=DEFAULT_KEEP, parse=_keep)
    with st.sidebar:
        st.subheader("Context")
        picked = st.selectbox("Configuration", options, key=CONFIG_KEY, placeholder="the recommended one",
                              format_func=config_words,
                              help="Every page shows this configuration; empty: the recommended one.")
        cut = st.number_input("Cut (cosine distance)", 0.0, 1.0, step=0.0005, format="%.4f", key=CUT_KEY,
                              help="The gate keeps only chunks closer than this.")
        keep = st.number_input("Keep at most (chunks)", 1, TOP, key=KEEP_KEY,
                               help="The gate passes at most this many chunks to the model.")
    write_url(CONFIG_KEY, picked)
    write_url(CUT_KEY, None if cut == DEFAULT_CUT else repr(float(cut)))
    write_url(KEEP_KEY, None if keep == DEFAULT_KEEP else int(keep))


def _value(key: str):
    if key in st.session_state:
        return st.session_state[key]
    return st.query_params.get(key)


def gate_settings() -> tuple[float, int]:
    """The context's cut and keep alone (a page about another evaluation, e.g. Variants, reads only these)."""
    try:
        cut = min(max(float(_value(CUT_KEY) if _value(CUT_KEY) is not None else DEFAULT_CUT), 0.0), 1.0)
    except (TypeError, ValueError):
        cut = DEFAULT_CUT
    try:
        keep = min(max(int(_value(KEEP_KEY) if _value(KEEP_KEY) is not None else DEFAULT_KEEP), 1), TOP)
    except (TypeError, ValueError):
        keep = DEFAULT_KEEP
    return cut, keep


def context(ev: Evaluation, token: str) -> Context:
    """The context on screen for the evaluation ``ev`` (cache token ``token``): the sidebar's values, the
    recommended configuration (:func:`recommendation`) when none is chosen."""
    remember_unavailable(ev)
    labels = [c.label for c in ev.results]
    picked = _value(CONFIG_KEY)
    chosen = picked in labels
    config = picked if chosen else recommendation(ev, token).config
    cut, keep = gate_settings()
    if picked and not chosen:
        st.sidebar.caption(f"{picked} is not evaluated here; showing the recommended configuration.")
    return Context(config, cut, keep, chosen)  # never rounded: a proposed cut sits exactly on a distance


def recommendation(ev: Evaluation, token: str):
    """The library's :func:`~ragdiag.analyses.recommend.recommend` at the gate's k and default keep, once per evaluation."""
    from ragdiag.core.gate import Gate
    from ragdiag.analyses.recommend import recommend
    from ui import cache

    return cache.by_evaluation("recommend", token, Gate(),
                               lambda: recommend(ev))


def use(*, config: str | None = None, cut: float | None = None, keep: int | None = None) -> None:
    """Set the context (an ``on_click`` callback of a "use this" button): the sidebar and the URL follow."""
    if config is not None and config in _options(settings()):
        st.session_state[CONFIG_KEY] = config
    if cut is not None:
        st.session_state[CUT_KEY] = float(cut)
    if keep is not None:
        st.session_state[KEEP_KEY] = int(keep)
