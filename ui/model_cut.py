"""The threshold page's note that a cut belongs to one model, with its model-independent percentile."""

from __future__ import annotations

import streamlit as st

from ragdiag.evaluation.records import Evaluation
from ui.html import md_text
from ragdiag.core.words import cut_text


def model_cut_caption(ev: Evaluation, token: str, config: str, cut: float, container=st) -> None:
    """One caption: which model's distances the cut is on, and the cut's percentile among nearest-chunk distances."""
    from ragdiag.analyses.model_cut import cut_percentile, gate_model
    from ui import cache
    from ui.state import settings

    model = gate_model(ev, config)
    strategy = config.split("/", 1)[0]
    try:
        nearest = cache.nearest_distances(token, config, settings().cache, ev)
        pct = cut_percentile(cut, nearest)
        n_chunks = len(ev.indexes[strategy].chunks) if strategy in ev.indexes else len(nearest)
        of = (f"a random sample of {len(nearest):,} of the {n_chunks:,} {strategy} chunks'"
              if len(nearest) < n_chunks else f"the {strategy} chunks'")
        reading = (f"Cut {cut_text(cut)} is percentile **{pct:.1f}** of {of} distances to their "
                   "nearest other chunk, a reading that carries over to another model.")
    except Exception as exc:  # noqa: BLE001 - the note is informative; the page stands without it
        reading = f"(The model-independent percentile could not be computed: {md_text(exc)})"
    container.caption(f"These are **{md_text(model)}** cosine distances: a cut belongs to one embedding model and means "
                      f"something else for another. {reading}")
