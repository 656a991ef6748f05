""""About this run": stamps, notes and retrievers that could not run, said once and quietly, never as a warning."""

from __future__ import annotations

import streamlit as st

from ragdiag.evaluation.records import Evaluation
from ui.html import md_text

__all__ = ["about_run"]


def about_run(ev: Evaluation, *, expanded: bool = False) -> None:
    """An expander with what is always true of this run: the store's notes, index stamps, unavailable retrievers."""
    from ui.frames import index_stamp_rows
    from ui.jobs import job_notes
    from ui.state import recorded_stamps

    with st.expander("About this run", expanded=expanded):
        for note in job_notes():
            st.caption(md_text(note))
        for name, reason in ev.unavailable.items():
            st.caption(f"Not in this run: **{md_text(name)}** ({md_text(reason)}).")
        for note in getattr(ev, "notes", {}).values():
            st.caption(md_text(note))
        st.caption("Vectors of two models are not comparable: every index is stamped with the model, weights, "
                   "pipeline and extractor versions, corpus hash and chunking it was built with.")
        from ui.fmt import dash_missing, drop_constant

        stamps = index_stamp_rows(ev, recorded_stamps())
        if not stamps.empty:
            stamps, same = drop_constant(dash_missing(stamps), keep=["strategy"])
            if same:
                st.caption("Every index: " + "; ".join(f"{md_text(k)} {md_text(v)}" for k, v in same.items()) + ".")
            st.dataframe(stamps, hide_index=True)
        if getattr(ev, "retriever_stamps", None):  # dense variants (precision, index, model), BM25 (k1, b, scorer)
            st.caption("Retriever stamps: what made each configuration's numbers (dense variants, BM25)")
            st.json(ev.retriever_stamps, expanded=False)
