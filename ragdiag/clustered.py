"""Intervals for shares counted per query (or per slot) when queries come in clusters (a question's phrasings).

A question has several phrasings; they are not independent draws, so an
interval that treats every query as its own trial is too narrow. Every share
(funnel stages, redundancy, granularity, recall) therefore gets the interval
used for recall: Wilson's on the Kish effective number of questions
(:func:`ragdiag.compare.clustered_wilson`), with the exact (Clopper-Pearson)
bound at zero events or all events, so "0 of 64" still says how high the rate
could be.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .stats import Interval

__all__ = ["clustered_share", "query_clusters"]


def query_clusters(queries) -> np.ndarray:
    """One cluster label per query: its question id (ood queries are their own cluster)."""
    return np.array([q.question_id or q.id for q in queries], dtype=object)


def clustered_share(successes: Sequence[float] | np.ndarray, clusters: Sequence | np.ndarray,
                    trials: Sequence[float] | np.ndarray | None = None, *, confidence: float = 0.95) -> Interval:
    """Share ``sum(successes) / sum(trials)`` with the clustered Wilson interval over questions.

    Parameters
    ----------
    successes : array_like of float
        Per item (query or slot), ``0 <= successes <= trials``.
    clusters : array_like
        Each item's question (its cluster); ood queries are their own.
    trials : array_like of float, optional
        Per item; default 1 each.
    confidence : float, keyword-only
        Two-sided level in ``(0, 1)``.

    Returns
    -------
    Interval
        The plain ratio as the estimate; bounds from
        :func:`ragdiag.compare.clustered_wilson` on the per-question sums (exact
        bound at 0 or all events). No trials at all: ``Interval(nan, 0, 1, 0, 0)``.

    Examples
    --------
    >>> iv = clustered_share([1, 1, 0, 0], ["a", "a", "b", "b"])
    >>> iv.estimate, iv.successes, iv.trials
    (0.5, 2, 4)
    >>> zero = clustered_share([0] * 64, [f"q{i // 2}" for i in range(64)])
    >>> zero.low, round(zero.high, 3)  # 0 of 64 queries over 32 questions: the exact bound on 32
    (0.0, 0.109)
    """
    from .compare import clustered_wilson

    s = np.asarray(successes, dtype=np.float64)
    t = np.ones_like(s) if trials is None else np.asarray(trials, dtype=np.float64)
    labels = np.asarray(clusters, dtype=object)
    if not (s.ndim == t.ndim == labels.ndim == 1) or not (len(s) == len(t) == len(labels)):
        raise ValueError(f"successes, trials and clusters must be 1-D of one length, got {len(s)}, {len(t)}, "
                         f"{len(labels)}")
    if (s < 0).any() or (s > t).any():
        raise ValueError("each item needs 0 <= successes <= trials")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    total_s, total_t = float(s.sum()), float(t.sum())
    if total_t == 0:
        return Interval(float("nan"), 0.0, 1.0, 0, 0)
    _, inverse = np.unique(labels.astype(str), return_inverse=True)
    cs = np.bincount(inverse, weights=s)
    ct = np.bincount(inverse, weights=t)
    keep = ct > 0
    est, low, high = clustered_wilson(cs[keep], ct[keep], confidence=confidence)
    return Interval(float(est), float(low), float(high), int(round(total_s)), int(round(total_t)))
