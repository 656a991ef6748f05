"""Queries x configurations -> per-query ranks, distances and diagnoses.

A configuration is a chunking strategy and a retriever (``E/hybrid``). For
every configuration and query we keep the rank of the first chunk holding the
needle (0 when none does), the top 20 with scores and cosine distances (for
every retriever: the distance gate works whatever ranked the chunk), and a
diagnosis. Queries are embedded once and reused across strategies.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from . import PIPELINE_VERSION
from .audit import ChunkReport, chunk_report
from .chunking import STRATEGIES, Chunk, Strategy, chunk_corpus, parse_strategies
from .corpus import Corpus
from .defaults import RERANK_HEAD, TOP
from .metrics import KS, hits_at_k, reciprocal_rank
from .retrieval import (
    RETRIEVERS,
    BM25Retriever,
    CrossEncoderScorer,
    DenseRetriever,
    HybridRetriever,
    MaxSimScorer,
    QueryBatch,
    RerankRetriever,
    Unavailable,
    cosine_distances,
    normalisation_check,
    ranks_from_orders,
)
from .compare import clustered_mean, clustered_rate
from .stats import Interval
from .truth import GroundTruth, Query

__all__ = [
    "Config",
    "StrategyIndex",
    "ConfigResult",
    "Evaluation",
    "evaluate",
    "build_index",
    "parse_retrievers",
    "summary_rows",
    "DIAGNOSES",
    "TOP",
]

DIAGNOSES = ("hit", "ranked-low", "truncated", "destroyed")
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, order=True)
class Config:
    strategy: str
    retriever: str

    @property
    def label(self) -> str:
        return f"{self.strategy}/{self.retriever}"

    @property
    def external(self) -> bool:
        """An external run (``ext/NAME``), evaluated from another system's results."""
        return self.strategy == "ext"

    def __str__(self) -> str:
        return self.label

    @classmethod
    def parse(cls, text: str) -> "Config":
        """``"E/dense"`` -> Config("E", "dense"); ``"ext/NAME"`` names an external run."""
        strategy, sep, retriever = text.strip().partition("/")
        retriever = retriever.strip() if strategy == "ext" else retriever.strip().lower()
        if sep and strategy == "ext" and retriever:
            return cls("ext", retriever)
        if not sep or strategy.upper() not in STRATEGIES or retriever not in RETRIEVERS:
            raise ValueError(
                f"bad configuration {text!r}: write STRATEGY/RETRIEVER, strategy one of "
                f"{','.join(STRATEGIES)}, retriever one of {','.join(RETRIEVERS)} (e.g. E/hybrid)"
            )
        return cls(strategy.upper(), retriever)


def parse_retrievers(spec: str | Iterable[str] | None) -> list[str]:
    if spec is None:
        return list(RETRIEVERS)
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    unknown = [n for n in names if n not in RETRIEVERS]
    if unknown or not names:
        raise ValueError(f"unknown retriever {', '.join(unknown) or '(none)'}; choose from {','.join(RETRIEVERS)}")
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class StrategyIndex:
    """One strategy's chunks, vectors, audit, and which chunks hold each needle."""

    strategy: Strategy
    chunks: tuple[Chunk, ...]
    vectors: np.ndarray
    report: ChunkReport
    holders: dict[str, np.ndarray]  # question id -> chunk positions holding its needle
    embedded: int = 0  # vectors computed (not reused from the store) while building
    normalisation_error: float = 0.0

    def truncated_before_needle(self, question_id: str, needle_end: int) -> bool:
        """Every chunk holding the needle is cut by the encoder window before it ends."""
        h = self.holders[question_id]
        return bool(h.size) and bool((self.report.audit.window_end[h] < needle_end).all())


