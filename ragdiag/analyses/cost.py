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
  The embedding rate (seconds per wordpiece) is measured once per run, after an
  untimed warm-up, and charged to each strategy by the wordpieces it embeds.
* **query latency** (ms per query, median with its 95% distribution-free
  interval, and p95): one query at a time, end to end from the query text
  (embedding it included) to the ranked list, on a seeded sample of queries,
  after one untimed warm-up query. A reranker (a spec with a ``pool``) is timed
  on the first :data:`RERANK_SAMPLE` queries of the same sample: its chunk token
  vectors are prepared before timing (index-time work, read from the store's
  memo when a run kept them), its scoring is timed. Each strategy's retrievers
  are built once and shared by its configurations' runs. The machine is
  recorded (:func:`machine`).
* **embedded tokens**: wordpieces embedded for the index (the token audit; 0 for a retriever that embeds nothing, BM25).
* **prompt tokens**: the mean, over all queries, of the wordpieces of the
  prompt the gate would send at the cut (0 for NO ANSWER), counted with the
  embedding model's tokenizer as a stand-in for the LLM's.

Quality is span R@k at the primary k (:data:`ragdiag.core.defaults.PRIMARY_K`). A
configuration is Pareto-optimal when no other has at least its recall at no
more cost, one of them strictly.
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from ..index.chunking import chunk_corpus
from ..index.citations import cite
from .compare.intervals import clustered_rate
from ..core.blas import blas_threads_for
from ..core.defaults import RERANK_HEAD, SEED, TOP
from ..evaluation.records import Config, Evaluation, parse_key
from ..core.metrics import hits_at_k
from ..retrieval.base import QueryBatch, Unavailable
from ..core.progress import Progress, ProgressEvent
from ..retrieval.registry import (BuildContext, RunContext, build_retriever, builds, embeds, index_context,
                                  pipeline_specs, retriever_spec)
from ..core.stats import Interval
from ..core.gate import Gate, OnGate
from .threshold.gate import answer_tokens, kept_chunks

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
    "RERANK_SAMPLE",
    "BUILD_SAMPLE",
    "EmbeddingRate",
    "embedding_rate",
    "median_interval",
]

#: Queries timed per configuration (seeded sample; all when fewer).
LATENCY_SAMPLE = 16
#: Queries timed per reranker (the first of the same seeded sample): the fewest whose [min, max] is a 95%
#: interval of the median (96.9%); each needs its head's chunk token vectors, the costliest preparation.
RERANK_SAMPLE = 6
#: Chunks embedded, once per run, to measure the embedding rate when the vectors came from the store.
BUILD_SAMPLE = 32
#: The store's memo kind for the chunk token vectors a reranker's timing prepares (see :func:`measure_latency`).
TOKENS_MEMO = "maxsim-tokens"


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
    answers = []
    for i, q in enumerate(ev.queries):
        kept = [(chunks[p], d) for p, d in kept_chunks(res, i, gate)]
        answers.append(cite(q.text, kept, ev.corpus, gate))
    return answer_tokens(encoder, answers)


def _run(encoder, cross_encoder: str | None = None):
    return RunContext(encoder=encoder, options={"cross_encoder": cross_encoder})


