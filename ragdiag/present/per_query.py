"""One row per (configuration, query): the records behind ``per_query.csv`` and ``per_query.parquet``.

A record carries the rank of :mod:`ragdiag.evaluation.evaluate`, the query's outcome
(:func:`ragdiag.analyses.outcomes.query_outcomes` at the gate's k, keep and cut) and the
funnel's stage ranks (:func:`ragdiag.analyses.funnel.stage_columns`); :mod:`ragdiag.present.export`
writes them.
"""

from __future__ import annotations

import numpy as np

from ..evaluation.records import Evaluation
from ..analyses.funnel import STAGE_COLUMNS, stage_columns
from ..core.metrics import reciprocal_rank
from ..analyses.gate_table import query_outcomes
from ..evaluation.rows import QueryRow

__all__ = ["PER_QUERY_COLUMNS", "per_query_records", "per_query_frame"]

#: The columns of ``per_query.csv`` / ``per_query.parquet``, in order.
PER_QUERY_COLUMNS = (
    "strategy", "retriever", "query_id", "question_id", "phrasing", "needle_rank",
    # the outcome ladder (ragdiag.analyses.outcomes) at the gate's k, keep and cut; the chunks the gate keeps there
    "outcome", "kept", "needle_distance", "top1_distance", "top1_chunk", "reciprocal_rank",
    # the funnel (ragdiag.analyses.funnel): ranks at each stage
    "dense_rank", "bm25_rank", "pool_rank", "final_rank",
)


def per_query_records(ev: Evaluation) -> list[QueryRow]:
    """One :class:`~ragdiag.evaluation.rows.QueryRow` per (configuration, query); ``needle_rank`` None when absent.

    ``outcome`` and ``kept`` come from :func:`ragdiag.analyses.outcomes.query_outcomes`
    at :data:`~ragdiag.core.defaults.PRIMARY_K`, :data:`~ragdiag.core.defaults.DEFAULT_KEEP`
    and :data:`~ragdiag.core.defaults.DEFAULT_CUT` (empty for external runs); the
    stage ranks from :func:`ragdiag.analyses.funnel.stage_columns` (answerable queries
    only; empty for ood queries and external runs).
    """
    stages = stage_columns(ev)
    out = []
    for cfg, res in ev.results.items():
        rr = reciprocal_rank(res.needle_rank)
        ladder = None if cfg.external else query_outcomes(ev, cfg)
        for i, q in enumerate(ev.queries):
            rank = int(res.needle_rank[i])
            nd = float(res.needle_distance[i])
            out.append(QueryRow(
                strategy=cfg.strategy,
                retriever=cfg.retriever,
                query_id=q.id,
                question_id=q.question_id or "",
                phrasing=q.phrasing,
                needle_rank=rank if rank > 0 else None,
                outcome=ladder[i].outcome if ladder else None,
                kept=ladder[i].kept if ladder else None,
                needle_distance=None if np.isnan(nd) else round(nd, 6),
                top1_distance=None if np.isnan(res.top1_distance[i]) else round(float(res.top1_distance[i]), 6),
                top1_chunk=ev.hit_label(cfg, int(res.top_order[i, 0])),
                reciprocal_rank=float(rr[i]) if q.in_domain else None,
                **stages.get((cfg.label, q.id), dict.fromkeys(STAGE_COLUMNS)),
            ))
    return out


def per_query_frame(ev: Evaluation):
    """:func:`per_query_records` as a pandas frame with :data:`PER_QUERY_COLUMNS` (ranks nullable integers)."""
    import pandas as pd

    df = pd.DataFrame([r.cells() for r in per_query_records(ev)], columns=list(PER_QUERY_COLUMNS))
    for col in ("needle_rank", "kept", "dense_rank", "bm25_rank", "pool_rank", "final_rank"):
        df[col] = df[col].astype("Int64")
    return df
