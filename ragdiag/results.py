"""Tables and files made from an :class:`~ragdiag.evaluate.Evaluation`.

The CLI, the dashboard and the reports all read these, so a number is
computed in one place only.
"""

from __future__ import annotations

import itertools
import json
import platform
from typing import Sequence

import numpy as np

from . import PIPELINE_VERSION, __version__
from .evaluate import Config, Evaluation, interval_cells, summary_rows
from .metrics import KS, hits_at_k, reciprocal_rank
from .stats import SignTest, holm, sign_test
from .threshold import DEFAULT_KEEP, gate_inputs, sweep

__all__ = [
    "PER_QUERY_COLUMNS",
    "per_query_records",
    "per_query_frame",
    "summary_document",
    "format_summary",
    "compare",
    "Comparison",
    "pairwise",
    "sweep_table",
    "format_rows",
    "chunking_rows",
]

PER_QUERY_COLUMNS = (
    "strategy", "retriever", "query_id", "question_id", "phrasing", "needle_rank",
    "diagnosis", "needle_distance", "top1_distance", "top1_chunk", "reciprocal_rank",
    # the funnel (ragdiag.funnel): first stage lost at the primary k and default gate, ranks at each stage
    "stage", "dense_rank", "bm25_rank", "pool_rank", "final_rank",
)


def per_query_records(ev: Evaluation) -> list[dict]:
    """One record per (configuration, query); ``needle_rank`` None when absent.

    ``stage`` and the stage ranks come from :func:`ragdiag.funnel.stage_columns`
    (answerable queries only; empty for ood queries and external runs).
    """
    from .funnel import STAGE_COLUMNS, stage_columns

    stages = stage_columns(ev)
    out = []
    for cfg, res in ev.results.items():
        rr = reciprocal_rank(res.needle_rank)
        for i, q in enumerate(ev.queries):
            rank = int(res.needle_rank[i])
            nd = float(res.needle_distance[i])
            out.append({
                "strategy": cfg.strategy,
                "retriever": cfg.retriever,
                "query_id": q.id,
                "question_id": q.question_id or "",
                "phrasing": q.phrasing,
                "needle_rank": rank if rank > 0 else None,
                "diagnosis": res.diagnosis[i],
                "needle_distance": None if np.isnan(nd) else round(nd, 6),
                "top1_distance": None if np.isnan(res.top1_distance[i]) else round(float(res.top1_distance[i]), 6),
                "top1_chunk": ev.hit_label(cfg, int(res.top_order[i, 0])),
                "reciprocal_rank": float(rr[i]) if q.in_domain else None,
                **stages.get((cfg.label, q.id), dict.fromkeys(STAGE_COLUMNS)),
            })
    return out


def per_query_frame(ev: Evaluation):
    import pandas as pd

    df = pd.DataFrame(per_query_records(ev), columns=list(PER_QUERY_COLUMNS))
    for col in ("needle_rank", "dense_rank", "bm25_rank", "pool_rank", "final_rank"):
        df[col] = df[col].astype("Int64")
    return df


def chunking_rows(ev: Evaluation) -> list[dict]:
    return [idx.report.row() for idx in ev.indexes.values()]


def summary_document(ev: Evaluation) -> dict:
    """What ``summary.json`` holds: the tables plus provenance stamps."""
    from importlib.metadata import PackageNotFoundError, version

    def v(dist: str) -> str | None:
        try:
            return version(dist)
        except PackageNotFoundError:
            return None

    tables = {p: [interval_cells(r) for r in summary_rows(ev, phrasing=p)] for p in ("all", *ev.truth.phrasings)}
    return {
        "ragdiag_version": __version__,
        "pipeline_version": PIPELINE_VERSION,
        "model": ev.encoder_stamp,
        "versions": {
            "python": platform.python_version(),
            "torch": v("torch"),
            "transformers": v("transformers"),
            "sentence_transformers": v("sentence-transformers"),
            "numpy": np.__version__,
        },
        "corpus": {
            "root": ev.corpus.name or ev.corpus.root,
            "sha256": ev.corpus.sha256,
            "documents": len(ev.corpus.documents),
            "characters": ev.corpus.n_chars,
            "sections": ev.corpus.n_sections,
            "failures": [{"path": f.path, "reason": f.reason} for f in ev.corpus.failures],
        },
        "truth": {
            "source": ev.truth.source,
            "questions": len(ev.truth.questions),
            "in_domain_queries": int(ev.in_domain.sum()),
            "ood_queries": int((~ev.in_domain).sum()),
        },
        "diagnosis_k": ev.diagnosis_k,
        "summary": tables["all"],
        "by_phrasing": {p: t for p, t in tables.items() if p != "all"},
        "chunking": chunking_rows(ev),
        "destroyed": {
            name: [{"question_id": d.question_id, "doc_id": d.doc_id, "start": d.start, "end": d.end,
                    "cuts": list(d.cuts)} for d in idx.report.destroyed]
            for name, idx in ev.indexes.items()
        },
        "normalisation_error": {name: idx.normalisation_error for name, idx in ev.indexes.items()},
        "unavailable": ev.unavailable,
        "retriever_stamps": ev.retriever_stamps,
        "timings_s": {k: round(v, 3) for k, v in ev.timings.items()},
    }


