"""Cached funnel, hubs and cost results of the shared evaluation (keyed by its token)."""

from __future__ import annotations

import streamlit as st

from ragdiag.evaluation import Evaluation

__all__ = ["funnels_for", "costs_for"]


@st.cache_resource(max_entries=32, show_spinner=False)
def funnels_for(token: str, k: int, cut: float, keep: int, _ev: Evaluation):
    """:func:`ragdiag.funnel.funnels` of every configuration (first-stage ranks computed when not evaluated)."""
    from ragdiag.funnel import funnels

    try:
        return funnels(_ev, k=k, cut=cut, keep=keep)
    except ValueError:  # a reranker or hybrid without S/dense evaluated: embed the queries to rank them
        from ui.state import _encoder, _store, settings

        return funnels(_ev, k=k, cut=cut, keep=keep, encoder=_encoder(), store=_store(settings().cache))


@st.cache_resource(max_entries=8, show_spinner=False)
def costs_for(token: str, k: int, cut: float, keep: int, sample: int, _ev: Evaluation):
    """:func:`ragdiag.cost.costs` of every configuration, measured once per evaluation and settings."""
    from ragdiag.cost import costs, machine
    from ui.state import _encoder

    return costs(_ev, _encoder(), k=k, cut=cut, keep=keep, sample=sample), machine()
