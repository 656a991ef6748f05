"""Cost beside quality: build time, query latency, embedded and prompt tokens, and the Pareto front.

Per configuration:

* **index build time** (seconds): chunking plus what the retriever's pipeline
  builds, as its registry spec says (:func:`ragdiag.retrieval.registry.builds`,
  :func:`~ragdiag.retrieval.registry.embeds`): the chunk embeddings when it or a
  retriever it requires embeds, and each index a spec in its pipeline builds
  (BM25: its sparse index), timed by building that retriever now. So hybrid and
  the rerankers are charged both (a MaxSim reranker takes its chunk token vectors
  from the same forward pass, at no extra model cost), a quantised dense variant
  no BM25 index, a text-only plugin no embedding. When the evaluation embedded
  every chunk now, its measured time is used; when vectors came from the store,
  the embedding time is extrapolated from embedding a seeded sample of chunks now
  (the ``build_basis`` column says which; ``build covers`` what was charged).
* **query latency** (ms per query, median and p95): one query at a time, end
  to end from the query text (embedding it included) to the ranked list, on a
  seeded sample of queries, after one untimed warm-up query. A reranker's
  chunk token vectors are prepared before timing (index-time work), its
  scoring is timed. The machine is recorded (:func:`machine`).
* **embedded tokens**: wordpieces embedded for the index (the token audit; 0 for a retriever that embeds nothing, BM25).
* **prompt tokens**: the mean, over all queries, of the wordpieces of the
  prompt the gate would send at the cut (0 for NO ANSWER), counted with the
  embedding model's tokenizer as a stand-in for the LLM's.

Quality is span R@k at the primary k (:data:`ragdiag.core.defaults.PRIMARY_K`). A
configuration is Pareto-optimal when no other has at least its recall at no
more cost, one of them strictly.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from ..index.chunking import chunk_corpus
from ..index.citations import Answer, cite
from .compare.intervals import clustered_rate
from ..core.blas import blas_threads_for
from ..core.defaults import RERANK_HEAD, SEED, TOP
from ..evaluation.records import Config, Evaluation, parse_key
from ..core.metrics import hits_at_k
from ..retrieval.base import QueryBatch, Unavailable
from ..retrieval.registry import RunContext, build_retriever, builds, embeds, index_context, pipeline_specs
from ..core.stats import Interval
from ..core.gate import Gate
from .threshold.gate import kept_chunks

__all__ = [
    "machine",
    "prompt_tokens",
    "measure_latency",
    "measure_build",
    "CostRow",
    "costs",
    "at_gate",
    "cost_rows",
    "pareto",
    "LATENCY_SAMPLE",
]

#: Queries timed per configuration (seeded sample; all when fewer).
LATENCY_SAMPLE = 16
#: Chunks embedded to extrapolate embedding time when the vectors came from the store.
BUILD_SAMPLE = 32


def machine() -> dict:
    """Where the timings were measured."""
    info = {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "python": platform.python_version()}
    if hasattr(os, "getloadavg"):
        info["load_average_1min"] = round(os.getloadavg()[0], 2)
    torch = sys.modules.get("torch")  # what ran; a run that needed no model never loaded torch
    if torch is not None:
        info["torch_threads"] = torch.get_num_threads()
        info["omp_wait_policy"] = os.environ.get("OMP_WAIT_POLICY", "(OpenMP default)")
    return info


def prompt_tokens(ev: Evaluation, config: Config | str, encoder, gate: Gate | None = None) -> np.ndarray:
    """Per query: wordpieces of the prompt ``gate`` would send (0: NO ANSWER)."""
    gate = Gate() if gate is None else gate
    res = ev.result(config)
    if res.config.external:
        raise ValueError(f"{res.config.label} is an external run: there are no chunks of ours to cite")
    chunks = ev.indexes[res.config.strategy].chunks
    prompts, where = [], []
    for i, q in enumerate(ev.queries):
        kept = [(chunks[p], d) for p, d in kept_chunks(res, i, gate)]
        answer = cite(q.text, kept, ev.corpus, gate)
        if isinstance(answer, Answer):
            prompts.append(answer.prompt)
            where.append(i)
    out = np.zeros(len(ev.queries), dtype=np.int64)
    if prompts:
        out[where] = np.asarray(encoder.count_tokens(prompts), dtype=np.int64)
    return out


def _retriever(ev: Evaluation, cfg: Config, run):
    """The configuration's retriever, built from its registry entry as the evaluation built it."""
    return build_retriever(cfg.retriever, index_context(ev.indexes[cfg.strategy], run))


def _run(encoder, cross_encoder: str | None = None):
    return RunContext(encoder=encoder, options={"cross_encoder": cross_encoder})


