"""One protocol for every retriever: a batch of queries in, rankings out.

A retriever ranks the chunks of one index (one chunking strategy) for a batch
of queries. Hybrid search and reranking are compositions of retrievers;
fusion is a pure function. Rankings are arrays of chunk positions (indices
into the index's chunk tuple, which is in chunk-id order), best first.

Ties are broken deterministically: by chunk position (== chunk-id order),
unless a retriever documents a finer rule (RRF: best single rank first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["QueryBatch", "Ranking", "Retriever", "Unavailable", "top_k_desc"]


@dataclass(frozen=True)
class QueryBatch:
    """Query texts and, when a dense model is in play, their unit vectors (embedded once)."""

    texts: tuple[str, ...]
    vectors: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.texts)


@dataclass(frozen=True)
class Ranking:
    """One query's ranked chunk positions and the retriever's scores (higher is better)."""

    order: np.ndarray  # int positions into the chunk tuple, best first
    scores: np.ndarray  # same length, the retriever's own score


@runtime_checkable
class Retriever(Protocol):
    """``rank(batch, depth=None)``: per query, a ranking of up to ``depth`` chunks (None: all)."""

    name: str

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        """Per query of ``batch``, the ranking of up to ``depth`` chunks (None: all), best first."""


class Unavailable(Exception):
    """A retriever that cannot run here; ``reason`` says why and how to fix it."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


def top_k_desc(scores: np.ndarray, depth: int | None) -> np.ndarray:
    """Row-wise positions of the ``depth`` highest scores, ties broken by position.

    >>> top_k_desc(np.array([[0.5, 0.9, 0.5, 0.1]]), 3).tolist()
    [[1, 0, 2]]
    """
    scores = np.atleast_2d(scores)
    n = scores.shape[1]
    depth = n if depth is None else min(depth, n)
    # Stable sort on the negated scores: equal scores keep position (chunk-id) order.
    return np.argsort(-scores, axis=1, kind="stable")[:, :depth]
