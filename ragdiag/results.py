"""Tables made from an :class:`~ragdiag.evaluate.Evaluation`: per-query records, chunking rows, the recall table.

The CLI, the dashboard and the reports all read these, so a number is
computed in one place only. Comparisons live in :mod:`ragdiag.compare`, the
sweep in :mod:`ragdiag.threshold`, files in :mod:`ragdiag.export`; their names
are re-exported here so ``from ragdiag.results import X`` keeps working.
"""

from __future__ import annotations

import numpy as np

from .compare import FAMILIES, Comparison, check_phrasing, compare, compare_in_family, family, family_rows, pairwise
from .evaluate import Evaluation
from .export import per_query_parquet, summary_document, summary_json, write_outputs  # noqa: F401
from .metrics import KS, reciprocal_rank
from .rows import ChunkingRow, QueryRow, interval_cells, summary_rows
from .tables import format_rows  # noqa: F401 - the one text-table formatter, re-exported
from .threshold import MAX_SWEEP_ROWS, check_cuts, gate_inputs_for, sweep_cuts, sweep_table

__all__ = [
    "PER_QUERY_COLUMNS",
    "per_query_records",
    "per_query_frame",
    "chunking_rows",
    "format_rows",
    "format_summary",
    # re-exported from ragdiag.compare, ragdiag.threshold, ragdiag.export and ragdiag.rows
    "summary_document",
    "summary_json",
    "per_query_parquet",
    "write_outputs",
    "compare",
    "Comparison",
    "check_phrasing",
    "family",
    "compare_in_family",
    "FAMILIES",
    "family_rows",
    "pairwise",
    "sweep_table",
    "gate_inputs_for",
    "check_cuts",
    "sweep_cuts",
    "MAX_SWEEP_ROWS",
    "summary_rows",
    "interval_cells",
]

#: The columns of ``per_query.csv`` / ``per_query.parquet``, in order.
PER_QUERY_COLUMNS = (
    "strategy", "retriever", "query_id", "question_id", "phrasing", "needle_rank",
    # the outcome ladder (ragdiag.outcomes) at the gate's k, keep and cut; the chunks the gate keeps there
    "outcome", "kept", "needle_distance", "top1_distance", "top1_chunk", "reciprocal_rank",
    # the funnel (ragdiag.funnel): ranks at each stage
    "dense_rank", "bm25_rank", "pool_rank", "final_rank",
)


def per_query_records(ev: Evaluation) -> list[QueryRow]:
    """One :class:`~ragdiag.rows.QueryRow` per (configuration, query); ``needle_rank`` None when absent.

    ``outcome`` and ``kept`` come from :func:`ragdiag.outcomes.query_outcomes`
    at :data:`~ragdiag.defaults.PRIMARY_K`, :data:`~ragdiag.defaults.DEFAULT_KEEP`
    and :data:`~ragdiag.defaults.DEFAULT_CUT` (empty for external runs); the
    stage ranks from :func:`ragdiag.funnel.stage_columns` (answerable queries
    only; empty for ood queries and external runs).
    """
    from .funnel import STAGE_COLUMNS, stage_columns
    from .outcomes import query_outcomes

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


def chunking_rows(ev: Evaluation) -> list[ChunkingRow]:
    """One :class:`~ragdiag.rows.ChunkingRow` per evaluated strategy (its chunk report's line)."""
    return [ChunkingRow(**idx.report.row()) for idx in ev.indexes.values()]


def format_summary(ev: Evaluation, *, phrasing: str = "all") -> str:
    """The recall table as printed by ``eval``: R@k with 95% intervals, MRR and the chunking audit."""
    rows = []
    for r in summary_rows(ev, phrasing=phrasing):
        row = {"config": r.config}
        for k in KS:
            iv = r.recall[k]
            row[f"R@{k} [95% CI]"] = f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
        row["MRR"] = r.mrr.estimate
        row["destroyed"] = r.destroyed
        row["chunks"] = r.chunks
        row["emb.tokens"] = r.embedded_tokens
        row["header%"] = "" if r.header_share is None else f"{100 * r.header_share:.1f}"
        row["truncated"] = r.truncated
        rows.append(row)
    return format_rows(rows)
