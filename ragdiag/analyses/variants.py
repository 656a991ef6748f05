"""Model x precision x index: variants of exact dense search judged by the same paired tests.

A variant is a retriever of the registry over the same chunks
(:mod:`ragdiag.retrieval.variant_specs`): exact float search with another
embedding model (``dense@use``), 8-bit or binary codes of a model's vectors
with or without rescoring (``dense-int8``, ``dense-binary-rescore@use``), or an
approximate HNSW index (``dense-hnsw``). They are evaluated like every other
retriever (``evaluate(..., retrievers="dense,dense-int8,...")``, the dashboard's
shared job); :func:`variant_rows` is a view over that evaluation: per variant
of one strategy, recall at k with its interval over questions, the paired
verdict against exact float search with the run's model (``S/dense``) within
the planned family "baseline against each variant" (simultaneous intervals and
adjusted p, as every family: :func:`ragdiag.analyses.compare.family`), bytes per vector (from the retriever's stamp),
ranking time per query, the neighbour overlap with exact search of the same
model (so "the model misses" can be told from "the index misses"), and which
variants are Pareto-optimal (no other is at least as good on recall, bytes and
time, and better on one).

Every variant keeps its own model's cosine distances for the distance gate:
a cut belongs to one model (:func:`ragdiag.analyses.model_cut.cut_percentile` gives its
model-independent reading).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .compare.comparisons import check_phrasing, family
from .compare.intervals import clustered_rate
from ..core.defaults import PRIMARY_K
from ..evaluation.records import Config, Evaluation
from ..core.metrics import hits_at_k
from .model_cut import gate_model
from ..index.models import model_label, split_model
from ..retrieval.variant_kinds import VARIANT_KINDS, Variant, build_variant, parse_variant  # noqa: F401 - re-exported
from ..core.stats import Interval
from ..core.tables import format_rows

__all__ = [
    "VARIANT_KINDS",
    "Variant",
    "parse_variant",
    "variant_names",
    "build_variant",
    "VariantRow",
    "variant_configs",
    "variant_rows",
    "pareto_front",
    "format_variant_rows",
]

def pareto_front(points: Sequence[tuple[float, float, float]]) -> list[bool]:
    """For (recall, bytes, ms) points: True where no other point is >= recall, <= bytes, <= ms and differs.

    >>> pareto_front([(0.9, 1536, 0.1), (0.9, 384, 0.1), (0.8, 48, 0.05), (0.7, 48, 0.06)])
    [False, True, True, False]
    """
    out = []
    for i, (r, b, m) in enumerate(points):
        dominated = any(
            r2 >= r and b2 <= b and m2 <= m and (r2 > r or b2 < b or m2 < m)
            for j, (r2, b2, m2) in enumerate(points) if j != i
        )
        out.append(not dominated)
    return out


def variant_names(models: Sequence[str], bases: Sequence[str]) -> list[str]:
    """The retriever names of every (model, base) pair: ``dense-int8@use``; the default model has no ``@``.

    >>> variant_names(["minilm", "use"], ["dense", "dense-int8"])
    ['dense', 'dense-int8', 'dense@use', 'dense-int8@use']
    """
    return [Variant(b.strip().lower(), None if model_label(m) == "minilm" else m).name for m in models for b in bases]


@dataclass(frozen=True)
class VariantRow:
    """One variant of a strategy beside exact search: recall, the paired verdict, costs, Pareto mark.

    ``difference``: the variant's recall at ``k`` minus the baseline's,
    ``{"estimate", "low", "high", "kind"}`` with the family's simultaneous
    interval (the one ``status`` is decided with; ``None`` for the baseline);
    ``wins`` / ``losses``: questions the variant wins / loses; ``p``: the pair
    alone; ``p_adjusted``: within the family of the baseline against every
    variant shown.
    ``overlap``: mean share of the exact top ``k`` of the same model that the
    variant returns (``None`` when that exact search was not evaluated).
    """

    config: str
    model: str
    precision: str
    index: str
    k: int
    recall: Interval
    status: str  # "baseline", or the verdict's status ("different", "not shown different", "descriptive")
    verdict: str
    difference: dict | None
    wins: int | None
    losses: int | None
    p: float | None
    p_adjusted: float | None
    bytes_per_vector: float | None
    rescore_bytes: int
    ms_per_query: float
    overlap: float | None
    truncated: int | None  # chunks longer than the model's window (run's model only)
    pareto: bool
    stamp: dict

    def cells(self) -> dict:
        """The flat JSON row (recall as ``R@k``, ``R@k_low``, ``R@k_high``; ``difference`` as its dict)."""
        key = f"R@{self.k}"
        d = self.difference
        return {"variant": self.config, "model": self.model, "precision": self.precision, "index": self.index,
                key: self.recall.estimate, f"{key}_low": self.recall.low, f"{key}_high": self.recall.high,
                "status": self.status, "verdict": self.verdict, "difference": d, "wins": self.wins,
                "losses": self.losses, "p": self.p, "p_adjusted": self.p_adjusted, "bytes_per_vector": self.bytes_per_vector,
                "rescore_bytes": self.rescore_bytes, "ms_per_query": self.ms_per_query,
                f"overlap@{self.k}": self.overlap, "truncated": self.truncated, "pareto": self.pareto}


def _variant_of(retriever: str) -> Variant | None:
    base, param = split_model(retriever)
    if base not in VARIANT_KINDS:
        return None
    return Variant(base, None if param is None or model_label(param) == "minilm" else param)


def variant_configs(ev: Evaluation, strategy: str) -> list[Config]:
    """The evaluated configurations of ``strategy`` whose retriever is a dense variant (``dense`` included)."""
    return [c for c in ev.results if not c.external and c.strategy == strategy and _variant_of(c.retriever)]


def _overlap(ev: Evaluation, cfg: Config, exact: Config, k: int, mask: np.ndarray) -> float | None:
    """Mean share of the exact top ``k`` (same model) the variant returns, ties with the exact k-th counted
    (ANN-benchmarks' rule, as :func:`ragdiag.retrieval.ann.neighbour_overlap`; both rows carry that model's distances)."""
    if exact not in ev.results or not mask.any():
        return None
    k = min(k, ev.results[exact].top_distance.shape[1])  # a corpus of fewer chunks ranks them all
    kth = ev.results[exact].top_distance[mask, k - 1]  # exact search lists chunks by ascending distance
    got = ev.results[cfg].top_distance[mask, :k] <= kth[:, None] + 1e-6
    return round(float(got.sum(axis=1).mean() / k), 4)


def variant_rows(ev: Evaluation, strategy: str, *, k: int = PRIMARY_K, phrasing: str = "all") -> list[VariantRow]:
    """Every evaluated dense variant of ``strategy`` against ``strategy/dense`` (see the module notes).

    ``ValueError`` when ``strategy/dense`` (the baseline) was not evaluated.
    """
    check_phrasing(ev, phrasing)
    base = Config(strategy, "dense")
    if base not in ev.results:
        raise ValueError(f"{base.label} (exact float search, the baseline) was not evaluated; "
                         f"evaluate it beside the variants (--retrievers dense,...)")
    configs = variant_configs(ev, strategy)
    others = [c for c in configs if c != base]
    comps = {c.b: c for c in family(ev, k=k, phrasing=phrasing, baseline=base, configs=[base, *others])}
    mask = ev.mask(phrasing)
    dim = ev.encoder_stamp.get("dim")
    rows = []
    for cfg in [base, *others]:
        v = _variant_of(cfg.retriever)
        res = ev.results[cfg]
        stamp = dict(ev.retriever_stamps.get(cfg.label, {}))
        model_dim = (stamp.get("model") or {}).get("dim", dim) if v.model else dim
        bpv = stamp.get("bytes_per_vector", 4 * model_dim if model_dim and v.precision == "fp32" else None)
        c = comps.get(cfg)
        d = None
        if c is not None:  # the family's pairs are (baseline, variant): the variant's side is the negation
            b = c.difference()
            d = {"estimate": -b["estimate"], "low": -b["high"], "high": -b["low"], "kind": b["kind"]}
        exact = Config(strategy, Variant("dense", v.model).name)
        rows.append(VariantRow(
            config=cfg.label, model=gate_model(ev, cfg), precision=v.precision + ("+rescore" if v.rescore else ""),
            index=v.index, k=k, recall=clustered_rate(hits_at_k(res.needle_rank[mask], k), ev.groups(mask)),
            status="baseline" if c is None else c.status, verdict="" if c is None else c.verdict,
            difference=d, wins=None if c is None else int(c.test.losses),
            losses=None if c is None else int(c.test.wins), p=None if c is None else float(c.test.p),
            p_adjusted=None if c is None else float(c.p_adjusted),
            bytes_per_vector=None if bpv is None else round(float(bpv), 1),
            rescore_bytes=4 * model_dim if v.rescore and model_dim else 0,
            ms_per_query=round(1000.0 * res.seconds / max(len(ev.queries), 1), 4),
            overlap=_overlap(ev, cfg, exact, k, mask),
            truncated=ev.indexes[strategy].report.audit.truncated if not v.model else None,
            pareto=False, stamp=stamp))
    front = pareto_front([(r.recall.estimate, (r.bytes_per_vector or float("inf")) + r.rescore_bytes,
                           r.ms_per_query) for r in rows])
    return [replace(r, pareto=bool(f)) for r, f in zip(rows, front)]


def format_variant_rows(rows: Sequence[VariantRow]) -> str:
    """The variants table as plain text (the CLI prints it)."""
    table = []
    for r in rows:
        iv = r.recall
        table.append({
            "variant": r.config, "model": r.model, "precision": r.precision, "index": r.index,
            f"R@{r.k} (95% interval)": str(iv),
            "vs baseline": "baseline" if r.p is None else f"+{r.wins}/-{r.losses} p_adj={r.p_adjusted:.3g}",
            "status": r.status,
            "B/vec": ("?" if r.bytes_per_vector is None else f"{r.bytes_per_vector:.0f}")
                     + (f"+{r.rescore_bytes}" if r.rescore_bytes else ""),
            "ms/q": f"{r.ms_per_query:.3f}",
            f"overlap@{r.k}": "" if r.overlap is None else r.overlap,
            "pareto": "*" if r.pareto else "",
        })
    return format_rows(table)
