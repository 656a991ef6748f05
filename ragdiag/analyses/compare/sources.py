"""Where questions came from as a slice: how many were drafted, and whether the verdicts hold without them.

Questions accepted from drafts (``"source": "draft"`` in the ground truth,
:attr:`ragdiag.documents.truth.Question.source`) start from the needle's own
words. :func:`source_effect` reruns the comparison with the best without them
(:func:`without_questions` drops their queries from every result), so a
report can say whether the verdict rests on them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

import numpy as np

from ...core.defaults import ALPHA, PRIMARY_K
from ...evaluation.records import Evaluation

__all__ = ["SourceEffect", "source_effect", "without_questions"]

_PER_QUERY = ("needle_rank", "needle_distance", "top1_distance", "top_order", "top_scores", "top_distance",
              "top_holds", "retrieved")


def without_questions(ev: Evaluation, question_ids: Iterable[str]) -> Evaluation:
    """``ev`` without the queries of ``question_ids`` (every phrasing), in every result and in the truth."""
    drop = set(question_ids)
    keep = np.array([q.question_id not in drop for q in ev.queries], dtype=bool)
    results = {}
    for key, res in ev.results.items():
        sliced = {f: getattr(res, f)[keep] for f in _PER_QUERY if getattr(res, f) is not None}
        results[key] = replace(res, **sliced)
    truth = replace(ev.truth, questions=tuple(q for q in ev.truth.questions if q.id not in drop))
    return replace(ev, queries=tuple(q for q, k in zip(ev.queries, keep) if k), results=results, truth=truth)


@dataclass(frozen=True)
class SourceEffect:
    """The comparison with the best with and without the questions of one ``source``."""

    source: str
    n_source: int
    n_questions: int
    k: int
    best: str
    best_set: tuple[str, ...]
    best_without: str
    best_set_without: tuple[str, ...]

    @property
    def changed(self) -> bool:
        """Whether the best or the best set differs without them."""
        return self.best != self.best_without or set(self.best_set) != set(self.best_set_without)

    def sentence(self) -> str:
        """"12 of 44 questions came from drafts; without them the verdict holds: ..." (or what changes).

        >>> SourceEffect("draft", 12, 44, 4, "E/hybrid", ("E/hybrid", "F/hybrid"), "E/hybrid",
        ...              ("E/hybrid", "F/hybrid")).sentence()
        '12 of 44 questions came from drafts; without them the verdict at R@4 holds: E/hybrid best, 2 tied with it.'
        """
        head = f"{self.n_source} of {self.n_questions} questions came from {self.source}s; without them the verdict"
        if not self.changed:
            return f"{head} at R@{self.k} holds: {self.best} best, {len(self.best_set)} tied with it."
        parts = []
        if self.best != self.best_without:
            parts.append(f"the best is {self.best_without} instead of {self.best}")
        joins = sorted(set(self.best_set_without) - set(self.best_set))
        leaves = sorted(set(self.best_set) - set(self.best_set_without))
        if joins:
            parts.append(f"{', '.join(joins)} join{'s' * (len(joins) == 1)} the tied set")
        if leaves:
            parts.append(f"{', '.join(leaves)} leave{'s' * (len(leaves) == 1)} it")
        return f"{head} at R@{self.k} changes: {'; '.join(parts)}."


def source_effect(ev: Evaluation, *, source: str = "draft", k: int = PRIMARY_K,
                  alpha: float = ALPHA) -> SourceEffect | None:
    """The comparison with the best with and without the questions whose ``source`` is ``source``.

    None when no question has that source, or when none (or all) would be left.
    """
    from .best import best

    ids = {q.id for q in ev.truth.questions if q.source == source}
    if not ids or len(ids) == len(ev.truth.questions):
        return None
    configs = [c for c in ev.results if not c.external]
    if len(configs) < 2:
        return None
    full = best(ev, k=k, configs=configs, alpha=alpha)
    rest = best(without_questions(ev, ids), k=k, configs=configs, alpha=alpha)
    return SourceEffect(source, len(ids), len(ev.truth.questions), k, full.best, full.best_set, rest.best,
                        rest.best_set)
