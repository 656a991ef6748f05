"""Queries x configurations -> per-query ranks and distances.

A configuration is a chunking strategy and a retriever (``E/hybrid``). For
every configuration and query we keep the rank of the first chunk holding the
needle (0 when none does), the top 20 with scores and cosine distances (for
every retriever: the distance gate works whatever ranked the chunk). What a
query gets at a gate is the outcome ladder's (:mod:`ragdiag.analyses.outcomes`).
Queries are embedded once and reused across strategies.

The result types (:class:`~ragdiag.evaluation.records.Config`, :class:`~ragdiag.evaluation.records.ExternalKey`,
:class:`~ragdiag.evaluation.records.ConfigResult`, :class:`~ragdiag.evaluation.records.Evaluation`...)
live in :mod:`ragdiag.evaluation.records`.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, Sequence

import numpy as np

from ..index.audit import chunk_report
from ..index.chunking import Chunk, Strategy, chunk_corpus, parse_strategies
from ..documents.corpus import Corpus
from ..core.blas import blas_threads_for
from ..core.defaults import RERANK_HEAD, TOP
from ..index.encoder.protocols import EncodesInSessions, SupportsTokenSink
from ..index.splitters.semantic import breakpoint_encoder
from .records import Config, ConfigResult, Evaluation, StrategyIndex
from ..core.progress import Progress, ProgressEvent
from ..retrieval.base import QueryBatch, Unavailable
from ..retrieval.bm25 import BM25Retriever
from ..retrieval.dense import cosine_distances, normalisation_check
from ..retrieval.registry import RunContext, build_retriever, index_context, parse_retrievers, retriever_spec
from ..retrieval.search import LocalSearch, Search, SearchEngine, from_full
from ..retrieval.vectors import rows_of
from ..documents.truth import GroundTruth, Query

__all__ = ["evaluate", "build_index"]


def _holders(chunks: Sequence[Chunk], truth: GroundTruth) -> dict[str, np.ndarray]:
    by_doc: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        by_doc.setdefault(c.doc_id, []).append(i)
    return {
        q.id: np.array([i for i in by_doc.get(q.doc_id, []) if chunks[i].contains(q.start, q.end)], dtype=np.int64)
        for q in truth.questions
    }


class _TokenTap:
    """An encoder whose ``encode`` also hands each text's wordpiece vectors to ``keep``.

    One forward pass gives both the sentence vector and the token vectors
    (MaxSim). Only ``stamp``, ``encode``, ``count_tokens`` and an encoding session are exposed:
    what the store uses.
    """

    def __init__(self, encoder: SupportsTokenSink, keep: Callable[[str, np.ndarray], None]):
        self._encoder, self._keep = encoder, keep
        if callable(getattr(encoder, "count_tokens", None)):
            self.count_tokens = encoder.count_tokens  # the store orders what it embeds by it
        if isinstance(encoder, EncodesInSessions):  # Ray's pool lives for the whole embed, not one part
            self.encoding_session = encoder.encoding_session
            self.texts_per_commit = encoder.texts_per_commit

    @property
    def stamp(self):
        """The wrapped encoder's stamp (the store keys vectors by it)."""
        return self._encoder.stamp

    def encode(self, texts, *, progress=None):
        """Unit vectors of ``texts``; their wordpiece vectors go to ``keep`` on the way."""
        texts = list(texts)
        return self._encoder.encode(texts, progress=progress, token_sink=lambda i, tok: self._keep(texts[i], tok))


def build_index(corpus: Corpus, truth: GroundTruth, strategy: Strategy, encoder, *, store=None,
                progress: Progress | None = None, keep_tokens: Callable[[str, np.ndarray], None] | None = None
                ) -> StrategyIndex:
    """Chunk, audit and embed one strategy (vectors through the store when given).

    ``keep_tokens(text, vectors)`` receives the wordpiece vectors of every text
    embedded now (for MaxSim), when the encoder can give them.
    """
    with breakpoint_encoder(encoder):  # strategy S finds its breakpoints with the run's model
        chunks = chunk_corpus(corpus, strategy)
    memo = None
    if getattr(store, "root", None) is not None:
        from ..index.store.memo import Memo

        memo = Memo(store.root)
    report = chunk_report(strategy, chunks, truth.needles(), encoder, memo=memo)
    if keep_tokens is not None and isinstance(encoder, SupportsTokenSink) and not strategy.late:
        encoder = _TokenTap(encoder, keep_tokens)
    texts = [c.embed_text for c in chunks]
    cb = (lambda d, t: progress(ProgressEvent("embed", strategy.name, None, d, t))) if progress else None
    if strategy.late:  # vectors that depend on the chunk's context: their own store space (ragdiag.index.late)
        from ..index.late import late_embed

        vectors, computed = late_embed(encoder, chunks, store=store, progress=cb)
    elif store is not None:
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