@dataclass(frozen=True)
class ConfigResult:
    """Per-query outcome of one configuration, in the order of ``Evaluation.queries``."""

    config: Config
    needle_rank: np.ndarray  # int, 1-based, 0 = no chunk holding the needle in the list (ood: 0)
    needle_distance: np.ndarray  # closest holder's cosine distance (nan: destroyed / ood)
    top1_distance: np.ndarray
    top_order: np.ndarray  # (queries, TOP) chunk positions
    top_scores: np.ndarray  # retriever's scores
    top_distance: np.ndarray  # cosine distances
    top_holds: np.ndarray  # bool: does that chunk hold the query's needle
    diagnosis: tuple[str, ...]  # per query; "ood" for ood queries
    seconds: float = 0.0


@dataclass
class Evaluation:
    """Everything one run computed; the dashboard, CLI and reports read from it."""

    corpus: Corpus
    truth: GroundTruth
    queries: tuple[Query, ...]
    indexes: dict[str, StrategyIndex]
    results: dict[Config, ConfigResult]
    unavailable: dict[str, str] = field(default_factory=dict)
    encoder_stamp: dict = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    diagnosis_k: int = TOP
    external: dict = field(default_factory=dict)  # run name -> ExternalRun (see ragdiag.external)

    @property
    def in_domain(self) -> np.ndarray:
        return np.array([q.in_domain for q in self.queries])

    def mask(self, phrasing: str = "all") -> np.ndarray:
        """In-domain queries of a phrasing (``all``, ``course``, ``ticket``...)."""
        if phrasing == "all":
            return self.in_domain
        return np.array([q.phrasing == phrasing for q in self.queries])

    def result(self, config: Config | str) -> ConfigResult:
        cfg = Config.parse(config) if isinstance(config, str) else config
        if cfg not in self.results:
            reason = self.unavailable.get(cfg.retriever)
            known = ", ".join(c.label for c in self.results)
            raise KeyError(f"{cfg.label} was not evaluated" + (f" ({reason})" if reason else f"; evaluated: {known}"))
        return self.results[cfg]

    def hit_label(self, config: Config, position: int) -> str:
        """A readable id for a ranked item: the chunk id, or ``hit N`` of an external run."""
        if config.external:
            return f"{config.retriever} hit {position + 1}" if position >= 0 else ""
        return self.indexes[config.strategy].chunks[position].id

    def query_index(self, query_id: str) -> int:
        for i, q in enumerate(self.queries):
            if q.id == query_id:
                return i
        raise KeyError(f"no query {query_id!r}")


def _holders(chunks: Sequence[Chunk], truth: GroundTruth) -> dict[str, np.ndarray]:
    by_doc: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        by_doc.setdefault(c.doc_id, []).append(i)
    return {
        q.id: np.array([i for i in by_doc.get(q.doc_id, []) if chunks[i].contains(q.start, q.end)], dtype=np.int64)
        for q in truth.questions
    }


class _TokenTap:
    """The encoder, handing each embedded text's wordpiece vectors to ``keep``: one forward pass for both."""

    def __init__(self, encoder, keep: Callable[[str, np.ndarray], None]):
        self._encoder, self._keep = encoder, keep

    def __getattr__(self, name):
        return getattr(self._encoder, name)

    def encode(self, texts, *, progress=None):
        texts = list(texts)
        return self._encoder.encode(texts, progress=progress, token_sink=lambda i, tok: self._keep(texts[i], tok))


def build_index(corpus: Corpus, truth: GroundTruth, strategy: Strategy, encoder, *, store=None,
                progress: Progress | None = None, keep_tokens: Callable[[str, np.ndarray], None] | None = None
                ) -> StrategyIndex:
    """Chunk, audit and embed one strategy (vectors through the store when given).

    ``keep_tokens(text, vectors)`` receives the wordpiece vectors of every text
    embedded now (for MaxSim), when the encoder can give them.
    """
    if keep_tokens is not None and getattr(encoder, "supports_token_sink", False):
        encoder = _TokenTap(encoder, keep_tokens)
    chunks = chunk_corpus(corpus, strategy)
    report = chunk_report(strategy, chunks, truth.needles(), encoder)
    texts = [c.embed_text for c in chunks]
    cb = (lambda d, t: progress(f"embedding {strategy.name}", d, t)) if progress else None
    if store is not None:
        res = store.embed(encoder, texts, progress=cb)
        vectors, computed = res.vectors, res.computed
    else:
        vectors, computed = encoder.encode(texts, progress=cb), len(texts)
    return StrategyIndex(
        strategy=strategy,
        chunks=chunks,
        vectors=vectors,
        report=report,
        holders=_holders(chunks, truth),
        embedded=computed,
        normalisation_error=normalisation_check(vectors) if len(vectors) > 1 else 0.0,
    )