def measure_latency(ev: Evaluation, config: Config | str, encoder, *, sample: int = LATENCY_SAMPLE,
                    seed: int = SEED, run=None) -> np.ndarray:
    """Milliseconds per query, one query at a time (see the module notes), for a seeded sample of queries."""
    res = ev.result(config)
    cfg = res.config
    if cfg.external:
        raise ValueError(f"{cfg.label} is an external run: its latency is not ours to measure")
    if sample < 1:
        raise ValueError(f"sample must be at least 1 query, got {sample}")
    run = _run(encoder) if run is None else run
    retriever = _retriever(ev, cfg, run)
    rng = np.random.default_rng(seed)
    n = len(ev.queries)
    chosen = np.sort(rng.choice(n, size=min(sample, n), replace=False))
    texts = [ev.queries[i].text for i in chosen]
    needs_vectors = embeds(cfg.retriever)
    if hasattr(getattr(retriever, "scorer", None), "prepare"):
        chunks = ev.indexes[cfg.strategy].chunks
        pool_heads = retriever.base.rank(QueryBatch(tuple(texts), encoder.encode(texts)),
                                         depth=getattr(retriever, "head", RERANK_HEAD))
        heads = {int(p) for r in pool_heads for p in r.order}
        retriever.scorer.prepare([chunks[p].embed_text for p in sorted(heads)])  # index-time work, untimed

    def one(text: str) -> None:
        vec = encoder.encode([text]) if needs_vectors else None
        retriever.rank(QueryBatch((text,), vec), depth=TOP)

    one(texts[0])  # warm-up, untimed
    out = []
    for text in texts:
        t = time.perf_counter()
        one(text)
        out.append((time.perf_counter() - t) * 1000.0)
    return np.asarray(out)


def measure_build(ev: Evaluation, strategy: str, encoder, *, retrievers: Sequence[str] = (),
                  sample: int = BUILD_SAMPLE, seed: int = SEED) -> dict:
    """Seconds to build one strategy's indexes: ``chunking``, ``embedding`` (and how it was had: ``basis``),
    and under ``builds`` each retriever of ``retrievers``' pipelines whose spec builds an index of its own,
    timed by building it now from its registry entry (BM25: its sparse index)."""
    index = ev.indexes[strategy]
    t = time.perf_counter()
    chunks = chunk_corpus(ev.corpus, index.strategy)
    chunking = time.perf_counter() - t
    timed: dict[str, float] = {}
    ctx = index_context(index, _run(encoder))
    for spec in dict.fromkeys(s for name in retrievers for s in pipeline_specs(name) if s.builds):
        t = time.perf_counter()
        try:
            spec.build(replace(ctx, name=spec.name))  # its own build step (requirements are timed on their own)
        except Unavailable:
            timed[spec.name] = float("nan")
            continue
        timed[spec.name] = time.perf_counter() - t
    key = f"index_{strategy}"
    if index.embedded == len(index.chunks) and key in ev.timings:
        embedding, basis = ev.timings[key], "measured (evaluation embedded every chunk)"
    else:
        rng = np.random.default_rng(seed)
        pick = rng.choice(len(chunks), size=min(sample, len(chunks)), replace=False)
        texts = [chunks[int(i)].embed_text for i in pick]
        t = time.perf_counter()
        encoder.encode(texts)
        per_chunk = (time.perf_counter() - t) / max(len(texts), 1)
        embedding = per_chunk * len(chunks)
        basis = f"embedding extrapolated from {len(texts)} chunks"
    return {"chunking": chunking, "embedding": embedding, "basis": basis, "builds": timed}


@dataclass(frozen=True)
class CostRow:
    """One configuration's quality beside its costs: build time, latency, embedded and prompt tokens."""

    config: str
    recall: Interval  # span R@k at the primary k
    k: int
    build_s: float
    build_basis: str
    latency_median_ms: float
    latency_p95_ms: float
    latency_queries: int
    embedded_tokens: int
    prompt_tokens: float  # mean per query at the cut (NO ANSWER = 0)
    cut: float
    keep: int
    pareto_latency: bool = False
    pareto_prompt: bool = False
    build_covers: tuple[str, ...] = ()  # what build_s charged: "chunking", "embedding", indexes built

    def row(self) -> dict:
        """The flat table row (column name to value, times rounded) the page and the export show."""
        return {"config": self.config, f"R@{self.k}": self.recall, "build s": round(self.build_s, 3),
                "build basis": self.build_basis, "build covers": " + ".join(self.build_covers),
                "ms/query median": round(self.latency_median_ms, 3),
                "ms/query p95": round(self.latency_p95_ms, 3), "timed queries": self.latency_queries,
                "embedded tokens": self.embedded_tokens, "prompt tokens/query": round(self.prompt_tokens, 1),
                "Pareto (latency)": self.pareto_latency, "Pareto (prompt)": self.pareto_prompt}


