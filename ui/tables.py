"""Tables as people read them, in the one grammar of :mod:`ui.fmt`: rates as ``55% (42–67)``, counts in their own
column, the unit in every header, a dash for nothing, no constant column, sorted by the primary measure."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ragdiag.analyses.funnel import STAGES
from ragdiag.evaluation.rows import SummaryRow
from ui.fmt import DASH, drop_constant, rate

__all__ = ["recall_view", "funnel_view"]


def recall_view(rows: Sequence[SummaryRow], *, ks: Sequence[int], primary: int) -> tuple[pd.DataFrame, dict]:
    """The recall table sorted by R@``primary`` (best first), and the constant columns dropped from it.

    ``destroyed`` counts questions (a needle no chunk holds), ``found`` queries.
    """
    records = []
    for r in sorted(rows, key=lambda r: (-r.recall[primary].estimate, -r.mrr.estimate, r.config)):
        rec = {"configuration": r.config, "queries": r.queries}
        for k in ks:
            rec[f"R@{k} (share of queries)"] = rate(r.recall[k])
        rec[f"found at {primary} (queries)"] = r.recall[primary].successes
        rec["MRR"] = f"{r.mrr.estimate:.3f}"
        rec["destroyed (questions)"] = DASH if r.destroyed is None else r.destroyed
        rec["chunks"] = DASH if r.chunks is None else r.chunks
        records.append(rec)
    return drop_constant(pd.DataFrame.from_records(records), keep=["configuration"])


def funnel_view(funnel_rows: Sequence[dict]) -> tuple[pd.DataFrame, dict]:
    """Per configuration, answerable queries per first stage lost (queries), sorted by answered."""
    records = []
    for row in sorted(funnel_rows, key=lambda r: (-r.get("answered", 0), r["config"])):
        rec = {"configuration": row["config"], "answerable (queries)": row["queries"]}
        rec.update({f"{s} (queries)": row.get(s, 0) for s in STAGES})
        if row.get("promoted") is not None:
            rec["promoted by the reranker (queries)"] = row["promoted"]
            rec["demoted (queries)"] = row["demoted"]
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    return drop_constant(df.astype(object).where(df.notna(), DASH), keep=["configuration"])
