"""The operator's collection on the dashboard (``RAGDIAG_COLLECTION``): its settings and its tables.

A collection is opened only from the operator's configuration (``RAGDIAG_COLLECTION``, ``./run.sh dashboard
--collection beir:DIR``), never from a path a visitor types.
"""

from __future__ import annotations

import os

import pandas as pd

__all__ = ["COLLECTION_ENV", "collection_spec", "collection_settings", "measure_frame", "slice_frame", "slices_section"]

COLLECTION_ENV = "RAGDIAG_COLLECTION"


def collection_spec() -> str:
    """The operator's collection spec, or ``""`` when the dashboard serves a corpus and its ground truth."""
    return os.environ.get(COLLECTION_ENV, "").strip()


def collection_settings() -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    """``(spec, split, strategies, retrievers)`` from the environment (default strategy E; dense, bm25, hybrid)."""
    from ragdiag.index.chunking import parse_strategies
    from ragdiag.retrieval.registry import parse_retrievers

    strategies = tuple(s.name for s in parse_strategies(os.environ.get("RAGDIAG_STRATEGIES") or "E"))
    retrievers = tuple(parse_retrievers(os.environ.get("RAGDIAG_RETRIEVERS") or "dense,bm25,hybrid"))
    return collection_spec(), os.environ.get("RAGDIAG_COLLECTION_SPLIT") or "test", strategies, retrievers


def measure_frame(rows, primary: str) -> pd.DataFrame:
    """One row per configuration, one column per measure (``0.71 (0.64–0.78)``, ``55% (42–67)``)."""
    return pd.DataFrame([{"configuration": r.config,
                          **{c.name + (" (primary)" if c.measure == primary else ""): c.words() for c in r.cells}}
                         for r in rows])


def slice_frame(table) -> pd.DataFrame:
    """One row per slice: its questions, its measure, its difference from the rest, the verdict."""
    return pd.DataFrame([{"slice": r.label, "questions": r.questions, table.measure: r.rate_words(),
                          "against the rest": r.difference_words() if not r.verdict.startswith("too few") else "–",
                          "verdict": r.verdict} for r in table.rows])


def slices_section(ev, config: str, *, k: int, st) -> None:
    """The Overview's slices: the context's configuration by phrasing, doc, language or tag (when tagged)."""
    from ragdiag.analyses.slices import SIMULTANEOUS_WORDS, evaluation_slices

    options = ["phrasing", "doc", "language"] + (["tag"] if any(q.tags for q in ev.truth.questions) else [])
    by = st.segmented_control("Slice by", options, default="phrasing", key="slice_by") or "phrasing"
    table = evaluation_slices(ev, config, by=by, k=k)
    from ui.fmt import drop_constant, said_once
    from ui.html import md_text

    st.markdown(md_text(table.headline()))
    frame, same = drop_constant(slice_frame(table))  # a column equal on every row is said once, below
    st.dataframe(frame, hide_index=True, key="slice_table")
    st.caption(md_text(f"{config}, found in the top {k} (R@{k}); {SIMULTANEOUS_WORDS}. A slice needs 5 questions "
                       "for a verdict. Tag questions in the ground truth (\"tags\": [...]) to slice by tag. "
                       + said_once(same)))
