"""Frames the dashboard draws, shaped from library results (pandas; no streamlit).

Dashboard-only presentation: it lives under ``ui/``, outside the library.

Every number here is read from an :class:`~ragdiag.evaluation.evaluate.Evaluation`, from
the typed rows of :mod:`ragdiag.evaluation.rows` (:func:`~ragdiag.evaluation.rows.summary_rows`, ...),
:mod:`ragdiag.analyses.threshold` or :mod:`ragdiag.analyses.outcomes` (a query's outcome: the
ladder the sweep and the funnel count); these functions only reshape them into frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ragdiag.evaluation.records import Config, Evaluation
from ragdiag.evaluation.records import parse_key
from ragdiag.core.defaults import KS
from ragdiag.core.words import rate_text
from ragdiag.evaluation.rows import RateRow, SummaryRow
from ragdiag.analyses.threshold.gate import DistanceSamples, SweepTable

__all__ = [
    "filter_configs",
    "recall_table",
    "recall_long",
    "chunk_sizes",
    "size_summary",
    "truncated_chunks",
    "destroyed_frame",
    "Segment",
    "segments",
    "sweep_frame",
    "distance_frame",
    "distance_series",
    "under_cut_counts",
    "top_hits",
    "index_stamp_rows",
]

def filter_configs(labels: Iterable[str], strategies: Sequence[str] | None = None,
                   retrievers: Sequence[str] | None = None) -> list[str]:
    """Configuration labels whose strategy and retriever are both chosen (None: all)."""
    out = []
    for label in labels:
        cfg = parse_key(label)
        if (strategies is None or cfg.strategy in strategies) and (retrievers is None or cfg.retriever in retrievers):
            out.append(label)
    return out


def recall_table(rows: Sequence[SummaryRow], *, ks: Sequence[int] = KS) -> pd.DataFrame:
    """The recall table as shown: ``R@k`` cells are a rate as every surface writes one, ``"50% (15–85)"``.

    >>> from ragdiag.core.stats import Interval, wilson
    >>> row = SummaryRow("E/hybrid", "E", "hybrid", "all", 4, {1: wilson(2, 4)}, Interval(0.5, 0.2, 0.8, 0, 4),
    ...                  0, 9, 100, 0.1, 0, 0.0)
    >>> recall_table([row], ks=[1]).to_dict("records")
    [{'config': 'E/hybrid', 'queries': 4, 'R@1': '50% (15–85)', 'MRR': 0.5, 'destroyed': 0, 'chunks': 9}]
    """
    records = []
    for r in rows:
        rec = {"config": r.config, "queries": r.queries}
        for k in ks:
            rec[f"R@{k}"] = rate_text(r.recall[k])
        rec["MRR"] = r.mrr.estimate
        rec["destroyed"] = r.destroyed
        rec["chunks"] = r.chunks
        records.append(rec)
    columns = ["config", "queries", *(f"R@{k}" for k in ks), "MRR", "destroyed", "chunks"]
    return pd.DataFrame.from_records(records, columns=columns)


def recall_long(rows: Sequence[SummaryRow], *, ks: Sequence[int] = KS) -> pd.DataFrame:
    """One row per (configuration, k): recall with its Wilson bounds, for the chart."""
    records = [
        {"config": r.config, "k": k, "recall": r.recall[k].estimate, "low": r.recall[k].low,
         "high": r.recall[k].high, "hits": r.recall[k].successes, "queries": r.recall[k].trials}
        for r in rows for k in ks
    ]
    return pd.DataFrame.from_records(records, columns=["config", "k", "recall", "low", "high", "hits", "queries"])


def chunk_sizes(ev: Evaluation) -> pd.DataFrame:
    """One row per chunk of every strategy: characters, embedded tokens, characters past the window."""
    frames = []
    for name, idx in ev.indexes.items():
        audit = idx.report.audit
        frames.append(pd.DataFrame({
            "strategy": name,
            "chunk": [c.id for c in idx.chunks],
            "doc_id": [c.doc_id for c in idx.chunks],
            "section": [c.section for c in idx.chunks],
            "chars": [c.end - c.start for c in idx.chunks],
            "tokens": audit.tokens,
            "header_tokens": audit.header_tokens,
            "chars_lost": audit.chars_lost,
            "truncated": audit.tokens > audit.max_seq_length,
        }))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def size_summary(sizes: pd.DataFrame) -> pd.DataFrame:
    """Per strategy: min, quartiles and max of chunk characters."""
    g = sizes.groupby("strategy", sort=False)["chars"]
    return pd.DataFrame({
        "min": g.min(), "p25": g.quantile(0.25), "median": g.median(), "p75": g.quantile(0.75), "max": g.max(),
    }).reset_index()


def truncated_chunks(sizes: pd.DataFrame, strategy: str) -> pd.DataFrame:
    """The chunks of ``strategy`` longer than the encoder window, most characters lost first."""
    t = sizes[(sizes["strategy"] == strategy) & sizes["truncated"]]
    return t.sort_values(["chars_lost", "chunk"], ascending=[False, True])[
        ["chunk", "doc_id", "section", "chars", "tokens", "chars_lost"]].reset_index(drop=True)


def destroyed_frame(ev: Evaluation) -> pd.DataFrame:
    """Destroyed needles of every strategy: where the cuts fell inside them."""
    records = [
        {"strategy": name, "question_id": d.question_id, "doc_id": d.doc_id, "start": d.start, "end": d.end,
         "cuts": ", ".join(str(c) for c in d.cuts)}
        for name, idx in ev.indexes.items() for d in idx.report.destroyed
    ]
    return pd.DataFrame.from_records(records, columns=["strategy", "question_id", "doc_id", "start", "end", "cuts"])


@dataclass(frozen=True)
class Segment:
    """A run of text ``[start, end)`` with the same set of covering spans (their tags)."""

    start: int
    end: int
    tags: tuple[str, ...]


def segments(start: int, end: int, spans: Iterable[tuple[int, int, str]]) -> list[Segment]:
    """Cut ``[start, end)`` at every span boundary; each piece lists the spans covering it.

    Spans are clipped to ``[start, end)``; tags keep the order the spans were given.

    >>> [(s.start, s.end, s.tags) for s in segments(0, 10, [(2, 6, "a"), (4, 12, "b")])]
    [(0, 2, ()), (2, 4, ('a',)), (4, 6, ('a', 'b')), (6, 10, ('b',))]
    """
    clipped = [(max(s, start), min(e, end), t) for s, e, t in spans if s < end and e > start and s < e]
    points = sorted({start, end, *(s for s, _, _ in clipped), *(e for _, e, _ in clipped)})
    out = []
    for a, b in zip(points, points[1:]):
        tags = tuple(t for s, e, t in clipped if s <= a and b <= e)
        out.append(Segment(a, b, tags))
    return out


CURVE_OUTCOMES = {"answered": "answered", "wrong_sources": "given wrong passages", "no_answer": "refused",
                  "bluffs_near": "bluffs (near ood)", "bluffs_far": "bluffs (far ood)", "bluffs": "bluffs (all ood)"}


def sweep_frame(table: SweepTable, rates: Sequence[RateRow] | None = None) -> pd.DataFrame:
    """The sweep in long form for the trade-off curve: cut, outcome, queries, and (with ``rates``,
    :func:`ragdiag.analyses.threshold.rate_rows` over the same cuts) the rate with its 95% band."""
    series = {"answered": table.answered, "wrong_sources": table.wrong_sources, "no_answer": table.no_answer,
              "bluffs": table.bluffs, **{f"bluffs_{k}": v for k, v in table.bluffs_by_kind.items()}}
    frames = []
    for key, values in series.items():
        if key not in CURVE_OUTCOMES:
            continue
        df = pd.DataFrame({"cut": table.cuts, "outcome": CURVE_OUTCOMES[key], "queries": values})
        if rates is not None:
            cells = [r.outcome(key) for r in rates]
            df["rate"] = [c.rate for c in cells]
            df["low"] = [c.low for c in cells]
            df["high"] = [c.high for c in cells]
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def distance_series(keep: int) -> dict[str, str]:
    """Series names of the histogram (the gate's own values), by :class:`DistanceSamples` key."""
    return {"answer": f"answerable: closest of the top {keep} holding the answer",
            "kept": f"answerable: closest of the top {keep}",
            "near": f"out-of-domain (near): closest of the top {keep}",
            "far": f"out-of-domain (far): closest of the top {keep}",
            "ood": f"out-of-domain: closest of the top {keep}"}


def distance_frame(samples: DistanceSamples, *, keep: int) -> pd.DataFrame:
    """The gate's per-query values in long form: series, key, distance (every value the gate compares with the cut)."""
    names = distance_series(keep)
    parts = {"answer": samples.answer, "kept": samples.kept, **samples.ood}
    return pd.concat([pd.DataFrame({"series": names.get(k, f"out-of-domain ({k}): closest of the top {keep}"),
                                    "key": k, "distance": np.asarray(v, dtype=float)}) for k, v in parts.items()],
                     ignore_index=True)


def under_cut_counts(frame: pd.DataFrame, cut: float) -> dict[str, int]:
    """Per histogram key, the values strictly under ``cut`` (what the gate keeps)."""
    from ragdiag.core.gate import under_each

    return {k: int(under_each(g["distance"].to_numpy(dtype=float), cut).sum()) for k, g in frame.groupby("key", sort=False)}


def top_hits(ev: Evaluation, config: Config | str, query_index: int, *, n: int = 10) -> pd.DataFrame:
    """The top ``n`` chunks one configuration returned for a query, with scores and distances."""
    res = ev.result(config)
    chunks = ev.indexes[res.config.strategy].chunks
    records = []
    for r in range(min(n, res.top_order.shape[1])):
        c = chunks[int(res.top_order[query_index, r])]
        records.append({
            "rank": r + 1, "chunk": c.id, "doc_id": c.doc_id, "section": c.section or "(preamble)",
            "score": float(res.top_scores[query_index, r]), "distance": float(res.top_distance[query_index, r]),
            "holds needle": bool(res.top_holds[query_index, r]), "position": int(res.top_order[query_index, r]),
        })
    return pd.DataFrame.from_records(records, columns=["rank", "chunk", "doc_id", "section", "score", "distance",
                                                       "holds needle", "position"])


def index_stamp_rows(ev: Evaluation, recorded: Sequence = ()) -> pd.DataFrame:
    """The stamp of each strategy's index (model, pipeline, extractors, corpus, chunking).

    Built the way :func:`ragdiag.index.store.record_evaluation` writes it; when the
    store's catalogue (``recorded``, :class:`~ragdiag.index.store.IndexStamp` rows)
    holds the same index, its chunk count and creation time are shown.
    """
    from ragdiag.index.store.stamps import evaluation_stamps

    enc = dict(ev.encoder_stamp or {})
    stamps = evaluation_stamps(ev)
    if not stamps:
        return pd.DataFrame()
    by_key = {r.key: r for r in recorded}
    records = []
    for name, idx in ev.indexes.items():
        stamp = stamps[name]
        stored = by_key.get(stamp.key)
        records.append({
            "strategy": name, "model": stamp.model, "weights": stamp.weights_sha256[:12], "dim": stamp.dim,
            "window": stamp.max_seq_length, "precision": stamp.precision, "pipeline": stamp.pipeline_version,
            "extractors": ", ".join(stamp.extractor_versions), "corpus sha256": stamp.corpus_sha256[:12],
            "chunks": len(idx.chunks), "vectors computed now": idx.embedded,
            "device": enc.get("device_layout") or enc.get("device") or "",
            "stored chunks": stored.n_chunks if stored else None, "recorded": stored.created if stored else "",
            "max |L2²/2 − cos|": f"{idx.normalisation_error:.1e}",
        })
    df = pd.DataFrame.from_records(records)
    df["stored chunks"] = df["stored chunks"].astype("Int64")
    return df
