"""Reranking the head of a ranking with an expensive pair scorer.

``rerank-ce``: a sentence-transformers CrossEncoder (default
cross-encoder/ms-marco-MiniLM-L-6-v2), loaded offline or reported unavailable.
``rerank-maxsim``: ColBERT-style late interaction *scoring* (not a trained
ColBERT): sum over query wordpieces of the best cosine with any chunk
wordpiece, using all-MiniLM-L6-v2's token embeddings. Works offline.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from ..index.encoder.model import Encoder
from ..index.encoder.resolve import ModelUnavailable, resolve_model_dir
from .base import QueryBatch, Ranking, Retriever, Unavailable
from .search import Search, search as _search

__all__ = [
    "PairScorer",
    "CrossEncoderScorer",
    "MaxSimScorer",
    "RerankRetriever",
    "DEFAULT_CROSS_ENCODER",
    "maxsim",
]

DEFAULT_CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"


class ScoreCache(Protocol):
    """Where pair scores are kept between runs (the store implements it)."""

    def get(self, identity: str, query: str, texts: Sequence[str]) -> np.ndarray:
        """Cached scores, NaN where none is stored (or a stored one failed its checksum)."""
        ...

    def put(self, identity: str, query: str, texts: Sequence[str], scores: np.ndarray) -> None:
        """Keep ``scores`` of (``query``, each text) under the scorer's ``identity``."""
        ...


class PairScorer(Protocol):
    """Scores (query, text) pairs, higher = more relevant; ``identity`` names the model and its weights."""

    identity: str  # stamped into cached scores: model name + weights hash

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One score per text for ``query`` (higher = more relevant)."""
        ...


def maxsim(query_tokens: np.ndarray, chunk_tokens: np.ndarray) -> float:
    """Sum over query tokens of the max cosine with any chunk token (unit token vectors).

    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]]); c = np.array([[1.0, 0.0], [0.6, 0.8]])
    >>> maxsim(q, c)
    1.8
    """
    if len(query_tokens) == 0 or len(chunk_tokens) == 0:
        return 0.0
    return float((query_tokens @ chunk_tokens.T).max(axis=1).sum())


class MaxSimScorer:
    """Late-interaction MaxSim on a bi-encoder's token embeddings (named as such everywhere)."""

    def __init__(self, encoder: Encoder):
        self.encoder = encoder
        stamp = encoder.stamp
        self.identity = f"maxsim:{stamp.model}:{stamp.weights_sha256[:16]}:{stamp.precision}"
        self._tokens: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}  # queries' wordpiece vectors: small, kept for the whole run

    def prepare(self, texts: Sequence[str], *, progress=None) -> None:
        """Embed the wordpieces of many chunks in one length-sorted pass (fast) before scoring."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._tokens))
        if missing:
            # float16 halves the memory of ~100 vectors per chunk; MaxSim sums are unaffected at 1e-3.
            for t, v in zip(missing, self.encoder.token_embeddings(missing, progress=progress)):
                self._tokens[t] = v.astype(np.float16)

    def keep(self, text: str, tokens: np.ndarray) -> None:
        """Keep a chunk's wordpiece vectors computed elsewhere (by the embedding pass)."""
        self._tokens[text] = tokens.astype(np.float16)

    def _token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.prepare(texts)
        return [self._tokens[t] for t in texts]

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """:func:`maxsim` of the query's token embeddings against each text's."""
        q = self._queries.get(query)
        if q is None:
            (q,) = self.encoder.token_embeddings([query])
            self._queries[query] = q = q.astype(np.float16)
        q = q.astype(np.float32)
        return np.array([maxsim(q, c.astype(np.float32)) for c in self._token_vectors(texts)])

    def forget(self) -> None:
        """Drop cached chunk token embeddings (they are large); the queries' are kept for the next strategy."""
        self._tokens.clear()


