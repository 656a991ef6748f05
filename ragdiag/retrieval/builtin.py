"""The built-in retrievers, registered by name (see :mod:`ragdiag.retrieval.registry`)."""

from __future__ import annotations

from ..core.defaults import RERANK_HEAD
from ..core.progress import ProgressEvent
from .bm25 import BM25Retriever, stored_tokens
from .dense import DenseRetriever
from .hybrid import HybridRetriever
from .registry import BuildContext, RetrieverSpec, RunContext, register_retriever
from .rerank import CrossEncoderScorer, MaxSimScorer, RerankRetriever
from .variant_specs import build_dense_variant, variant_specs

__all__: list[str] = []


def _rerank(ctx: BuildContext, scorer) -> RerankRetriever:
    progress = ctx.options.get("progress")
    cb = None
    if progress is not None:
        def cb(done: int, total: int, name=ctx.name, strategy=ctx.strategy.name) -> None:
            progress(ProgressEvent("rerank", strategy, name, done, total))
    return RerankRetriever(ctx.name, ctx.retriever("hybrid"), scorer, ctx.texts,
                           head=int(ctx.options.get("rerank_head", RERANK_HEAD)),
                           cache=ctx.store.score_cache() if ctx.store is not None else None, progress=cb)


def memo_of(store):
    """The store's :class:`~ragdiag.index.store.memo.Memo` (None without a store, or one without a folder)."""
    root = getattr(store, "root", None)
    if root is None:
        return None
    from ..index.store.memo import Memo

    return Memo(root)


def _maxsim_scorer(run: RunContext) -> MaxSimScorer:
    scorer = run.shared("maxsim", lambda: MaxSimScorer(run.encoder))
    run.after_strategy(scorer.forget)  # token vectors are large: keep one strategy's at a time
    return scorer


def _prepare_maxsim(run: RunContext) -> None:
    scorer = _maxsim_scorer(run)
    # The chunks' wordpiece vectors come from the embedding pass itself: one forward pass for both.
    if scorer.keep not in run.token_sinks:
        run.token_sinks.append(scorer.keep)


def _cross_encoder(run: RunContext) -> CrossEncoderScorer:
    return run.shared("cross-encoder", lambda: CrossEncoderScorer(run.options.get("cross_encoder")))


def _dense(ctx: BuildContext):
    if ctx.param is None:
        return DenseRetriever(ctx.vectors)
    return build_dense_variant(ctx)  # dense@MODEL: another embedding model


register_retriever(RetrieverSpec(
    "dense", build=_dense, parametric=True,
    description="exact cosine search on all-MiniLM-L6-v2 unit vectors; dense@use or dense@FOLDER for another model"))
register_retriever(RetrieverSpec(
    "bm25", build=lambda ctx: BM25Retriever(stored_tokens(list(ctx.texts), memo_of(ctx.store))), embeds=False,
    builds=("bm25",),
    description="BM25 (Lucene idf, k1=1.2, b=0.75) on the embedded texts"))
register_retriever(RetrieverSpec(
    "hybrid", build=lambda ctx: HybridRetriever([ctx.retriever("dense"), ctx.retriever("bm25")]),
    requires=("dense", "bm25"), fuses=("dense", "bm25"), embeds=False,
    description="reciprocal rank fusion of dense and bm25 (k=60)"))
register_retriever(RetrieverSpec(
    "rerank-maxsim", build=lambda ctx: _rerank(ctx, _maxsim_scorer(ctx.run)), requires=("hybrid",),
    pool="hybrid", embeds=False, prepare=_prepare_maxsim,
    description=f"MaxSim on MiniLM wordpiece vectors over the hybrid top {RERANK_HEAD}"))
register_retriever(RetrieverSpec(
    "rerank-ce", build=lambda ctx: _rerank(ctx, _cross_encoder(ctx.run)), requires=("hybrid",),
    pool="hybrid", embeds=False, prepare=_cross_encoder,
    description=f"cross-encoder over the hybrid top {RERANK_HEAD} (a model you supply)"))
for _spec in variant_specs():  # dense-int8, dense-binary, dense-hnsw (+ -rescore, @MODEL)
    register_retriever(_spec)
