"""Every cache of the dashboard, in one module.

Library objects that are shared and never mutated (the corpus, the ground
truth, the encoder, the store, the background job, sweeps, funnels) are held
in ``st.cache_resource``; tables (DataFrames, bytes) in ``st.cache_data``.
Every cache is bounded (``max_entries``) and keyed by content: a corpus
signature or sha256, a ground-truth file sha256, the evaluation's token (one
per background job and set of ready strategies) and the frozen settings. Big
objects are passed as ``_``-prefixed arguments, which Streamlit does not hash.
Heavy imports (torch, the encoder) happen inside the loaders, never at import.
"""

from __future__ import annotations

import os
from typing import Callable

import streamlit as st

from ragdiag.documents.corpus import Corpus, load_corpus
from ragdiag.evaluation.records import Evaluation
from ragdiag.documents.truth import GroundTruth, load_truth
from ui.background import Background, start_background

__all__ = ["corpus", "truth", "encoder", "store", "background", "sweep_for", "choice_for", "distances_for",
           "funnels", "costs", "nearest_distances", "by_evaluation", "data_by_evaluation", "collection_runs",
           "monitor_reading"]


# ----- inputs, models, the store, the shared job --------------------------------------------------

@st.cache_resource(max_entries=4, show_spinner="Loading the corpus…")
def corpus(root: str, signature: str) -> Corpus:
    """The corpus under ``root`` (``signature``: names, sizes and mtimes of its files, so an edit reloads it)."""
    return load_corpus(root)


@st.cache_resource(max_entries=4, show_spinner=False)
def truth(path: str, file_sha: str, corpus_sha: str, _corpus: Corpus) -> GroundTruth:
    """The ground truth at ``path`` located in ``_corpus`` (keyed by both hashes)."""
    return load_truth(path, _corpus)


def encoder():
    """The encoder named by ``RAGDIAG_ENCODER`` (the seam tests use for a fake), else MiniLM; one per process."""
    from ragdiag.index.models import ENCODER_ENV

    return _encoder_for(os.environ.get(ENCODER_ENV, ""))


@st.cache_resource(max_entries=2, show_spinner=False)
def _encoder_for(spec: str):
    from ragdiag.index.models import load_encoder

    return load_encoder()


@st.cache_resource(max_entries=2, show_spinner=False)
def store(root: str | None):
    """The on-disk store of vectors and indexes under ``root`` (default folder when None)."""
    from ragdiag.index.store import Store

    return Store(root)


@st.cache_resource(max_entries=4, show_spinner=False)
def background(corpus_root: str, truth_path: str, strategies: tuple[str, ...], retrievers: tuple[str, ...],
               corpus_sha: str, truth_sha: str, cache: str | None, first: str, _corpus: Corpus,
               _truth: GroundTruth) -> Background:
    """The shared background job of one input set (the app's only global state), started on first use."""
    return start_background(_corpus, _truth, strategies=strategies, retrievers=retrievers, first=first,
                            encoder=encoder(), open_store=lambda: store(cache))


# ----- derived, per evaluation (``token`` names the evaluation) -------------------------------------

@st.cache_resource(max_entries=64, show_spinner=False)
def sweep_for(token: str, config: str, keep: int, _ev: Evaluation):
    """The gate's inputs for one configuration and keep, the sweep over every cut and its long frame with rates.

    Computed once per evaluation: a change of cut reuses all three.
    """
    from ragdiag.analyses.threshold.gate import default_cuts, sweep
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.core.gate import Gate
    from ragdiag.analyses.threshold.rates import rate_rows
    from ui.frames import sweep_frame

    inputs = gate_table(_ev, config, Gate(keep))
    table = sweep(inputs)
    return inputs, table, sweep_frame(table, rate_rows(inputs, default_cuts()))


@st.cache_resource(max_entries=64, show_spinner=False)
def choice_for(token: str, config: str, keep: int, goal, _ev: Evaluation):
    """:func:`~ragdiag.analyses.threshold.choice.cut_choice` (cross-validated, so not free) once per evaluation,
    configuration and goal."""
    from ragdiag.analyses.threshold.choice import cut_choice

    return cut_choice(sweep_for(token, config, keep, _ev)[0], goal)


@st.cache_data(max_entries=64, show_spinner=False)
def distances_for(token: str, config: str, keep: int, _ev: Evaluation):
    """The gate's own per-query values (what the histograms plot), for one configuration and keep: a frame."""
    from ragdiag.analyses.threshold.gate import distance_samples
    from ui.frames import distance_frame

    return distance_frame(distance_samples(sweep_for(token, config, keep, _ev)[0]), keep=keep)


