"""Tables and files made from an :class:`~ragdiag.evaluate.Evaluation`.

The CLI, the dashboard and the reports all read these, so a number is
computed in one place only.
"""

from __future__ import annotations

import itertools
import json
import platform
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from . import PIPELINE_VERSION, __version__
from .evaluate import Config, Evaluation, interval_cells, summary_rows
from .metrics import KS, hits_at_k, reciprocal_rank
from .compare import QuestionTest, paired_test, power_words, question_differences, verdict
from .defaults import PRIMARY_K
from .stats import holm
from .tables import format_rows  # noqa: F401 - the one text-table formatter, re-exported
from .threshold import DEFAULT_KEEP, MAX_DISTANCE, GateInputs, gate_inputs, sweep

__all__ = [
    "PER_QUERY_COLUMNS",
    "per_query_records",
    "per_query_frame",
    "summary_document",
    "format_summary",
    "compare",
    "Comparison",
    "check_phrasing",
    "family",
    "compare_in_family",
    "family_rows",
    "pairwise",
    "sweep_table",
    "gate_inputs_for",
    "check_cuts",
    "sweep_cuts",
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


def check_phrasing(ev: Evaluation, phrasing: str) -> str:
    """``phrasing`` if it is ``all`` or a phrasing of the ground truth, else ``ValueError`` naming the choices."""
    known = ("all", *ev.truth.phrasings)
    if phrasing not in known:
        raise ValueError(f"unknown phrasing {phrasing!r}; choose one of: {', '.join(known)}")
    return phrasing


@dataclass(frozen=True)
class Comparison:
    """Paired comparison of two configurations over the same questions (the unit of the test).

    ``test`` counts wins, losses and ties over *questions* (a question's
    difference is summed over its phrasings) and holds the exact sign-flip p and
    the question-bootstrap interval of the difference ``a - b``. ``wins`` and
    ``losses`` list the discordant *queries* (for inspection). ``p_holm`` is the
    Holm-adjusted p within ``family`` comparisons (``None`` when tested alone).
    """

    a: Config
    b: Config
    k: int | None  # None: MRR
    phrasing: str
    test: QuestionTest
    wins: tuple[str, ...]
    losses: tuple[str, ...]
    p_holm: float | None = None
    family: int = 1
    family_name: str = "this pair alone"
    primary_k: int = PRIMARY_K
    power: str = ""  # the sample size in words (ragdiag.compare.power_words)

    @property
    def metric(self) -> str:
        return "MRR" if self.k is None else f"R@{self.k}"

    @property
    def primary(self) -> bool:
        """Only recall at the primary k carries a verdict; other k and MRR are descriptive."""
        return self.k == self.primary_k

    @property
    def p_shown(self) -> float:
        return self.test.p if self.p_holm is None else self.p_holm

    def _verdict(self) -> tuple[str, str]:
        return verdict(self.a.label, self.b.label, self.test, metric=self.metric, p_adjusted=self.p_holm,
                       family=self.family, primary=self.primary)

    @property
    def status(self) -> str:
        """``different``, ``not shown different`` or ``descriptive`` (see :func:`ragdiag.compare.verdict`)."""
        return self._verdict()[0]

    @property
    def verdict(self) -> str:
        return self._verdict()[1]

    def summary(self, phrasing: str | None = None) -> str:
        """One line: the counts over questions, the exact sign-flip p and the difference."""
        t = self.test
        return (f"{self.a.label} vs {self.b.label} at {self.metric} ({phrasing or self.phrasing}), over "
                f"{t.n_questions} questions: wins {t.wins}, losses {t.losses}, ties {t.ties}; exact sign-flip "
                f"test p = {t.p:.4g}" + ("" if self.p_holm is None else f", Holm p = {self.p_holm:.4g} within "
                                          f"{self.family_name} ({self.family})")
                + f"; difference {t.difference} (95% question bootstrap)")

    def as_json(self) -> dict:
        t = self.test
        return {
            "a": self.a.label, "b": self.b.label, "metric": self.metric, "k": self.k, "phrasing": self.phrasing,
            "unit": "question", "n_questions": t.n_questions, "phrasings_per_question": t.phrasings,
            "wins": t.wins, "losses": t.losses, "ties": t.ties, "p": t.p, "p_method": t.method,
            "p_holm": self.p_holm, "family": self.family_name, "family_size": self.family,
            "primary_k": self.primary_k, "status": self.status, "verdict": self.verdict,
            "difference": t.difference.as_dict(), "power": self.power,
            "discordant_queries": {"a_finds": list(self.wins), "b_finds": list(self.losses)},
        }


def _per_query(ev: Evaluation, res, k: int | None) -> np.ndarray:
    return reciprocal_rank(res.needle_rank) if k is None else hits_at_k(res.needle_rank, k).astype(np.float64)


def compare(ev: Evaluation, a: Config | str, b: Config | str, *, k: int | None = PRIMARY_K,
            phrasing: str = "all") -> Comparison:
    """``a`` against ``b`` at R@k (``k=None``: MRR), paired over questions (exact sign-flip test).

    Raises ``ValueError`` for an unknown phrasing (it would otherwise test 0 queries).
    """
    check_phrasing(ev, phrasing)
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    ra, rb = ev.result(a), ev.result(b)
    mask = ev.mask(phrasing) & ev.in_domain
    xa, xb = _per_query(ev, ra, k), _per_query(ev, rb, k)
    groups = [q.question_id for q, m in zip(ev.queries, mask) if m]
    test = paired_test(xa[mask], xb[mask], groups)
    ids = [q.id for q in ev.queries]
    wins = tuple(ids[i] for i in np.flatnonzero(mask & (xa > xb)))
    losses = tuple(ids[i] for i in np.flatnonzero(mask & (xa < xb)))
    d = question_differences(xa[mask], xb[mask], groups)
    return Comparison(ra.config, rb.config, k, phrasing, test, wins, losses,
                      power=power_words(d, max(test.phrasings, 1)))


FAMILIES = ("all pairs", "planned")


def family(ev: Evaluation, *, k: int | None = PRIMARY_K, phrasing: str = "all", baseline: Config | str | None = None,
           configs: Sequence[Config] | None = None) -> list[Comparison]:
    """The comparisons of one family, each with its Holm-adjusted p within that family.

    ``baseline=None``: every pair of ``configs`` (all evaluated configurations
    by default). With a ``baseline``: the planned family, the baseline against
    each other configuration (``m = len(configs) - 1``).
    """
    configs = list(configs or ev.results)
    if baseline is None:
        pairs = list(itertools.combinations(configs, 2))
        name = f"all {len(pairs)} pairs"
    else:
        base = ev.result(baseline).config
        pairs = [(base, c) for c in configs if c != base]
        name = f"{base.label} against each other configuration"
    comps = [compare(ev, a, b, k=k, phrasing=phrasing) for a, b in pairs]
    adjusted = holm([c.test.p for c in comps]) if comps else []
    return [replace(c, p_holm=float(p), family=len(comps), family_name=name) for c, p in zip(comps, adjusted)]


def compare_in_family(ev: Evaluation, a: Config | str, b: Config | str, *, k: int | None = PRIMARY_K,
                      phrasing: str = "all", planned: bool = False, comparisons: Sequence[Comparison] | None = None
                      ) -> Comparison:
    """``a`` vs ``b`` with its Holm p within the family on screen: all pairs, or (``planned``) ``a`` vs each other.

    ``comparisons``: that family, already computed by :func:`family` (else it is computed here).
    """
    ca, cb = ev.result(a).config, ev.result(b).config
    fam = comparisons if comparisons is not None else family(ev, k=k, phrasing=phrasing,
                                                             baseline=ca if planned else None)
    for c in fam:
        if {c.a, c.b} == {ca, cb}:
            if c.a == ca:
                return c
            return replace(compare(ev, ca, cb, k=c.k, phrasing=c.phrasing), p_holm=c.p_holm, family=c.family,
                           family_name=c.family_name)
    raise ValueError(f"{ca.label} vs {cb.label} is not in the family")


def family_rows(comparisons: Sequence[Comparison]) -> list[dict]:
    """The family as table rows (wins, losses and ties count questions)."""
    return [
        {"a": c.a.label, "b": c.b.label, "wins": c.test.wins, "losses": c.test.losses, "ties": c.test.ties,
         "p": c.test.p, "p_holm": c.p_holm, "difference": c.test.difference.estimate,
         "low": c.test.difference.low, "high": c.test.difference.high, "status": c.status,
         "n_questions": c.test.n_questions}
        for c in comparisons
    ]


def pairwise(ev: Evaluation, *, k: int | None = PRIMARY_K, phrasing: str = "all",
             configs: Sequence[Config] | None = None, baseline: Config | str | None = None) -> list[dict]:
    """Every comparison of the family (all pairs, or a planned ``baseline`` family), Holm within it.

    Wins, losses and ties count questions; ``p`` is the exact sign-flip p over questions.
    """
    return family_rows(family(ev, k=k, phrasing=phrasing, configs=configs, baseline=baseline))


def gate_inputs_for(ev: Evaluation, config: Config | str, *, keep: int = DEFAULT_KEEP) -> GateInputs:
    """The gate's per-query values for ``config`` (with each query's question and ood kind)."""
    res = ev.result(config)
    if res.config.external and not ev.external[res.config.retriever].distances:
        raise ValueError(f"{res.config.label} has no distances: the sweep needs hit scores that are cosine "
                         "distances (eval-run --distances)")
    return gate_inputs(res, [q.id for q in ev.queries], ev.in_domain, keep=keep,
                       groups=[q.question_id or q.id for q in ev.queries],
                       kinds=[None if q.in_domain else (q.kind or "ood") for q in ev.queries])


def sweep_table(ev: Evaluation, config: Config | str, *, keep: int = DEFAULT_KEEP, cuts=None):
    return sweep(gate_inputs_for(ev, config, keep=keep), cuts)


def check_cuts(cuts) -> np.ndarray:
    """Cuts as an array, each finite and a cosine distance in [0, 2], else ``ValueError``."""
    arr = np.atleast_1d(np.asarray(cuts, dtype=np.float64))
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > MAX_DISTANCE)
    if bad.any():
        raise ValueError(f"a cut must be a finite cosine distance in [0, {MAX_DISTANCE:g}], got {float(arr[bad][0])}")
    return arr


MAX_SWEEP_ROWS = 2001


def sweep_cuts(start: float, stop: float, step: float) -> np.ndarray:
    """The cuts ``start, start + step, ..., stop`` (validated: finite, in range, at most 2001 rows)."""
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if not np.isfinite(v):
            raise ValueError(f"--{name} must be a finite number, got {v}")
    if not step > 0:
        raise ValueError(f"--step must be positive, got {step}")
    check_cuts([start, stop])
    if stop < start:
        raise ValueError(f"--stop ({stop}) must not be below --start ({start})")
    n = int(np.floor((stop - start) / step + 1e-9)) + 1
    if n > MAX_SWEEP_ROWS:
        raise ValueError(f"--step {step} gives {n} rows from {start} to {stop}; at most {MAX_SWEEP_ROWS}: "
                         f"use a step of at least {(stop - start) / (MAX_SWEEP_ROWS - 1):.2g}")
    return np.round(start + step * np.arange(n), 6)


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
