"""A collection's questions x configurations -> per-question ranked lists and graded judgments.

Two levels (:mod:`ragdiag.documents.collections`):

- **document level** (BEIR, TREC, ``ir_datasets``): every strategy chunks the
  documents and every retriever ranks the chunks, as for ragdiag's own corpora;
  the *document ranking* is read from the chunk ranking, each document at the
  rank of its best chunk (a chunk is relevant when its document is judged
  relevant, with that grade). The ranking is read from the top
  :data:`CHUNK_DEPTH` chunks; a retriever that did not retrieve a chunk at all
  (BM25: no shared word) does not rank its document.
- **span level** (SQuAD-style, ragdiag's needles): the ordinary
  :func:`~ragdiag.evaluation.evaluate.evaluate`; the ranked items are the top
  chunks and the relevant items are the chunks holding the needle whole (grade
  1). A question whose needle no chunk holds (destroyed by chunking) is judged
  against a placeholder item no run can return, so every measure is 0 for it,
  here and in ``trec_eval``.

Either way :class:`JudgedRuns` holds, per configuration, one ranked list of
item ids per question and one set of judgments per question: the measures of
:mod:`ragdiag.core.graded` read it, and :meth:`JudgedRuns.trec` gives the same
run and qrels as files for ``trec_eval``, ``pytrec_eval`` or ``ranx``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

from ..core.defaults import RERANK_HEAD
from ..documents.collections.records import Collection
from ..documents.truth import GroundTruth
from .records import Config, Evaluation

__all__ = ["JudgedRuns", "evaluate_collection", "span_runs", "CHUNK_DEPTH", "DESTROYED_ITEM"]

#: Chunks read per question to rank documents (a document beyond them is not ranked).
CHUNK_DEPTH = 1000
#: The item id a destroyed needle is judged against (``<question id>`` + this): no run returns it.
DESTROYED_ITEM = ":no-chunk-holds-the-answer"


@dataclass(frozen=True)
class JudgedRuns:
    """Per configuration, a ranked list of item ids per question, and the judgments of each question.

    ``items`` is ``document`` or ``chunk``; ``questions`` the question ids (the
    unit of every interval); ``judgments[i]`` maps item ids to grades for
    question ``i`` (span level: per configuration, since chunks differ by strategy).
    """

    collection: Collection
    items: str
    questions: tuple[str, ...]
    ranked: Mapping[Config, tuple[tuple[str, ...], ...]]
    judgments: Mapping[Config, tuple[Mapping[str, int], ...]]
    groups: tuple[str, ...] = ()  # each entry's question (the cluster of intervals); default: ``questions``
    tags: tuple[tuple[str, ...], ...] = ()
    evaluation: Evaluation | None = None  # span level: the full evaluation (chunk analysis)
    unavailable: Mapping[str, str] = field(default_factory=dict)
    encoder_stamp: Mapping = field(default_factory=dict)
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if not self.groups:
            object.__setattr__(self, "groups", self.questions)

    @property
    def configs(self) -> tuple[Config, ...]:
        """The configurations evaluated, in evaluation order."""
        return tuple(self.ranked)

    def values(self, config: Config | str, measure: str, *, k: int) -> np.ndarray:
        """Per question, the value of ``measure`` (``ndcg``, ``map``, ``recall``, ``success``, ``all_found``) at ``k``."""
        from ..core.graded import measure as graded_measure, ndcg_at_k

        cfg = Config.parse(config) if isinstance(config, str) else config
        if cfg not in self.ranked:
            raise KeyError(f"{cfg.label} was not evaluated; evaluated: {', '.join(c.label for c in self.ranked)}")
        if measure == "ndcg":
            return ndcg_at_k(self.ranked[cfg], self.judgments[cfg], k=k, gain=self.collection.gain)
        return graded_measure(measure, self.ranked[cfg], self.judgments[cfg], k=k)

    def trec(self, config: Config | str) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
        """``(run, qrels)`` as ``pytrec_eval`` and ``ranx`` take them: scores strictly decreasing with rank."""
        from ..documents.collections.trec import run_scores

        cfg = Config.parse(config) if isinstance(config, str) else config
        run = {q: dict(zip(items, run_scores(len(items)))) for q, items in zip(self.questions, self.ranked[cfg])}
        qrels = {q: dict(j) for q, j in zip(self.questions, self.judgments[cfg])}
        return run, qrels


def _document_ranking(chunks, order: np.ndarray, scores: np.ndarray, zero_unretrieved: bool) -> tuple[str, ...]:
    """Documents in the order of their best chunk (first seen in ``order``)."""
    seen: dict[str, None] = {}
    for pos, score in zip(order, scores):
        if zero_unretrieved and score == 0:
            break  # sorted by score: every later chunk scores 0 too (not retrieved)
        seen.setdefault(chunks[int(pos)].doc_id, None)
    return tuple(seen)


def evaluate_collection(collection: Collection, *, encoder, strategies: str | Iterable[str] | None = None,
                        retrievers: str | Iterable[str] | None = None, store=None, cross_encoder: str | None = None,
                        progress=None, rerank_head: int = RERANK_HEAD) -> JudgedRuns:
    """Rank every question of ``collection`` with every (strategy x retriever) configuration.

    Span-level collections go through :func:`~ragdiag.evaluation.evaluate.evaluate`
    (kept in ``JudgedRuns.evaluation``) and :func:`span_runs`.
    """
    from ..core.validate import require_type

    require_type(collection, Collection, "collection", hint="open it with ragdiag.documents.collections.open_collection")
    if not collection.document_level:
        from .evaluate import evaluate

        ev = evaluate(collection.corpus, collection.truth, encoder=encoder, strategies=strategies,
                      retrievers=retrievers, store=store, cross_encoder=cross_encoder, progress=progress,
                      rerank_head=rerank_head)
        return span_runs(ev, collection)
    return _document_runs(collection, encoder=encoder, strategies=strategies, retrievers=retrievers, store=store,
                          cross_encoder=cross_encoder, progress=progress, rerank_head=rerank_head)


def _document_runs(collection: Collection, *, encoder, strategies, retrievers, store, cross_encoder, progress,
                   rerank_head) -> JudgedRuns:
    from ..index.chunking import parse_strategies
    from ..index.store.stamps import run_stamp
    from ..retrieval.base import QueryBatch, Unavailable
    from ..retrieval.registry import build_retriever, index_context, parse_retrievers, RunContext
    from ..retrieval.search import search
    from .evaluate import build_index, prepare_retrievers

    t0 = time.perf_counter()
    strats, names = parse_strategies(strategies), parse_retrievers(retrievers)
    topics = collection.topics
    texts = [t.text for t in topics]
    qvecs = store.embed(encoder, texts).vectors if store is not None else encoder.encode(texts)
    batch = QueryBatch(tuple(texts), qvecs)
    run = RunContext(encoder=encoder, store=store, options={"cross_encoder": cross_encoder,
                                                           "rerank_head": rerank_head, "progress": progress})
    unavailable = prepare_retrievers(names, run)
    keep = run.keep_tokens if run.token_sinks else None
    no_needles = GroundTruth((), ())
    ranked: dict[Config, tuple[tuple[str, ...], ...]] = {}
    judgments = tuple(dict(t.judgments) for t in topics)
    empty = [np.zeros(0, dtype=np.int64)] * len(topics)
    for strategy in strats:
        index = build_index(collection.corpus, no_needles, strategy, encoder, store=store, progress=progress,
                            keep_tokens=keep)
        ctx = index_context(index, run)
        depth = min(len(index.chunks), CHUNK_DEPTH)
        for name in names:
            if name in unavailable:
                continue
            try:
                retriever = build_retriever(name, ctx)
            except Unavailable as exc:
                unavailable[name] = exc.reason
                continue
            found = search(retriever, batch, depth=depth, targets=empty)
            zero = bool(getattr(retriever, "zero_is_unmatched", False))
            ranked[Config(strategy.name, name)] = tuple(
                _document_ranking(index.chunks, found.order[i], found.scores[i], zero) for i in range(len(topics)))
        run.strategy_done()
    return JudgedRuns(collection, "document", tuple(t.id for t in topics), ranked,
                      {cfg: judgments for cfg in ranked}, tags=tuple(t.tags for t in topics),
                      unavailable=unavailable, encoder_stamp=run_stamp(encoder), seconds=time.perf_counter() - t0)


def span_runs(ev: Evaluation, collection: Collection | None = None) -> JudgedRuns:
    """The chunk rankings of a span-level evaluation, judged by which chunks hold each question's needle.

    One entry per in-domain *query* (a question's phrasings are separate lists;
    ``questions`` holds the query ids). The ranked list stops where the
    retriever stopped retrieving (BM25: no shared word), as ``per_query.csv`` does.
    """
    if collection is None:
        collection = Collection(name=ev.corpus.name, format="ragdiag", level="span", corpus=ev.corpus,
                                 truth=ev.truth, ood=ev.truth.ood)
    queries = [q for q in ev.queries if q.in_domain]
    idx = [i for i, q in enumerate(ev.queries) if q.in_domain]
    ranked, judged = {}, {}
    for cfg, res in ev.results.items():
        if cfg.external:
            continue
        index = ev.indexes[cfg.strategy]
        lists = []
        for i in idx:
            n = int(res.retrieved[i]) if res.retrieved is not None else res.top_order.shape[1]
            lists.append(tuple(index.chunks[int(p)].id for p in res.top_order[i, :n]))
        ranked[cfg] = tuple(lists)
        judged[cfg] = tuple(
            {index.chunks[int(h)].id: 1 for h in index.holders[q.question_id]} or {q.question_id + DESTROYED_ITEM: 1}
            for q in queries)
    return JudgedRuns(collection, "chunk", tuple(q.id for q in queries), ranked, judged,
                      groups=tuple(q.question_id for q in queries), tags=tuple(q.tags for q in queries), evaluation=ev, unavailable=dict(ev.unavailable),
                      encoder_stamp=dict(ev.encoder_stamp))