def median_interval(values, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """The distribution-free interval of the median: ``(low, high, coverage)`` from order statistics.

    With ``n`` values sorted, ``[x_(j), x_(n+1-j)]`` covers the median with probability
    ``1 - 2 P(Bin(n, 1/2) <= j - 1)`` whatever the distribution; ``j`` is the largest with that
    coverage at least ``confidence``. Below 6 values no pair reaches 95%: the range is returned
    with its own coverage. NaN for no values.

    >>> median_interval([5.0, 1.0, 4.0, 2.0, 3.0, 6.0])  # n = 6: the range, 1 - 2/64
    (1.0, 6.0, 0.96875)
    >>> lo, hi, cover = median_interval(list(range(1, 17)))  # n = 16: the 4th and the 13th
    >>> (lo, hi, round(cover, 4))
    (4.0, 13.0, 0.9787)
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    tail, j = 1, 1  # tail = sum of C(n, i) for i < j; the coverage of [x_(j), x_(n+1-j)] is 1 - 2 tail / 2^n
    while j < (n + 1) // 2:
        nxt = tail + math.comb(n, j)
        if 1.0 - 2.0 * nxt / 2**n < confidence:
            break
        tail, j = nxt, j + 1
    cover = 1.0 - 2.0 * tail / 2**n
    return float(x[j - 1]), float(x[n - j]), float(cover)


def _sample(n: int, size: int, seed: int) -> np.ndarray:
    """The seeded sample of query positions, in draw order: its first ``m`` are the sample of size ``m``."""
    return np.random.default_rng(seed).choice(n, size=min(size, n), replace=False)


def _keep_tokens(scorer, texts: list[str], encoder, memo) -> None:
    """A reranker's index-time work before timing: its scorer's token vectors of ``texts``.

    A scorer that keeps wordpiece vectors (MaxSim) has them read from the store's memo
    when a run kept them there, else computed with the model and kept (float16, as the
    scorer holds them: the same values either way); any other scorer prepares itself.
    """
    if memo is None or not hasattr(scorer, "keep"):
        scorer.prepare(texts)
        return
    from ..index.store.memo import content_key

    key = content_key(TOKENS_MEMO + "-v1", scorer.identity, texts)
    got = memo.get(TOKENS_MEMO, key)
    if got is not None and got["ends"].size == len(texts):
        starts = np.concatenate([[0], got["ends"][:-1]])
        for text, a, b in zip(texts, starts, got["ends"]):
            scorer.keep(text, got["tokens"][a:b])
        return
    vectors = [v.astype(np.float16) for v in encoder.token_embeddings(texts)]
    for text, v in zip(texts, vectors):
        scorer.keep(text, v)
    dim = vectors[0].shape[1] if vectors else 0
    memo.put(TOKENS_MEMO, key, {"tokens": np.concatenate(vectors) if vectors else np.zeros((0, dim), np.float16),
                                "ends": np.cumsum([len(v) for v in vectors]).astype(np.int64)})


def measure_latency(ev: Evaluation, config: Config | str, encoder, *, sample: int = LATENCY_SAMPLE,
                    seed: int = SEED, run=None, context: BuildContext | None = None, memo=None,
                    rerank_sample: int = RERANK_SAMPLE) -> np.ndarray:
    """Milliseconds per query, one query at a time (see the module notes), for a seeded sample of queries.

    ``context``: the strategy's build context, shared by its configurations (each retriever built once);
    ``memo``: the store's :class:`~ragdiag.index.store.memo.Memo`, where a reranker's chunk token vectors
    are kept between runs; ``rerank_sample``: how many of the sample time a reranker.
    """
    res = ev.result(config)
    cfg = res.config
    if cfg.external:
        raise ValueError(f"{cfg.label} is an external run: its latency is not ours to measure")
    if sample < 1 or rerank_sample < 1:
        raise ValueError(f"sample and rerank_sample must be at least 1 query, got {sample} and {rerank_sample}")
    if context is None:
        context = index_context(ev.indexes[cfg.strategy], _run(encoder) if run is None else run)
    retriever = build_retriever(cfg.retriever, context)
    reranks = retriever_spec(cfg.retriever).pool is not None
    chosen = _sample(len(ev.queries), sample, seed)
    chosen = np.sort(chosen[:rerank_sample] if reranks else chosen)
    texts = [ev.queries[i].text for i in chosen]
    needs_vectors = embeds(cfg.retriever)
    if hasattr(getattr(retriever, "scorer", None), "prepare"):
        chunks = ev.indexes[cfg.strategy].chunks
        pool_heads = retriever.base.rank(QueryBatch(tuple(texts), encoder.encode(texts)),
                                         depth=getattr(retriever, "head", RERANK_HEAD))
        heads = {int(p) for r in pool_heads for p in r.order}
        _keep_tokens(retriever.scorer, [chunks[p].embed_text for p in sorted(heads)], encoder, memo)  # untimed

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


@dataclass(frozen=True)
class EmbeddingRate:
    """Seconds per embedded wordpiece, measured on ``chunks`` chunks (``tokens`` wordpieces) after a warm-up."""

    seconds_per_token: float
    chunks: int
    tokens: int

    @property
    def basis(self) -> str:
        """How an extrapolated embedding time was had, in words."""
        return f"embedding extrapolated from {self.chunks} chunks ({self.tokens:,} wordpieces)"


def _embedded(index) -> np.ndarray:
    """Per chunk, the wordpieces the encoder reads (the audit's count, cut at the window)."""
    audit = index.report.audit
    return np.minimum(np.asarray(audit.tokens, dtype=np.int64), audit.max_seq_length)


def embedding_rate(ev: Evaluation, encoder, strategies: Sequence[str] | None = None, *, sample: int = BUILD_SAMPLE,
                   seed: int = SEED) -> EmbeddingRate:
    """Embed a seeded sample of the chunks of ``strategies`` (default: all) once, after an untimed warm-up.

    The warm-up loads the model when it is not loaded yet, so its load is never charged to a strategy. The
    sample is drawn from the strategies' chunks together; the rate is per wordpiece read, so a strategy of
    longer chunks is charged more.
    """
    names = list(ev.indexes) if strategies is None else list(strategies)
    pool = [(s, i) for s in names for i in range(len(ev.indexes[s].chunks))]
    if not pool:
        raise ValueError("no chunks to embed: no strategy given")
    pick = np.sort(np.random.default_rng(seed).choice(len(pool), size=min(sample, len(pool)), replace=False))
    chosen = [pool[int(i)] for i in pick]
    texts = [ev.indexes[s].chunks[i].embed_text for s, i in chosen]
    tokens = int(sum(_embedded(ev.indexes[s])[i] for s, i in chosen))
    encoder.encode(texts[:2])  # warm-up, untimed (loads the model)
    t = time.perf_counter()
    encoder.encode(texts)
    return EmbeddingRate((time.perf_counter() - t) / max(tokens, 1), len(texts), tokens)


def measure_build(ev: Evaluation, strategy: str, encoder, *, retrievers: Sequence[str] = (),
                  sample: int = BUILD_SAMPLE, seed: int = SEED, rate: EmbeddingRate | None = None,
                  context: BuildContext | None = None) -> dict:
    """Seconds to build one strategy's indexes: ``chunking``, ``embedding`` (and how it was had: ``basis``),
    and under ``builds`` each retriever of ``retrievers``' pipelines whose spec builds an index of its own,
    timed by building it now from its registry entry (BM25: its sparse index).

    ``rate``: the run's embedding rate (:func:`embedding_rate`; measured on this strategy when not given);
    ``context``: the strategy's build context, which keeps each index built here for the latency runs.
    """
    index = ev.indexes[strategy]
    t = time.perf_counter()
    chunk_corpus(ev.corpus, index.strategy)
    chunking = time.perf_counter() - t
    timed: dict[str, float] = {}
    ctx = index_context(index, _run(encoder)) if context is None else context
    for spec in dict.fromkeys(s for name in retrievers for s in pipeline_specs(name) if s.builds):
        t = time.perf_counter()
        try:
            built = spec.build(replace(ctx, name=spec.name))  # its own build step (requirements are timed on their own)
        except Unavailable:
            timed[spec.name] = float("nan")
            continue
        timed[spec.name] = time.perf_counter() - t
        ctx.keep(spec.name, built)  # the latency runs use the index timed here
    key = f"index_{strategy}"
    if index.embedded == len(index.chunks) and key in ev.timings:
        embedding, basis = ev.timings[key], "measured (evaluation embedded every chunk)"
    else:
        if rate is None:
            rate = embedding_rate(ev, encoder, [strategy], sample=sample, seed=seed)
        embedding, basis = rate.seconds_per_token * float(_embedded(index).sum()), rate.basis
    return {"chunking": chunking, "embedding": embedding, "basis": basis, "builds": timed}


@dataclass(frozen=True)
class CostRow(OnGate):
    """One configuration's quality beside its costs: build time, latency, embedded and prompt tokens, at ``gate``."""

    config: str
    recall: Interval  # span R@k at the gate's k
    gate: Gate  # recall at its k, prompts priced at its keep and cut
    build_s: float
    build_basis: str
    latency_median_ms: float
    latency_p95_ms: float
    latency_queries: int
    embedded_tokens: int
    prompt_tokens: float  # mean per query at the cut (NO ANSWER = 0)
    pareto_latency: bool = False
    pareto_prompt: bool = False
    build_covers: tuple[str, ...] = ()  # what build_s charged: "chunking", "embedding", indexes built
    latency_low_ms: float = float("nan")  # the median's distribution-free interval (median_interval)
    latency_high_ms: float = float("nan")
    latency_coverage: float = float("nan")  # its coverage: at least 95% from 6 timed queries

    def row(self) -> dict:
        """The flat table row (column name to value, times rounded) the page and the export show."""
        return {"config": self.config, f"R@{self.k}": self.recall, "build s": round(self.build_s, 3),
                "build basis": self.build_basis, "build covers": " + ".join(self.build_covers),
                "ms/query median": round(self.latency_median_ms, 3),
                "ms/query median low": round(self.latency_low_ms, 3),
                "ms/query median high": round(self.latency_high_ms, 3),
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
          sample: int = LATENCY_SAMPLE, seed: int = SEED, cross_encoder: str | None = None, store=None,
          priced: bool = True, progress: Progress | None = None) -> list[CostRow]:
    """Measure every (or each given) ragdiag configuration at ``gate``; Pareto flags over the configurations measured.

    Recall is at the gate's ``k``; prompt tokens are what the gate sends (:func:`at_gate` prices the same
    measurement at another gate without timing anything again; ``priced=False`` leaves them NaN for a caller
    that prices the rows at its own gate, the report). ``store``: where a reranker's chunk token vectors are
    kept between runs (its memo); the timings never read cached scores or indexes. ``progress`` receives one
    ``time`` event per configuration measured. On a small corpus the measurements run on one BLAS thread, as
    the evaluation's searches do (:func:`ragdiag.core.blas.blas_threads_for`): a MaxSim pair there takes 0.4 ms,
    not 15.
    """
    gate = Gate() if gate is None else gate
    from ..retrieval.builtin import memo_of

    with blas_threads_for(ev.corpus.n_chars):
        return _costs(ev, encoder, gate, configs=configs, sample=sample, seed=seed, cross_encoder=cross_encoder,
                      memo=memo_of(store), priced=priced, progress=progress)


def _costs(ev: Evaluation, encoder, gate: Gate, *, configs, sample: int, seed: int, cross_encoder: str | None,
           memo, priced: bool, progress: Progress | None) -> list[CostRow]:
    k = gate.k
    chosen = [parse_key(c) if isinstance(c, str) else c for c in (configs or ev.results)]
    chosen = [c for c in chosen if not c.external]
    strategies = list(dict.fromkeys(c.strategy for c in chosen))
    extrapolated = [s for s in strategies if not (ev.indexes[s].embedded == len(ev.indexes[s].chunks)
                                                  and f"index_{s}" in ev.timings)]
    rate = embedding_rate(ev, encoder, extrapolated, seed=seed) if extrapolated else None  # once per run
    run = _run(encoder, cross_encoder)
    mask = ev.in_domain
    groups = ev.groups(mask)
    measured: dict[Config, CostRow] = {}
    for strategy in strategies:
        members = [c for c in chosen if c.strategy == strategy]
        context = index_context(ev.indexes[strategy], run)  # one per strategy: each retriever built once
        b = measure_build(ev, strategy, encoder, seed=seed, retrievers=[c.retriever for c in members], rate=rate,
                          context=context)
        for cfg in members:
            if progress is not None:
                progress(ProgressEvent("time", cfg.strategy, cfg.retriever, len(measured), len(chosen)))
            measured[cfg] = _cost_row(ev, cfg, encoder, gate, b, context, sample=sample, seed=seed, memo=memo,
                                      priced=priced, hits=hits_at_k(ev.result(cfg).needle_rank[mask], k),
                                      groups=groups)
        run.strategy_done()  # drop per-strategy state (MaxSim's token vectors)
    if progress is not None and chosen:
        progress(ProgressEvent("time", chosen[-1].strategy, chosen[-1].retriever, len(chosen), len(chosen)))
    return _with_pareto([measured[c] for c in chosen])


def _cost_row(ev: Evaluation, cfg: Config, encoder, gate: Gate, b: dict, context: BuildContext, *, sample: int,
              seed: int, memo, priced: bool, hits: np.ndarray, groups) -> CostRow:
    embedding = embeds(cfg.retriever)
    built = [s.name for s in pipeline_specs(cfg.retriever) if s.builds]
    build = b["chunking"] + (b["embedding"] if embedding else 0.0) + sum(b["builds"][n] for n in built)
    basis = b["basis"] if embedding else "measured"
    covers = ("chunking", *(("embedding",) if embedding else ()), *builds(cfg.retriever))
    try:
        lat = measure_latency(ev, cfg, encoder, sample=sample, seed=seed, context=context, memo=memo)
    except Unavailable:  # e.g. a cross-encoder not installed: no latency rather than an error
        lat = np.full(0, np.nan)
    low, high, coverage = median_interval(lat)
    prompt = float(prompt_tokens(ev, cfg, encoder, gate).mean()) if priced else float("nan")
    return CostRow(
        config=cfg.label, recall=clustered_rate(hits, groups), gate=gate, build_s=float(build),
        build_basis=basis, latency_median_ms=float(np.median(lat)) if lat.size else float("nan"),
        latency_p95_ms=float(np.percentile(lat, 95)) if lat.size else float("nan"), latency_queries=int(lat.size),
        embedded_tokens=int(ev.indexes[cfg.strategy].report.audit.total_tokens) if embedding else 0,
        prompt_tokens=prompt, build_covers=covers,
        latency_low_ms=low, latency_high_ms=high, latency_coverage=coverage,
    )


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
    priced = [replace(r, gate=gate,
                      prompt_tokens=float(prompt_tokens(ev, r.config, encoder, gate).mean())) for r in rows]
    return _with_pareto(priced)


def cost_rows(items: Sequence[CostRow]) -> list[dict]:
    """The table rows of ``items``, in their order (see :meth:`CostRow.row`)."""
    return [r.row() for r in items]