def _needle_score(found: Search, i: int) -> float:
    """The retriever's score of query ``i``'s best-ranked needle holder."""
    if found.target_score is not None:
        return float(found.target_score[i])
    r = int(found.target_rank[i])
    if r > found.scores.shape[1]:
        raise ValueError("a search without target scores must reach the needle's rank")
    return float(found.scores[i, r - 1])


def _config_result(config: Config, index: StrategyIndex, truth: GroundTruth, queries: Sequence[Query],
                   found: Search, query_vectors: np.ndarray | None, full_distances: np.ndarray | None = None, *,
                   seconds: float, zero_is_unretrieved: bool = False, distances=None) -> ConfigResult:
    """Per-query outcome from a bounded search: distances only for the top and the needle holders.

    ``distances(positions)`` gives (queries x positions) cosine distances (default: ``query_vectors``
    against the index's vectors). ``zero_is_unretrieved``: a chunk scoring 0 was not retrieved (BM25:
    it shares no token with the query). The full-matrix form ``(orders, scores, distances)`` of every
    chunk is accepted too, in place of ``(found, query_vectors, full_distances)``.
    """
    if not isinstance(found, Search):
        holders_ = [index.holders[q.question_id] if q.in_domain else np.zeros(0, dtype=np.int64) for q in queries]
        found, full = from_full(np.asarray(found), np.asarray(query_vectors), holders_), full_distances
        distances, query_vectors = (lambda cols: full[:, cols]), None
    nq = len(queries)
    needle_rank = np.asarray(found.target_rank, dtype=np.int64)
    needle_distance = np.full(nq, np.nan)
    top_order = found.order[:, :TOP]
    top_holds = np.zeros(top_order.shape, dtype=bool)
    holders = [index.holders[q.question_id] if q.in_domain else np.zeros(0, dtype=np.int64) for q in queries]
    # Cosine distances of the shown chunks and of every holder: one small (queries x needed chunks) product.
    needed = np.unique(np.concatenate([top_order.ravel(), *holders]).astype(np.int64))
    dist = (distances(needed) if distances is not None
            else cosine_distances(query_vectors, rows_of(index.vectors, needed)))
    col = {int(p): j for j, p in enumerate(needed)}
    top_cols = np.searchsorted(needed, top_order)
    for i, q in enumerate(queries):
        h = holders[i]
        if not q.in_domain or not h.size:
            continue
        needle_distance[i] = dist[i, [col[int(p)] for p in h]].min()
        top_holds[i] = np.isin(top_order[i], h)
        if zero_is_unretrieved and needle_rank[i] and _needle_score(found, i) == 0:  # not retrieved at all
            needle_rank[i] = 0
            top_holds[i] &= found.scores[i, :TOP] != 0
    rows = np.arange(nq)[:, None]
    top_distance = dist[rows, top_cols]
    return ConfigResult(
        config=config,
        needle_rank=needle_rank,
        needle_distance=needle_distance,
        top1_distance=top_distance[:, 0],
        top_order=top_order,
        top_scores=found.scores[:, :TOP],
        top_distance=top_distance,
        top_holds=top_holds,
        seconds=seconds,
        retrieved=(found.scores[:, :TOP] != 0).sum(axis=1) if zero_is_unretrieved else None,
    )


