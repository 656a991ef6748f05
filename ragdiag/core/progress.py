"""Progress of long work as event records, never strings to be parsed back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["ProgressEvent", "Progress", "STAGES"]

#: Stages in the order one strategy goes through them (``time``: the cost table's measurements, after them all).
STAGES = ("embed", "rank", "rerank", "time")


@dataclass(frozen=True)
class ProgressEvent:
    """``done`` of ``total`` units of ``stage`` for one strategy (and retriever, when ranking).

    >>> ProgressEvent("embed", "E", None, 3, 10).label
    'embedding E'
    """

    stage: str  # one of STAGES
    strategy: str
    retriever: str | None
    done: int
    total: int

    @property
    def label(self) -> str:
        """What is being done, in words (``embedding E``, ``ranking E/bm25``)."""
        words = {"embed": "embedding", "rank": "ranking", "rerank": "reranking", "time": "timing"}
        what = self.strategy if self.retriever is None else f"{self.strategy}/{self.retriever}"
        return f"{words.get(self.stage, self.stage)} {what}"


Progress = Callable[[ProgressEvent], None]