def _config_result(config: Config, index: StrategyIndex, truth: GroundTruth, queries: Sequence[Query],
                   orders: np.ndarray, scores: np.ndarray, dist: np.ndarray, *, k_diag: int,
                   seconds: float) -> ConfigResult:
    nq = len(queries)
    ranks = ranks_from_orders(orders)
    needle_rank = np.zeros(nq, dtype=np.int64)
    needle_distance = np.full(nq, np.nan)
    top_order = orders[:, :TOP]
    top_holds = np.zeros(top_order.shape, dtype=bool)
    diagnosis = []
    for i, q in enumerate(queries):
        if not q.in_domain:
            diagnosis.append("ood")
            continue
        h = index.holders[q.question_id]
        question = truth.question(q.question_id)
        if h.size:
            needle_rank[i] = ranks[i, h].min()
            needle_distance[i] = dist[i, h].min()
            top_holds[i] = np.isin(top_order[i], h)
        if h.size == 0:
            diagnosis.append("destroyed")
        elif needle_rank[i] <= k_diag:
            diagnosis.append("hit")
        elif index.truncated_before_needle(q.question_id, question.end):
            diagnosis.append("truncated")
        else:
            diagnosis.append("ranked-low")
    rows = np.arange(nq)[:, None]
    return ConfigResult(
        config=config,
        needle_rank=needle_rank,
        needle_distance=needle_distance,
        top1_distance=dist[np.arange(nq), orders[:, 0]],
        top_order=top_order,
        top_scores=scores[:, :TOP],
        top_distance=dist[rows, top_order],
        top_holds=top_holds,
        diagnosis=tuple(diagnosis),
        seconds=seconds,
    )