class CrossEncoderScorer:
    """A sentence-transformers CrossEncoder loaded offline; raises Unavailable otherwise."""

    def __init__(self, model: str | None = None, *, batch_size: int = 32):
        from ..index.encoder.resolve import _weights_hash

        name = model or DEFAULT_CROSS_ENCODER
        try:
            folder = resolve_model_dir(name, kind="cross-encoder")
        except ModelUnavailable as exc:
            raise Unavailable("rerank-ce", str(exc)) from None
        try:
            from ..index.encoder.hardware import import_torch, select_device

            import_torch()  # before sentence-transformers, which imports it too
            from sentence_transformers import CrossEncoder

            self.device = select_device()  # CUDA when torch sees it (RAGDIAG_DEVICE overrides)
            self.model = CrossEncoder(str(folder), device=self.device, local_files_only=True)
        except Exception as exc:  # noqa: BLE001 - report, never crash the evaluation
            raise Unavailable("rerank-ce", f"cross-encoder {name!r} failed to load: {exc}") from None
        self.name = name
        self.batch_size = batch_size
        self.identity = f"ce:{name}:{_weights_hash(folder)[:16]}"

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """The cross-encoder's score of each (query, text) pair."""
        if not texts:
            return np.zeros(0)
        pairs = [(query, t) for t in texts]
        out = self.model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(out, dtype=np.float64).reshape(len(texts))


class RerankRetriever:
    """Rescore the top ``head`` of ``base`` with ``scorer``; the tail keeps base order.

    Within the head, ties in the scorer's score keep the base order. Scores
    of tail positions are NaN (they were not rescored).
    """

    def __init__(self, name: str, base: Retriever, scorer: PairScorer, texts: Sequence[str], *, head: int = 25,
                 cache: ScoreCache | None = None, progress=None):
        self.name = name
        self.base = base
        self.scorer = scorer
        self.texts = list(texts)
        self.head = head
        self.cache = cache
        self.progress = progress  # (done, total) while the scorer prepares many texts at once

    def _rescore(self, batch: QueryBatch, heads: list[np.ndarray]) -> list[np.ndarray]:
        """The scorer's scores of each query's head (cached ones reused), in head order."""
        head_texts = [[self.texts[i] for i in h] for h in heads]
        identity = self.scorer.identity
        if self.cache is not None and callable(getattr(self.cache, "get_many", None)):
            scores = self.cache.get_many(identity, batch.texts, head_texts)  # the store read in one pass
        else:
            scores = [
                self.cache.get(identity, q, ts) if self.cache is not None else np.full(len(ts), np.nan)
                for q, ts in zip(batch.texts, head_texts)
            ]
        missing = [np.isnan(s) for s in scores]
        if hasattr(self.scorer, "prepare"):
            self.scorer.prepare([t for ts, m in zip(head_texts, missing) for t, miss in zip(ts, m) if miss],
                                progress=self.progress)
        for q, ts, s, m in zip(batch.texts, head_texts, scores, missing):
            if m.any():
                todo = [t for t, miss in zip(ts, m) if miss]
                s[m] = np.asarray(self.scorer.score(q, todo), dtype=np.float64)
                if self.cache is not None:
                    self.cache.put(identity, q, todo, s[m])
        return scores

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        """Per query: the rescored head, then the base order's tail (tail scores NaN)."""
        bases = self.base.rank(batch)
        heads = [b.order[: self.head] for b in bases]
        scores = self._rescore(batch, heads)
        out = []
        for base, head, s in zip(bases, heads, scores):
            # Stable: equal scores keep the base (hybrid) order.
            perm = np.argsort(-s, kind="stable")
            order = np.concatenate([head[perm], base.order[self.head :]])
            tail = np.full(len(base.order) - len(head), np.nan)
            all_scores = np.concatenate([s[perm], tail])
            if depth is not None:
                order, all_scores = order[:depth], all_scores[:depth]
            out.append(Ranking(order, all_scores))
        return out

    def bounded_search(self, batch: QueryBatch, *, depth: int, targets=None) -> Search:
        """As :meth:`rank`, from the base's bounded search: a target beyond the head keeps its base rank."""
        found = _search(self.base, batch, depth=max(depth, self.head), targets=targets)
        heads = [o[: self.head] for o in found.order]
        scores = self._rescore(batch, heads)
        orders, out_scores, ranks = [], [], found.target_rank.copy()
        t = targets if targets is not None else [np.zeros(0, dtype=np.int64)] * len(batch)
        for i, (base, head, s) in enumerate(zip(found.order, heads, scores)):
            perm = np.argsort(-s, kind="stable")
            order = np.concatenate([head[perm], base[self.head :]])[:depth]
            tail = np.full(max(0, len(base) - len(head)), np.nan)
            orders.append(order)
            out_scores.append(np.concatenate([s[perm], tail])[:depth])
            in_head = np.flatnonzero(np.isin(head[perm], t[i]))
            if in_head.size:
                ranks[i] = in_head[0] + 1
        return Search(np.stack(orders) if orders else found.order[:, :depth],
                      np.stack(out_scores) if out_scores else found.scores[:, :depth], ranks)