@st.cache_resource(max_entries=32, show_spinner=False)
def funnels(token: str, gate, cache: str | None, _ev: Evaluation):
    """:func:`ragdiag.analyses.funnel.funnels` of every configuration at ``gate`` (a frozen, hashable
    :class:`~ragdiag.core.gate.Gate`; first-stage ranks computed when not evaluated)."""
    from ragdiag.analyses.funnel import funnels as compute

    try:
        return compute(_ev, gate=gate)
    except ValueError:  # a reranker or hybrid without S/dense evaluated: embed the queries to rank them
        return compute(_ev, gate=gate, encoder=encoder(), store=store(cache))


@st.cache_resource(max_entries=8, show_spinner=False)
def costs(token: str, gate, sample: int, _ev: Evaluation):
    """:func:`ragdiag.analyses.cost.costs` of every configuration at ``gate`` (a frozen, hashable
    :class:`~ragdiag.core.gate.Gate`), measured once per evaluation and settings, as a
    :class:`~ragdiag.analyses.cost_log.CostMeasurement` (the machine, when, and how long it took)."""
    import time
    from datetime import datetime, timezone

    from ragdiag.analyses.cost import costs as measure, machine
    from ragdiag.analyses.cost_log import CostMeasurement

    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()  # how long a measurement takes: said to the next visitor before they start one
    rows = measure(_ev, encoder(), gate, sample=sample)
    return CostMeasurement(tuple(rows), machine(), when, time.perf_counter() - t0, sample, gate)


@st.cache_resource(max_entries=16, show_spinner=False)
def nearest_distances(token: str, config: str, cache: str | None, _ev: Evaluation):
    """Each chunk's distance to its nearest other chunk under ``config``'s gate model (the cut's percentile); over
    :data:`NEAREST_SAMPLE` chunks, a seeded sample of that many (the page says so)."""
    from ragdiag.analyses.model_cut import gate_chunk_vectors, nearest_chunk_distances

    return nearest_chunk_distances(gate_chunk_vectors(_ev, config, store=store(cache)), sample=NEAREST_SAMPLE)


#: Chunks whose nearest neighbours the Threshold page reads at most (every one against every chunk is quadratic:
#: 100,000 chunks kept the page from opening for over 20 minutes).
NEAREST_SAMPLE = 2000


@st.cache_resource(max_entries=64, show_spinner=False)
def by_evaluation(name: str, token: str, params: tuple, _compute: Callable[[], object]):
    """A library result a page computes from the evaluation ``token`` (``name`` and ``params`` key it), held once.

    ``_compute`` is called on a miss; its result must not be mutated by the caller.
    """
    return _compute()


@st.cache_data(max_entries=16, show_spinner=False)
def data_by_evaluation(name: str, token: str, params: tuple, _compute: Callable[[], object]):
    """Like :func:`by_evaluation` for tables and bytes (each session gets its own copy)."""
    return _compute()


# ----- the operator's query log (RAGDIAG_MONITOR_LOG) ----------------------------------------------

@st.cache_resource(max_entries=4, show_spinner=False)
def monitor_reading(path: str, size: int, mtime_ns: int, job: str, strategy: str, model: str | None,
                    _compute: Callable[[], object]):
    """The query log read and embedded once (a :class:`~ragdiag.analyses.monitor.MeasuredLog`, about 12 bytes a
    query), shared by every session.

    Keyed by the file (path, size, modification time), the shared job (``job``: its chunk vectors) and what the
    distance is measured with (the strategy's chunks, the gate's model): never by the cut, the keep, the
    configuration's retriever or the grouping, which :func:`~ragdiag.analyses.monitor.judge_log` applies to it
    in milliseconds. An edited log has another size or time, so it is read again.
    """
    return _compute()


# ----- a collection in another format (the operator's RAGDIAG_COLLECTION) ------------------------

@st.cache_resource(max_entries=2, show_spinner="Evaluating the collection…")
def collection_runs(spec: str, split: str, strategies: tuple[str, ...], retrievers: tuple[str, ...]):
    """The operator's collection (``RAGDIAG_COLLECTION``) evaluated once per process and settings.

    Returns ``(collection, runs)``; :class:`~ragdiag.documents.collections.CollectionError` when it cannot be read.
    """
    from ragdiag.documents.collections import open_collection
    from ragdiag.evaluation.collection import evaluate_collection

    collection = open_collection(spec, split=split, ood=os.environ.get("RAGDIAG_COLLECTION_OOD") or None)
    return collection, evaluate_collection(collection, encoder=encoder(), strategies=strategies,
                                           retrievers=retrievers, store=store(os.environ.get("RAGDIAG_CACHE")))