def evaluate(
    corpus: Corpus,
    truth: GroundTruth,
    *,
    encoder,
    strategies: str | Iterable[str] | None = None,
    retrievers: str | Iterable[str] | None = None,
    store=None,
    cross_encoder: str | None = None,
    progress: Progress | None = None,
    diagnosis_k: int = TOP,
    rerank_head: int = RERANK_HEAD,
) -> Evaluation:
    """Run every (strategy x retriever) configuration on every query of ``truth``.

    ``encoder`` is an :class:`~ragdiag.encoder.Encoder` (or anything with the
    same ``encode``/``count_tokens``/``window_ends``/``stamp``). Retrievers that
    cannot run here (a cross-encoder not available offline) are listed in
    ``Evaluation.unavailable`` with the reason, never dropped silently.
    """
    strats = parse_strategies(strategies)
    names = parse_retrievers(retrievers)
    queries = truth.queries
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    query_texts = [q.text for q in queries]
    # Queries are embedded once, reused by every strategy, and kept in the store like chunks.
    qvecs = store.embed(encoder, query_texts).vectors if store is not None else encoder.encode(query_texts)
    timings["embed_queries"] = time.perf_counter() - t0
    batch = QueryBatch(tuple(q.text for q in queries), qvecs)

    unavailable: dict[str, str] = {}
    scorers: dict[str, object] = {}
    if "rerank-ce" in names:
        try:
            scorers["rerank-ce"] = CrossEncoderScorer(cross_encoder)
        except Unavailable as exc:
            unavailable["rerank-ce"] = exc.reason
    if "rerank-maxsim" in names:
        scorers["rerank-maxsim"] = MaxSimScorer(encoder)
    cache = store.score_cache() if store is not None else None

    indexes: dict[str, StrategyIndex] = {}
    results: dict[Config, ConfigResult] = {}
    for si, strategy in enumerate(strats):
        t = time.perf_counter()
        maxsim = scorers.get("rerank-maxsim")
        index = build_index(corpus, truth, strategy, encoder, store=store, progress=progress,
                            keep_tokens=maxsim.keep if maxsim is not None else None)
        timings[f"index_{strategy.name}"] = time.perf_counter() - t
        indexes[strategy.name] = index
        dist = cosine_distances(qvecs, index.vectors)
        texts = [c.embed_text for c in index.chunks]
        dense = DenseRetriever(index.vectors)
        bm25 = BM25Retriever(texts)
        hybrid = HybridRetriever([dense, bm25])
        built = {"dense": dense, "bm25": bm25, "hybrid": hybrid}
        for name in names:
            if name in unavailable:
                continue
            if name.startswith("rerank-"):
                cb = (lambda d, n, s=f"{name} {strategy.name}": progress(s, d, n)) if progress else None
                retriever = RerankRetriever(name, hybrid, scorers[name], texts, head=rerank_head, cache=cache,
                                            progress=cb)
            else:
                retriever = built[name]
            t = time.perf_counter()
            rankings = retriever.rank(batch)
            orders = np.stack([r.order for r in rankings])
            scores = np.stack([r.scores for r in rankings])
            seconds = time.perf_counter() - t
            cfg = Config(strategy.name, name)
            results[cfg] = _config_result(cfg, index, truth, queries, orders, scores, dist,
                                          k_diag=diagnosis_k, seconds=seconds)
        if "rerank-maxsim" in scorers:
            scorers["rerank-maxsim"].forget()
    timings["total"] = time.perf_counter() - t0
    stamp = encoder.stamp.as_dict() if hasattr(encoder, "stamp") else {}
    stamp["pipeline_version"] = PIPELINE_VERSION
    return Evaluation(corpus, truth, queries, indexes, results, unavailable, stamp, timings, diagnosis_k)


def summary_rows(ev: Evaluation, *, phrasing: str = "all", ks: Sequence[int] = KS) -> list[dict]:
    """The study-style table: one row per configuration, intervals as :class:`Interval`."""
    mask = ev.mask(phrasing)
    rows = []
    for cfg, res in ev.results.items():
        ranks = res.needle_rank[mask]
        groups = [q.question_id or q.id for q, m in zip(ev.queries, mask) if m]
        index = ev.indexes.get(cfg.strategy)
        row: dict = {"config": cfg.label, "strategy": cfg.strategy, "retriever": cfg.retriever,
                     "phrasing": phrasing, "queries": int(mask.sum())}
        for k in ks:
            hits = hits_at_k(ranks, k)
            row[f"R@{k}"] = clustered_rate(hits, groups)  # questions are the unit (phrasings correlate)
        mrr = clustered_mean(reciprocal_rank(ranks), groups)
        row["MRR"] = mrr.estimate
        row["MRR_low"], row["MRR_high"] = mrr.low, mrr.high
        if index is not None:
            audit = index.report.audit
            row["destroyed"] = len(index.report.destroyed)
            row["chunks"] = len(index.chunks)
            row["embedded_tokens"] = audit.total_tokens
            row["header_share"] = audit.header_share
            row["truncated"] = audit.truncated
        else:  # an external run: its chunking is not ours to audit
            row.update(destroyed=None, chunks=None, embedded_tokens=None, header_share=None, truncated=None)
        row["seconds"] = res.seconds
        rows.append(row)
    return rows


def interval_cells(row: dict) -> dict:
    """Flatten Interval cells for tables and JSON: R@k, R@k_low, R@k_high."""
    out = {}
    for key, value in row.items():
        if isinstance(value, Interval):
            out[key] = value.estimate
            out[f"{key}_low"] = value.low
            out[f"{key}_high"] = value.high
        else:
            out[key] = value
    return out
