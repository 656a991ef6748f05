"""The regression gate on a native cut: each run's per-query best scores in the ranking's own score, one cut.

``eval --out`` writes :data:`NATIVE_SCORES_FILE` beside ``gate_inputs.csv``:
per configuration whose ranking has a score of its own (BM25, RRF fused,
MaxSim, cross-encoder; :data:`ragdiag.analyses.threshold.score.NATIVE_SCORES`)
and per query, the best score in the gate's window (``top``) and the best
score of a chunk holding the needle there (``holder``; ``-inf``: none, and
for off-topic queries), with the score's name, unit and reranker. A
cross-encoder's logits are written; its sigmoid is computed on reading, as
``threshold --ce-units sigmoid`` computes it. Floats are written in full
(``repr``), so a folder reads back the evaluation's scores bit for bit.

A native cut (a ``threshold --score native --export`` file) applied to a
baseline and a candidate goes through the rank adapter of
:mod:`ragdiag.analyses.threshold.native_current` on one ladder of both runs'
scores and the cut: each run's gate table gets, in place of its distances,
rank distances that keep a chunk under the mapped cut exactly when its score
is at least the native cut. The paired checks then run unchanged, and the
report prints the cut in the native score (:func:`native_gate_runs`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Mapping

import numpy as np

from ...analyses.threshold.score import ScoreTable
from ..export import NATIVE_COLUMNS, NATIVE_SCORES_FILE, native_score_rows, native_scores_csv  # noqa: F401
from .runs import GateRun, RunError

__all__ = ["NATIVE_SCORES_FILE", "NATIVE_COLUMNS", "native_score_rows", "native_scores_csv", "load_native_table",
           "run_native_table", "run_stamp", "native_gate_runs", "is_native_export"]

def _score(text: str, where: str) -> float:
    try:
        x = float(text)
    except (TypeError, ValueError):
        raise RunError(f"{where}: a score must be a number or -inf, got {str(text)[:40]!r}") from None
    if math.isnan(x) or x == math.inf:
        raise RunError(f"{where}: a score must be a number or -inf, got {str(text)[:40]!r}")
    return x


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """The sigmoid of each logit; no score (``-inf``) stays none."""
    with np.errstate(over="ignore"):
        return np.where(np.isfinite(x), 1.0 / (1.0 + np.exp(-x)), -np.inf)


def load_native_table(folder: str | Path, run: GateRun, unit: str | None = None) -> tuple[ScoreTable, str]:
    """The native-score table of ``run`` (loaded from ``folder``) in the order of its gate table, and its reranker
    (``""``: none); ``unit="sigmoid"`` reads a cross-encoder's logits as probabilities. :class:`RunError` in one
    line when the folder holds no native scores for the configuration."""
    from .runs import _csv_rows, _read

    path = Path(folder) / NATIVE_SCORES_FILE
    strategy, _, retriever = run.config.partition("/")
    if not (path.exists() or path.is_symlink()):
        raise RunError(f"{folder} has no {NATIVE_SCORES_FILE} (written by an older ragdiag): a native cut needs each "
                       "query's own score; run `eval --out` again")
    rows = [r for r in _csv_rows(_read(path, NATIVE_SCORES_FILE), str(path), NATIVE_COLUMNS)
            if r["strategy"] == strategy and r["retriever"] == retriever]
    if not rows:
        raise RunError(f"{path} holds no native score for {run.config} (its retriever has none known): "
                       "gate it with --score dense")
    by_id = {}
    for r in rows:
        if r["query_id"] in by_id:
            raise RunError(f"{path}: query {r['query_id'][:60]!r} is listed twice for {run.config}")
        by_id[r["query_id"]] = r
    t = run.table
    if set(by_id) != set(t.query_ids):
        raise RunError(f"{path} and {run.table.config or run.config}'s gate inputs disagree on the queries; "
                       "run `eval --out` again")
    ordered = [by_id[q] for q in t.query_ids]
    top = np.array([_score(r["top"], f"{path}, query {r['query_id'][:60]!r}") for r in ordered])
    holder = np.array([_score(r["holder"], f"{path}, query {r['query_id'][:60]!r}") for r in ordered])
    first = ordered[0]
    score, have = first["score"], first["unit"]
    if unit == "sigmoid":
        if have != "logit":
            raise RunError(f"{run.config}: only a cross-encoder's logit has a sigmoid, this score is in {have}")
        top, holder = _sigmoid(top), _sigmoid(holder)
        score, have = "cross-encoder probability (sigmoid of its logit)", "sigmoid"
    holder[~t.in_domain] = -np.inf
    windows = {int(r["keep"]) for r in ordered}
    table = ScoreTable(run.config, score, have, t.query_ids, t.in_domain, tuple(t.group_ids()),
                       top, holder, max(windows), t.kinds)
    return table, first["reranker"]


def run_native_table(ev, run: GateRun, unit: str | None = None) -> tuple[ScoreTable, str]:
    """The native-score table of ``run`` evaluated now (``ev``), in the order of its gate table, and its reranker."""
    from ...analyses.threshold.score import score_stamp, score_table
    from ...core.gate import Gate

    try:
        table = score_table(ev, run.config, Gate(run.gate.keep), unit=unit)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    if table.query_ids != run.table.query_ids:
        raise RunError(f"{run.config}: the native scores and the gate inputs list different queries")
    return table, score_stamp(ev, table)["reranker"] or ""


def run_stamp(run: GateRun, table: ScoreTable, reranker: str) -> dict:
    """What a native cut applied to ``run`` must be stamped with (as :func:`~ragdiag.analyses.threshold.score.score_stamp`)."""
    return {"score": table.score, "unit": table.unit, "retriever": run.config.partition("/")[2].partition("@")[0],
            "model": run.model.get("model"), "weights_sha256": run.model.get("weights_sha256"),
            "reranker": reranker or None}


def is_native_export(path: str | Path) -> bool:
    """Whether the file at ``path`` is a ragdiag export of a cut on a native score (its stamp names the score)."""
    import yaml

    from ...analyses.threshold.export import EXPORT_KEY

    p = Path(path)
    try:
        if not p.is_file() or p.stat().st_size > 1_000_000:
            return False
        doc = yaml.safe_load(p.read_text(encoding="utf-8", errors="replace"))
    except Exception:  # noqa: BLE001 - not YAML (or JSON): not a native export; the distance reader says why
        return False
    stamp = doc.get("stamp") if isinstance(doc, dict) and EXPORT_KEY in doc else None
    return isinstance(stamp, Mapping) and bool(stamp.get("score"))


def native_gate_runs(baseline: GateRun, candidate: GateRun, tables: tuple[ScoreTable, ScoreTable],
                     cut: float) -> tuple[GateRun, GateRun, float]:
    """``baseline`` and ``candidate`` with their gate tables' distances replaced by rank distances on one ladder of
    both native tables and ``cut``, and the mapped cut: ``d < mapped`` exactly when ``score >= cut``, per run."""
    from ...analyses.threshold.native_current import rank_distances

    b, c = tables
    if (b.score, b.unit) != (c.score, c.unit):
        raise RunError(f"the baseline's gate reads the {b.score} ({b.unit}), the candidate's the {c.score} "
                       f"({c.unit}): one native cut cannot gate both; compare configurations with the same ranking "
                       "score, or use --score dense")
    pairs, (mapped,) = rank_distances([b, c], [cut])
    out = []
    for run, table, (top, holder) in zip((baseline, candidate), tables, pairs):
        if table.window != run.table.window:
            raise RunError(f"{run.source}: the native scores were read in the top {table.window}, the gate keeps "
                           f"{run.table.window}; run `eval --out` again")
        out.append(replace(run, table=replace(run.table, closest=top, closest_holder=holder, needle_distance=None,
                                              top_distance=None, kept=None, outcome=())))
    return out[0], out[1], mapped
