"""Model x precision x index: variants of exact dense search judged by the same paired tests.

A variant is a retriever over the same chunks: exact float search with another
embedding model (``dense@use``), 8-bit or binary codes of a model's vectors
with or without rescoring (``dense-int8``, ``dense-binary-rescore@use``), or an
approximate HNSW index (``dense-hnsw``). :func:`run_variants` evaluates the
chosen variants of one strategy on every query, and :func:`variant_rows` sets
them side by side: recall at the primary k with its interval, the paired verdict
against exact full-precision search with the default model (through
:func:`ragdiag.compare.comparisons.compare`), bytes per vector, search time per query,
build time, the neighbour overlap with exact search of the same model (so "the
model misses" can be told from "the index misses"), and which variants are
Pareto-optimal (no other is at least as good on recall, bytes and time, and
better on one).

Every variant keeps its own model's cosine distances for the distance gate:
a cut belongs to one model (:func:`ragdiag.model_cut.cut_percentile` gives its
model-independent reading).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from . import PIPELINE_VERSION
from .chunking import parse_strategies
from .compare.comparisons import compare
from .compare.intervals import clustered_rate
from .defaults import PRIMARY_K, TOP
from .evaluate import _config_result, build_index
from .evaluation import Config, Evaluation, StrategyIndex
from .metrics import hits_at_k
from .models import load_encoder, model_label
from .retrieval.ann import HNSWParams, neighbour_overlap
from .retrieval.base import QueryBatch, Unavailable
from .retrieval.dense import cosine_distances
from .retrieval.quantized import DEFAULT_RESCORE
from .retrieval.variant_kinds import VARIANT_KINDS, Variant, build_variant, parse_variant
from .stats import Interval
from .tables import format_rows

__all__ = [
    "VariantInfo",
    "VariantRun",
    "run_variants",
    "variant_rows",
    "pareto_front",
    "format_variant_rows",
]

Progress = Callable[[str, int, int], None]


def variant_stamp(variant: Variant, retriever, encoder_stamp: dict) -> dict:
    """What made a variant's numbers: the model's stamp plus precision, rescoring and index parameters."""
    stamp = {"retriever": variant.name, "model": dict(encoder_stamp), "precision": variant.precision,
             "index": variant.index, "rescore": None}
    if hasattr(retriever, "stamp") and callable(retriever.stamp):
        stamp.update(retriever.stamp())
    stamp["precision"] = variant.precision
    stamp["index"] = variant.index
    return stamp


def _bytes(variant: Variant, retriever, dim: int) -> tuple[float, int]:
    """(bytes per vector searched, extra float32 bytes per vector kept for rescoring)."""
    if variant.index == "hnsw":
        return float(retriever.bytes_per_vector), 0
    if variant.precision in ("int8", "binary"):
        return float(retriever.bytes_per_vector), int(retriever.rescore_bytes_per_vector)
    return float(4 * dim), 0


@dataclass(frozen=True)
class VariantInfo:
    """What a variant cost and how close it stays to exact search of its own model."""

    variant: Variant
    stamp: dict
    bytes_per_vector: float
    rescore_bytes_per_vector: int
    build_seconds: float
    search_ms_per_query: float
    overlap: np.ndarray  # per query: share of the exact top PRIMARY_K (same model) in the variant's top PRIMARY_K
    truncated: int  # chunks longer than this model's window


@dataclass
class VariantRun:
    """An :class:`Evaluation` of one strategy's variants plus their costs and stamps."""

    evaluation: Evaluation
    strategy: str
    info: dict[str, VariantInfo]
    baseline: str  # retriever name of exact float search with the default model
    unavailable: dict[str, str] = field(default_factory=dict)
    model_indexes: dict[str, StrategyIndex] = field(default_factory=dict)  # model label -> its index

    def config(self, name: str) -> Config:
        """The :class:`Config` of variant ``name`` under this run's strategy."""
        return Config(self.strategy, name)


def _time_rank(retriever, batch: QueryBatch, repeats: int) -> tuple[list, float]:
    """Full rankings (for the metrics), and the median seconds of ``repeats`` searches of the top
    :data:`~ragdiag.defaults.TOP` over the whole batch (what serving costs)."""
    rankings = retriever.rank(batch)
    times = []
    for _ in range(max(repeats, 1)):
        t = time.perf_counter()
        retriever.rank(batch, depth=TOP)
        times.append(time.perf_counter() - t)
    return rankings, float(np.median(times))


