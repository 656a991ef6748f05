"""Frames the funnel, hubs, granularity and cost views draw (pandas; no streamlit).

Dashboard-only presentation: it lives under ``ui/``, outside the library.

Every number is read from :mod:`ragdiag.analyses.funnel`, :mod:`ragdiag.analyses.hubs`,
:mod:`ragdiag.analyses.granular` and :mod:`ragdiag.analyses.cost`; these only reshape.
Links to the inspector are relative page URLs with the inspector's URL
parameters (``q``, ``config``, ``stage``).
"""

from __future__ import annotations

from typing import Mapping, Sequence
from urllib.parse import urlencode

import pandas as pd

from ragdiag.analyses.funnel import Funnel, funnel_long; from ragdiag.analyses.outcomes import LADDER as STAGES

__all__ = ["inspector_url", "funnel_frame", "stage_queries_frame", "hub_frame", "granular_frame",
           "cost_frame"]

INSPECTOR = "inspector"


def inspector_url(**params) -> str:
    """A relative link to the inspector page with its URL parameters.

    >>> inspector_url(config="E/hybrid", stage="ranked-low")
    'inspector?config=E%2Fhybrid&stage=ranked-low'
    """
    return f"{INSPECTOR}?{urlencode({k: v for k, v in params.items() if v is not None})}"


def funnel_frame(items: Sequence[Funnel], link: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per (configuration, stage): queries, share, 95% clustered Wilson bounds over questions, and the link to
    them (carrying ``link``: the page's context, so the Inspector opens at the same cut, keep and goal)."""
    df = pd.DataFrame(funnel_long(items), columns=["config", "stage", "queries", "of", "share", "low", "high"])
    df["low_count"] = df["low"] * df["of"]
    df["high_count"] = df["high"] * df["of"]
    df["link"] = [inspector_url(**{**(link or {}), "config": c, "stage": s}) for c, s in zip(df["config"], df["stage"])]
    return df


def stage_queries_frame(items: Sequence[Funnel], ev, stage: str, link: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The queries of one stage under every configuration, each with its inspector link (carrying ``link``)."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(STAGES)}")
    texts = {q.id: q.text for q in ev.queries}
    records = [
        {"config": f.config.label, "query_id": r.query_id, "text": texts[r.query_id], "rerank": r.rerank,
         "dense_rank": r.dense_rank, "bm25_rank": r.bm25_rank, "pool_rank": r.pool_rank,
         "final_rank": r.final_rank, "detail": r.detail,
         "inspect": inspector_url(**{**(link or {}), "q": r.query_id, "config": f.config.label})}
        for f in items for r in f.rows if r.stage == stage
    ]
    cols = ["config", "query_id", "text", "rerank", "dense_rank", "bm25_rank", "pool_rank", "final_rank", "detail",
            "inspect"]
    df = pd.DataFrame.from_records(records, columns=cols)
    for c in ("dense_rank", "bm25_rank", "pool_rank", "final_rank"):
        df[c] = df[c].astype("Int64")
    return df


def hub_frame(items) -> pd.DataFrame:
    """The hub table: one row per :class:`~ragdiag.analyses.hubs.Hub`, columns in display order."""
    from ragdiag.analyses.hubs import hub_rows

    cols = ["config", "chunk", "doc_id", "section", "occurrences", "questions", "expected", "ratio", "hub",
            "boilerplate", "holds needle of", "displaced", "displaced queries", "preview"]
    return pd.DataFrame.from_records(hub_rows(items), columns=cols)


def granular_frame(rows: Sequence[dict], ks: Sequence[int]) -> pd.DataFrame:
    """:func:`ragdiag.analyses.granular.granular_rows` as shown: one row per (configuration, level), ``R@k`` interval text."""
    from ui.fmt import rate

    cols = ["configuration", "level", "queries", *(f"R@{k} (share of queries)" for k in ks)]
    return pd.DataFrame.from_records(
        [{"configuration": r.config, "level": r.level, "queries": r.queries,
          **{f"R@{k} (share of queries)": rate(r.recall[k]) for k in ks}} for r in rows], columns=cols)


def cost_frame(items) -> pd.DataFrame:
    """:func:`ragdiag.analyses.cost.costs` rows with recall split into estimate and bounds (for the chart)."""
    records = []
    for r in items:
        records.append({"config": r.config, f"R@{r.k}": r.recall.estimate, "low": r.recall.low,
                        "high": r.recall.high, "ms/query median": r.latency_median_ms,
                        "ms/query p95": r.latency_p95_ms, "timed queries": r.latency_queries,
                        "build s": r.build_s, "build basis": r.build_basis, "embedded tokens": r.embedded_tokens,
                        "prompt tokens/query": r.prompt_tokens, "Pareto (latency)": r.pareto_latency,
                        "Pareto (prompt)": r.pareto_prompt})
    return pd.DataFrame.from_records(records)
