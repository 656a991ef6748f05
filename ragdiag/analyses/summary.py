"""The recall table: one row per configuration, recall and MRR over questions, the chunking audit beside it.

:func:`summary_rows` is what ``eval`` prints (:func:`format_summary`), the
dashboard's Overview shows and ``summary.json`` holds; :func:`chunking_rows` is
one line per strategy of the chunking audit.
"""

from __future__ import annotations

from typing import Sequence

from .compare.intervals import clustered_mean, clustered_rate
from ..core.defaults import KS
from ..evaluation.records import Evaluation
from ..core.metrics import hits_at_k, reciprocal_rank
from ..evaluation.rows import ChunkingRow, SummaryRow
from ..core.tables import format_rows

__all__ = ["summary_rows", "format_summary", "chunking_rows"]


def summary_rows(ev: Evaluation, *, phrasing: str = "all", ks: Sequence[int] = KS) -> list[SummaryRow]:
    """The study-style table: one :class:`SummaryRow` per configuration, recall over questions.

    Recall at each k comes from :func:`~ragdiag.analyses.compare.intervals.clustered_rate` over questions
    (questions are the unit: phrasings correlate); MRR from
    :func:`ragdiag.analyses.compare.clustered_mean`.
    """
    mask = ev.mask(phrasing)
    groups = ev.groups(mask)
    rows = []
    for cfg, res in ev.results.items():
        ranks = res.needle_rank[mask]
        index = ev.indexes.get(cfg.strategy)
        recall = {k: clustered_rate(hits_at_k(ranks, k), groups) for k in ks}
        mrr = clustered_mean(reciprocal_rank(ranks), groups)
        if index is not None:
            audit = index.report.audit
            audit_cells = (len(index.report.destroyed), len(index.chunks), audit.total_tokens, audit.header_share,
                           audit.truncated)
        else:  # an external run: its chunking is not ours to audit
            audit_cells = (None,) * 5
        rows.append(SummaryRow(cfg.label, cfg.strategy, cfg.retriever, phrasing, int(mask.sum()), recall, mrr,
                               *audit_cells, res.seconds))
    return rows


def chunking_rows(ev: Evaluation) -> list[ChunkingRow]:
    """One :class:`~ragdiag.evaluation.rows.ChunkingRow` per evaluated strategy (its chunk report's line)."""
    return [ChunkingRow(**idx.report.row()) for idx in ev.indexes.values()]


def format_summary(ev: Evaluation, *, phrasing: str = "all") -> str:
    """The recall table as printed by ``eval``: R@k with 95% intervals, MRR and the chunking audit."""
    rows = []
    for r in summary_rows(ev, phrasing=phrasing):
        row = {"config": r.config}
        for k in KS:
            iv = r.recall[k]
            row[f"R@{k} (95% interval)"] = str(iv)
        row["MRR"] = r.mrr.estimate
        row["destroyed"] = r.destroyed
        row["chunks"] = r.chunks
        row["emb.tokens"] = r.embedded_tokens
        row["header%"] = "" if r.header_share is None else f"{100 * r.header_share:.1f}"
        row["truncated"] = r.truncated
        rows.append(row)
    return format_rows(rows)