def prepare_retrievers(names, run: RunContext) -> dict[str, str]:
    """Run each retriever's one-off preparation (a model to load, tokens to keep) on ``run``; what cannot be
    prepared is returned as ``{name: reason}`` and skipped by the caller, not raised."""
    unavailable: dict[str, str] = {}
    for name in names:
        prepare = retriever_spec(name).prepare
        if prepare is not None:
            try:
                prepare(run)
            except Unavailable as exc:
                unavailable[name] = exc.reason
    return unavailable


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
    rerank_head: int = RERANK_HEAD,
    on_strategy: Callable[[Evaluation], None] | None = None,
    retriever_options: dict | None = None,
    engine: SearchEngine | None = None,
) -> Evaluation:
    """Run every (strategy x retriever) configuration on every query of ``truth``.

    ``encoder`` is an :class:`~ragdiag.index.encoder.Encoder` (or anything with the
    same ``encode``/``count_tokens``/``window_ends``/``stamp``). Retrievers are
    looked up in :mod:`ragdiag.retrieval.registry` and built per strategy.
    Retrievers that cannot run here (a cross-encoder not available offline) are
    listed in ``Evaluation.unavailable`` with the reason, never dropped silently.
    ``progress`` receives :class:`~ragdiag.core.progress.ProgressEvent` records.
    ``on_strategy(partial)``, when given, receives the evaluation of the
    strategies finished so far, after each strategy (to show rows early).
    ``retriever_options``: more build options for the registry's retrievers
    (e.g. ``rescore``, ``hnsw`` for the dense variants). ``engine``: where the searches run
    (default :class:`~ragdiag.retrieval.search.LocalSearch`, this process; the results of
    :class:`~ragdiag.retrieval.sharded.ShardedSearch` on Ray are the same).
    """
    from ..index.store.stamps import run_stamp  # here, not at import: the store is not needed to import this module
    from ..core.validate import positive_int, require_type

    require_type(corpus, Corpus, "corpus", hint="load it with ragdiag.documents.corpus.load_corpus")
    require_type(truth, GroundTruth, "truth", hint="load it with ragdiag.documents.truth.load_truth")
    positive_int(rerank_head, "rerank_head")
    for name in ("encode", "count_tokens"):
        if not callable(getattr(encoder, name, None)):
            raise TypeError(f"encoder must be an encoder (with encode and count_tokens), got {type(encoder).__name__}")
    engine = engine if engine is not None else LocalSearch()
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

    options = {**(retriever_options or {}), "cross_encoder": cross_encoder, "rerank_head": rerank_head,
               "progress": progress}
    run = RunContext(encoder=encoder, store=store, options=options)
    unavailable = prepare_retrievers(names, run)
    keep = run.keep_tokens if run.token_sinks else None

    indexes: dict[str, StrategyIndex] = {}
    results: dict[Config, ConfigResult] = {}
    retriever_stamps: dict[str, dict] = {}
    notes: dict[str, str] = {}
    for strategy in strats:
        with blas_threads_for(corpus.n_chars):  # one BLAS thread on a small corpus (core.blas)
            t = time.perf_counter()
            index = build_index(corpus, truth, strategy, encoder, store=store, progress=progress, keep_tokens=keep)
            timings[f"index_{strategy.name}"] = time.perf_counter() - t
            indexes[strategy.name] = index
            targets = [index.holders[q.question_id] if q.in_domain else np.zeros(0, dtype=np.int64) for q in queries]
            ctx = index_context(index, run)
            for name in names:
                if name in unavailable:
                    continue
                t = time.perf_counter()
                try:
                    retriever = build_retriever(name, ctx)
                except Unavailable as exc:
                    unavailable[name] = exc.reason
                    continue
                found = engine.search(retriever, batch, depth=TOP, targets=targets)
                seconds = time.perf_counter() - t
                if progress is not None:
                    progress(ProgressEvent("rank", strategy.name, name, 1, 1))
                cfg = Config(strategy.name, name)
                if callable(getattr(retriever, "stamp", None)):
                    retriever_stamps[cfg.label] = retriever.stamp()
                ran = engine.stamp(retriever) if callable(getattr(engine, "stamp", None)) else None
                if ran:  # stamp what ran: a sharded search (identical results, another process layout)
                    retriever_stamps[cfg.label] = {**retriever_stamps.get(cfg.label, {}), "search": ran}
                # A retriever with its own embedding model gives its own distances: the gate's cut belongs to one model.
                own = getattr(retriever, "cosine_distances", None)
                own_dist = (lambda cols, own=own: own(batch)[:, cols]) if callable(own) else None
                results[cfg] = _config_result(cfg, index, truth, queries, found, qvecs, distances=own_dist,
                                              seconds=seconds, zero_is_unretrieved=getattr(retriever, "zero_is_unmatched", False))
            bm25 = ctx._built.get("bm25")  # built when asked for, or as a part of hybrid and the rerankers
            if isinstance(bm25, BM25Retriever):
                silent = [q.id for q, u in zip(queries, bm25.index.unmatched(batch.texts)) if u]
                if silent:
                    notes[f"bm25 {strategy.name}"] = (
                        f"{len(silent)} of {len(queries)} queries share no word with any chunk of {strategy.name} "
                        f"(e.g. {', '.join(silent[:5])}): BM25 retrieves nothing for them and hybrid ranks them by "
                        "dense alone")
        run.strategy_done()
        if on_strategy is not None:
            on_strategy(Evaluation(corpus, truth, queries, dict(indexes), dict(results), dict(unavailable),
                                   run_stamp(encoder), dict(timings),
                                   retriever_stamps=dict(retriever_stamps), notes=dict(notes)))
    timings["total"] = time.perf_counter() - t0
    return Evaluation(corpus, truth, queries, indexes, results, unavailable, run_stamp(encoder), timings,
                      retriever_stamps=retriever_stamps, notes=notes)