def format_rows(rows: Sequence[dict], columns: Sequence[str] | None = None) -> str:
    """A plain aligned text table."""
    if not rows:
        return "(no rows)"
    columns = list(columns or rows[0].keys())
    cells = [[_fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    line = lambda vals: "  ".join(v.rjust(w) if _numeric(v) else v.ljust(w) for v, w in zip(vals, widths))  # noqa: E731
    return "\n".join([line(columns), "  ".join("-" * w for w in widths), *(line(r) for r in cells)])


def _numeric(v: str) -> bool:
    return bool(v) and (v[0].isdigit() or v[0] in "-+.") and "/" not in v


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "nan" if np.isnan(v) else f"{v:.3f}"
    return str(v)


def format_summary(ev: Evaluation, *, phrasing: str = "all") -> str:
    rows = []
    for r in summary_rows(ev, phrasing=phrasing):
        row = {"config": r["config"]}
        for k in KS:
            iv = r[f"R@{k}"]
            row[f"R@{k} [95% CI]"] = f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
        row["MRR"] = r["MRR"]
        row["destroyed"] = r["destroyed"]
        row["chunks"] = r["chunks"]
        row["emb.tokens"] = r["embedded_tokens"]
        row["header%"] = "" if r["header_share"] is None else f"{100 * r['header_share']:.1f}"
        row["truncated"] = r["truncated"]
        rows.append(row)
    return format_rows(rows)


class Comparison:
    """Paired comparison of two configurations on the same in-domain queries."""

    def __init__(self, a: Config, b: Config, k: int, test: SignTest, wins: list[str], losses: list[str]):
        self.a, self.b, self.k, self.test = a, b, k, test
        self.wins, self.losses = wins, losses

    def summary(self, phrasing: str = "all") -> str:
        """One line: the counts and the exact two-sided sign test p."""
        t = self.test
        return (f"{self.a.label} vs {self.b.label} at R@{self.k} ({phrasing}): wins {t.wins}, losses {t.losses}, "
                f"ties {t.ties}, exact two-sided sign test p = {t.p:.4g}")

    @property
    def verdict(self) -> str:
        t = self.test
        if t.p >= 0.05:
            return (f"{self.a.label} and {self.b.label} are indistinguishable at R@{self.k} on these "
                    f"{t.wins + t.losses + t.ties} queries (+{t.wins}/-{t.losses}, p = {t.p:.3g}).")
        better, worse = (self.a, self.b) if t.wins > t.losses else (self.b, self.a)
        return (f"{better.label} beats {worse.label} at R@{self.k} (+{max(t.wins, t.losses)}/"
                f"-{min(t.wins, t.losses)}, exact sign test p = {t.p:.3g}).")


def compare(ev: Evaluation, a: Config | str, b: Config | str, *, k: int = 20, phrasing: str = "all") -> Comparison:
    """Wins/losses/ties of ``a`` against ``b`` at R@k, exact two-sided sign test."""
    ra, rb = ev.result(a), ev.result(b)
    mask = ev.mask(phrasing)
    ha, hb = hits_at_k(ra.needle_rank, k), hits_at_k(rb.needle_rank, k)
    ids = [q.id for q in ev.queries]
    wins = [ids[i] for i in np.flatnonzero(mask & ha & ~hb)]
    losses = [ids[i] for i in np.flatnonzero(mask & ~ha & hb)]
    return Comparison(ra.config, rb.config, k, sign_test(ha[mask], hb[mask]), wins, losses)


def pairwise(ev: Evaluation, *, k: int = 20, phrasing: str = "all", configs: Sequence[Config] | None = None) -> list[dict]:
    """Every pair of configurations, with Holm-corrected p over the whole family."""
    configs = list(configs or ev.results)
    pairs = list(itertools.combinations(configs, 2))
    comps = [compare(ev, a, b, k=k, phrasing=phrasing) for a, b in pairs]
    adjusted = holm([c.test.p for c in comps]) if comps else []
    return [
        {"a": c.a.label, "b": c.b.label, "wins": c.test.wins, "losses": c.test.losses, "ties": c.test.ties,
         "p": c.test.p, "p_holm": float(p)}
        for c, p in zip(comps, adjusted)
    ]


def sweep_table(ev: Evaluation, config: Config | str, *, keep: int = DEFAULT_KEEP, cuts=None):
    res = ev.result(config)
    if res.config.external and not ev.external[res.config.retriever].distances:
        raise ValueError(f"{res.config.label} has no distances: the sweep needs hit scores that are cosine "
                         "distances (eval-run --distances)")
    return sweep(gate_inputs(res, [q.id for q in ev.queries], ev.in_domain, keep=keep), cuts)


def summary_json(ev: Evaluation) -> str:
    return json.dumps(summary_document(ev), indent=2, default=_json_default) + "\n"


def per_query_parquet(ev: Evaluation) -> bytes:
    """``per_query`` as Parquet bytes (typed columns: ranks stay integers with nulls)."""
    import io

    buf = io.BytesIO()
    per_query_frame(ev).to_parquet(buf, index=False)
    return buf.getvalue()


def write_outputs(ev: Evaluation, out_dir, *, trec: bool = True) -> list[str]:
    """Write ``summary.json``, ``per_query.csv``, ``per_query.parquet`` and (``trec``) TREC runs/qrels.

    TREC files go to ``out_dir/trec/``: ``<strategy>_<retriever>.run`` and
    ``<strategy>.qrels``, loadable by ranx and pytrec_eval.
    """
    from pathlib import Path

    from .export import write_trec

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = out / "summary.json"
    summary.write_text(summary_json(ev), encoding="utf-8")
    per_query = out / "per_query.csv"
    per_query_frame(ev).to_csv(per_query, index=False)
    parquet = out / "per_query.parquet"
    parquet.write_bytes(per_query_parquet(ev))
    paths = [str(summary), str(per_query), str(parquet)]
    if trec and ev.indexes:
        paths += write_trec(ev, out / "trec")
    return paths


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