def run_variants(corpus, truth, *, strategy: str = "E", variants: Iterable[str | Variant] | None = None,
                 encoder=None, store=None, rescore: int = DEFAULT_RESCORE, hnsw: HNSWParams = HNSWParams(),
                 repeats: int = 3, progress: Progress | None = None) -> VariantRun:
    """Evaluate ``variants`` (default: every precision and index of the default model) on one strategy.

    The baseline, exact float search with the default model (``dense``), is
    always included. A variant whose model or library is missing is listed in
    ``unavailable`` with the reason and the install command.
    """
    strat = parse_strategies(strategy)
    if len(strat) != 1:
        raise ValueError(f"variants are compared within one strategy; got {strategy!r}")
    strat = strat[0]
    wanted = [v if isinstance(v, Variant) else parse_variant(v) for v in (variants or list(VARIANT_KINDS))]
    wanted = list(dict.fromkeys([Variant("dense"), *wanted]))
    if encoder is None:
        from .encoder.model import Encoder

        encoder = Encoder(None)
    queries = truth.queries
    qtexts = tuple(q.text for q in queries)
    results: dict[Config, object] = {}
    info: dict[str, VariantInfo] = {}
    unavailable: dict[str, str] = {}
    model_indexes: dict[str, StrategyIndex] = {}
    by_model: dict[str, list[Variant]] = {}
    for v in wanted:
        by_model.setdefault(v.model_label, []).append(v)
    default_index = None
    for label, vs in by_model.items():
        try:
            enc = load_encoder(vs[0].model, default=encoder)
        except Exception as exc:  # ModelUnavailable, or a folder that is not a model
            for v in vs:
                unavailable[v.name] = str(exc)
            continue
        index = build_index(corpus, truth, strat, enc, store=store, progress=progress)
        model_indexes[label] = index
        if label == "minilm":
            default_index = index
        qvecs = store.embed(enc, list(qtexts)).vectors if store is not None else enc.encode(list(qtexts))
        batch = QueryBatch(qtexts, qvecs)
        dist = cosine_distances(qvecs, index.vectors)
        enc_stamp = enc.stamp.as_dict()
        for v in sorted(vs, key=lambda v: v.base != "dense"):  # exact first
            t = time.perf_counter()
            try:
                retriever = build_variant(v if v.base != "dense" else Variant("dense"), index.vectors,
                                          rescore=rescore, hnsw=hnsw)
            except Unavailable as exc:
                unavailable[v.name] = exc.reason
                continue
            build_s = time.perf_counter() - t
            rankings, seconds = _time_rank(retriever, batch, repeats)
            orders = np.stack([r.order for r in rankings])
            scores = np.stack([r.scores for r in rankings])
            if v.base == "dense":
                build_s = 0.0  # exact search keeps the vectors as they are
            cfg = Config(strat.name, v.name)
            results[cfg] = _config_result(cfg, index, truth, queries, orders, scores, dist, k_diag=TOP,
                                          seconds=seconds)
            bpv, extra = _bytes(v, retriever, index.vectors.shape[1])
            info[v.name] = VariantInfo(
                variant=v,
                stamp=variant_stamp(v, retriever, enc_stamp),
                bytes_per_vector=bpv,
                rescore_bytes_per_vector=extra,
                build_seconds=build_s,
                search_ms_per_query=1000.0 * seconds / max(len(queries), 1),
                overlap=neighbour_overlap(orders, dist, min(PRIMARY_K, dist.shape[1])),
                truncated=index.report.audit.truncated,
            )
    if default_index is None:
        raise ValueError("the baseline (exact search with the default model) could not run: "
                         + unavailable.get("dense", "unknown reason"))

    stamp = encoder.stamp.as_dict()
    stamp["pipeline_version"] = PIPELINE_VERSION
    ev = Evaluation(corpus, truth, queries, {strat.name: default_index}, results, dict(unavailable), stamp)
    return VariantRun(ev, strat.name, info, "dense", unavailable, model_indexes)


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


def variant_rows(run: VariantRun, *, k: int = PRIMARY_K, phrasing: str = "all") -> list[dict]:
    """One row per variant: recall@k with interval, paired verdict vs the baseline, costs, Pareto mark."""
    ev = run.evaluation
    mask = ev.mask(phrasing)
    base_cfg = run.config(run.baseline)
    rows = []
    for name, inf in run.info.items():
        cfg = run.config(name)
        res = ev.results[cfg]
        hits = hits_at_k(res.needle_rank[mask], k)
        row = {
            "variant": cfg.label,
            "model": inf.variant.model_label,
            "precision": inf.variant.precision + ("+rescore" if inf.variant.rescore else ""),
            "index": inf.variant.index,
            f"R@{k}": clustered_rate(hits, ev.groups(mask)),
        }
        if name == run.baseline:
            row.update(verdict="baseline", p=None, wins=None, losses=None)
        else:
            comp = compare(ev, cfg, base_cfg, k=k, phrasing=phrasing)
            t = comp.test
            row.update(verdict=comp.verdict, p=float(t.p), wins=int(getattr(t, "wins", 0)),
                       losses=int(getattr(t, "losses", 0)))
        row.update(
            bytes_per_vector=round(inf.bytes_per_vector, 1),
            rescore_bytes=inf.rescore_bytes_per_vector,
            ms_per_query=round(inf.search_ms_per_query, 4),
            build_s=round(inf.build_seconds, 4),
            **{f"overlap@{PRIMARY_K}": round(float(inf.overlap[mask].mean()), 4) if mask.any() else float("nan")},
            truncated=inf.truncated,
        )
        rows.append(row)
    front = pareto_front([(r[f"R@{k}"].estimate, r["bytes_per_vector"] + r["rescore_bytes"], r["ms_per_query"])
                          for r in rows])
    for r, f in zip(rows, front):
        r["pareto"] = f
    return rows


def format_variant_rows(rows: Sequence[dict], k: int = PRIMARY_K) -> str:
    """The variants table as plain text (the CLI prints it)."""
    table = []
    for r in rows:
        iv: Interval = r[f"R@{k}"]
        table.append({
            "variant": r["variant"], "model": r["model"], "precision": r["precision"], "index": r["index"],
            f"R@{k} [95% CI]": f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]",
            "vs baseline": "baseline" if r["p"] is None else f"+{r['wins']}/-{r['losses']} p={r['p']:.3g}",
            "B/vec": f"{r['bytes_per_vector']:.0f}" + (f"+{r['rescore_bytes']}" if r["rescore_bytes"] else ""),
            "ms/q": f"{r['ms_per_query']:.3f}",
            "build s": f"{r['build_s']:.3f}",
            f"overlap@{PRIMARY_K}": r[f"overlap@{PRIMARY_K}"],
            "pareto": "*" if r["pareto"] else "",
        })
    return format_rows(table)
