"""Tables as people read them, in the one grammar of :mod:`ui.fmt`: rates as ``55% (42–67)``, counts in their own
column, the unit in every header, a dash for nothing, no constant column, sorted by the primary measure."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ragdiag.analyses.outcomes import LADDER as STAGES
from ragdiag.core.words import RUNG_WORDS
from ragdiag.evaluation.rows import SummaryRow
from ui.fmt import DASH, dash_missing, drop_constant, pct, rate

__all__ = ["recall_view", "funnel_view", "chunking_view", "sizes_view", "destroyed_view", "truncated_view",
           "documents_view", "ranks_view", "gate_view"]


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
        rec.update({f"{RUNG_WORDS.get(s, s)} (queries)": row.get(s, 0) for s in STAGES})  # one name per rung
        if row.get("promoted") is not None:
            rec["promoted by the reranker (queries)"] = row["promoted"]
            rec["demoted (queries)"] = row["demoted"]
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    return drop_constant(df.astype(object).where(df.notna(), DASH), keep=["configuration"])


def chunking_view(rows: Sequence) -> tuple[pd.DataFrame, dict]:
    """Per strategy (:class:`~ragdiag.evaluation.rows.ChunkingRow`): what it costs and destroys, fewest destroyed
    needles first (then fewest embedded wordpieces); constant columns dropped (``strategy`` always kept)."""
    records = [{
        "strategy": r.strategy, "how it cuts": r.description,
        "destroyed needles (questions)": r.destroyed, "chunks": r.chunks,
        "mean size (characters)": round(r.mean_chars),
        "embedded (wordpieces)": r.embedded_tokens, "per chunk (wordpieces)": round(r.tokens_per_chunk),
        "headers (% of wordpieces)": pct(r.header_share),
        "truncated (chunks)": r.truncated, "never embedded (characters)": r.chars_lost,
    } for r in sorted(rows, key=lambda r: (r.destroyed, r.embedded_tokens, r.strategy))]
    return drop_constant(dash_missing(pd.DataFrame.from_records(records)), keep=["strategy"])


def sizes_view(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`ui.frames.size_summary` with its unit in every header, smallest median first."""
    df = summary.sort_values(["median", "strategy"]).rename(columns={
        "min": "min (characters)", "p25": "25th percentile (characters)", "median": "median (characters)",
        "p75": "75th percentile (characters)", "max": "max (characters)"})
    return df.round(0).astype({c: int for c in df.columns if c != "strategy"}).reset_index(drop=True)


def destroyed_view(destroyed: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """:func:`ui.frames.destroyed_frame` in plain headers (offsets are characters of the canonical text)."""
    df = destroyed.sort_values(["strategy", "doc_id", "question_id"]).rename(columns={
        "question_id": "question", "doc_id": "document", "start": "needle start (character)",
        "end": "needle end (character)", "cuts": "cut at (character)"})
    return drop_constant(df.reset_index(drop=True), keep=["question"])


def truncated_view(trunc: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """:func:`ui.frames.truncated_chunks` in plain headers, most characters lost first."""
    df = trunc.rename(columns={"doc_id": "document", "chars": "size (characters)",
                               "tokens": "embedded (wordpieces)", "chars_lost": "never embedded (characters)"})
    return drop_constant(dash_missing(df), keep=["chunk"])


#: Failures first: they are what the Documents page is read for.
_STATUS_ORDER = {"failed": 0, "warning": 1, "ok": 2}


def documents_view(rows: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Ingest rows (``path, id, type, pages, characters, sections, status, reason``) in plain headers: failed files
    first, then warnings, then by path; a dash for nothing; constant columns dropped (``file`` and ``status`` kept)."""
    df = rows.assign(_order=rows["status"].map(_STATUS_ORDER).fillna(3)).sort_values(["_order", "path"])
    df = df.drop(columns="_order").rename(columns={
        "path": "file", "id": "document", "characters": "size (characters)"}).replace("", None).astype(object)
    for c in ("pages", "size (characters)", "sections"):  # counts, not floats: a file without pages has a dash
        if c in df.columns:
            df[c] = pd.Series([None if pd.isna(v) else int(v) for v in df[c]], index=df.index, dtype=object)
    return drop_constant(dash_missing(df.reset_index(drop=True)), keep=["file", "status"])


def ranks_view(queries: Sequence[str], phrasings: Sequence[str], ranks: Sequence, diagnoses: Sequence[str]
               ) -> tuple[pd.DataFrame, dict]:
    """Per answerable query: the needle's rank (a dash when not retrieved) and the diagnosis; best rank first."""
    rank = "needle rank (position)"
    records = [{"query": q, "phrasing": p, rank: int(r) if r else DASH, "diagnosis": d}
               for q, p, r, d in zip(queries, phrasings, ranks, diagnoses) if p != "ood"]
    records.sort(key=lambda r: (r[rank] == DASH, 0 if r[rank] == DASH else r[rank], r["query"]))
    df = pd.DataFrame.from_records(records, columns=["query", "phrasing", "needle rank (position)", "diagnosis"])
    return drop_constant(dash_missing(df), keep=["query"])


def gate_view(rates, counts) -> pd.DataFrame:
    """The gate's outcomes at one cut: queries, of how many, and the share with its 95% interval.

    ``rates``: a :class:`~ragdiag.evaluation.rows.RateRow`; ``counts``: the
    :class:`~ragdiag.evaluation.rows.SweepRow` at the same cut (the denominators).
    Outcomes over no query are left out.
    """
    n_in = counts.answered + counts.wrong_sources + counts.no_answer
    n_ood = counts.bluffs + counts.abstained
    labels = {"answered": ("answered", n_in), "wrong_sources": ("sources, none holding the answer", n_in),
              "no_answer": ("NO ANSWER (nothing under the cut)", n_in), "bluffs": ("bluffs (off-topic)", n_ood)}
    return pd.DataFrame.from_records([
        {"outcome": name, "queries": rates.outcome(key).count, "of (queries)": n,
         "share (95% interval)": rate(rates.outcome(key))} for key, (name, n) in labels.items() if n],
        columns=["outcome", "queries", "of (queries)", "share (95% interval)"])