def pareto(quality: Sequence[float], cost: Sequence[float]) -> np.ndarray:
    """Per point: no other point has quality >= and cost <=, with one strict (NaN cost: never optimal).

    >>> pareto([0.5, 0.6, 0.6, 0.4], [10, 20, 30, 5]).tolist()
    [True, True, False, True]
    """
    q, c = np.asarray(quality, dtype=float), np.asarray(cost, dtype=float)
    out = np.zeros(len(q), dtype=bool)
    for i in range(len(q)):
        if np.isnan(q[i]) or np.isnan(c[i]):
            continue
        ok = ~(np.isnan(q) | np.isnan(c))
        dominated = ok & (q >= q[i]) & (c <= c[i]) & ((q > q[i]) | (c < c[i]))
        out[i] = not dominated.any()
    return out


def costs(ev: Evaluation, encoder, gate: Gate | None = None, *, configs: Sequence[Config | str] | None = None,
          sample: int = LATENCY_SAMPLE, seed: int = SEED, cross_encoder: str | None = None) -> list[CostRow]:
    """Measure every (or each given) ragdiag configuration at ``gate``; Pareto flags over the configurations measured.

    Recall is at the gate's ``k``; prompt tokens are what the gate sends (:func:`at_gate` prices the same
    measurement at another gate without timing anything again). On a small corpus the measurements run on one
    BLAS thread, as the evaluation's searches do (:func:`ragdiag.core.blas.blas_threads_for`): a MaxSim pair there
    takes 0.4 ms, not 15.
    """
    gate = Gate() if gate is None else gate
    with blas_threads_for(ev.corpus.n_chars):
        return _costs(ev, encoder, gate, configs=configs, sample=sample, seed=seed, cross_encoder=cross_encoder)


def _costs(ev: Evaluation, encoder, gate: Gate, *, configs, sample: int, seed: int,
           cross_encoder: str | None) -> list[CostRow]:
    k = gate.k
    chosen = [parse_key(c) if isinstance(c, str) else c for c in (configs or ev.results)]
    chosen = [c for c in chosen if not c.external]
    measured = {s: measure_build(ev, s, encoder, seed=seed, retrievers=[c.retriever for c in chosen if c.strategy == s])
                for s in dict.fromkeys(c.strategy for c in chosen)}
    run = _run(encoder, cross_encoder)
    mask = ev.in_domain
    rows = []
    for cfg in chosen:
        res = ev.result(cfg)
        b = measured[cfg.strategy]
        embedding = embeds(cfg.retriever)
        built = [s.name for s in pipeline_specs(cfg.retriever) if s.builds]
        build = b["chunking"] + (b["embedding"] if embedding else 0.0) + sum(b["builds"][n] for n in built)
        basis = b["basis"] if embedding else "measured"
        covers = ("chunking", *(("embedding",) if embedding else ()), *builds(cfg.retriever))
        try:
            lat = measure_latency(ev, cfg, encoder, sample=sample, seed=seed, run=run)
        except Unavailable:  # e.g. a cross-encoder not installed: no latency rather than an error
            lat = np.full(0, np.nan)
        hits = hits_at_k(res.needle_rank[mask], k)
        rows.append(CostRow(
            config=cfg.label, recall=clustered_rate(hits, ev.groups(mask)), k=k, build_s=float(build),
            build_basis=basis, latency_median_ms=float(np.median(lat)) if lat.size else float("nan"),
            latency_p95_ms=float(np.percentile(lat, 95)) if lat.size else float("nan"), latency_queries=int(lat.size),
            embedded_tokens=int(ev.indexes[cfg.strategy].report.audit.total_tokens) if embedding else 0,
            prompt_tokens=float(prompt_tokens(ev, cfg, encoder, gate).mean()), cut=gate.cut, keep=gate.keep,
            build_covers=covers,
        ))
        run.strategy_done()  # drop per-strategy state (MaxSim's token vectors)
    return _with_pareto(rows)


def _with_pareto(rows: Sequence[CostRow]) -> list[CostRow]:
    quality = [r.recall.estimate for r in rows]
    on_lat = pareto(quality, [r.latency_median_ms for r in rows])
    on_prompt = pareto(quality, [r.prompt_tokens for r in rows])
    return [replace(r, pareto_latency=bool(a), pareto_prompt=bool(b)) for r, a, b in zip(rows, on_lat, on_prompt)]


def at_gate(rows: Sequence[CostRow], ev: Evaluation, encoder, gate: Gate) -> list[CostRow]:
    """The same measurement priced at ``gate``: prompt tokens (and the Pareto flags) recounted, timings kept.

    Build time and latency do not depend on the cut; what the gate sends does. A
    report measures once, decides its cut, then prices the rows there, so its
    cost table is at the cut every other section uses.
    """
    if any(r.k != gate.k for r in rows):
        raise ValueError(f"the costs were measured at R@{rows[0].k}; measure them again at k = {gate.k}")
    priced = [replace(r, cut=gate.cut, keep=gate.keep,
                      prompt_tokens=float(prompt_tokens(ev, r.config, encoder, gate).mean())) for r in rows]
    return _with_pareto(priced)


def cost_rows(items: Sequence[CostRow]) -> list[dict]:
    """The table rows of ``items``, in their order (see :meth:`CostRow.row`)."""
    return [r.row() for r in items]
