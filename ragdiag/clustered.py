"""Intervals for shares counted per query when queries come in clusters (a question's phrasings).

A question has several phrasings; they are not independent draws, so an
interval that treats every query as its own trial is too narrow. These
intervals resample *questions* with replacement (a cluster bootstrap, fixed
seed :data:`ragdiag.defaults.SEED`) and take percentile bounds of the ratio
``sum(successes) / sum(trials)`` over the resampled clusters.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .defaults import SEED
from .stats import Interval

__all__ = ["question_bootstrap", "N_BOOT", "query_clusters"]

#: Bootstrap resamples per interval.
N_BOOT = 2000


def query_clusters(queries) -> np.ndarray:
    """One cluster label per query: its question id (ood queries are their own cluster)."""
    return np.array([q.question_id or q.id for q in queries], dtype=object)


def question_bootstrap(successes: Sequence[float] | np.ndarray, clusters: Sequence | np.ndarray,
                       trials: Sequence[float] | np.ndarray | None = None, *, n_boot: int = N_BOOT,
                       seed: int = SEED, confidence: float = 0.95) -> Interval:
    """Share ``sum(successes) / sum(trials)`` with a question-cluster percentile bootstrap interval.

    Parameters
    ----------
    successes : array_like of float
        Per item (query or slot), ``0 <= successes <= trials``.
    clusters : array_like
        Each item's question (its cluster); ood queries are their own.
    trials : array_like of float, optional
        Per item; default 1 each.
    n_boot, seed : int, keyword-only
        Resamples of whole clusters, and the generator's seed (fixed: the same interval every run).
    confidence : float, keyword-only
        Two-sided level in ``(0, 1)``.

    Returns
    -------
    Interval
        The plain ratio as the estimate; the bounds are the ``(1 - confidence) / 2``
        quantiles of the ratio over the resamples (widened to hold the estimate).
        No trials at all: ``Interval(nan, 0, 1, 0, 0)``.

    Examples
    --------
    >>> iv = question_bootstrap([1, 1, 0, 0], ["a", "a", "b", "b"])
    >>> iv.estimate, iv.successes, iv.trials
    (0.5, 2, 4)
    >>> 0.0 <= iv.low <= 0.5 <= iv.high <= 1.0
    True
    """
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
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    total_s, total_t = float(s.sum()), float(t.sum())
    if total_t == 0:
        return Interval(float("nan"), 0.0, 1.0, 0, 0)
    _, inverse = np.unique(labels.astype(str), return_inverse=True)
    cs = np.bincount(inverse, weights=s)
    ct = np.bincount(inverse, weights=t)
    rng = np.random.default_rng(seed)
    draw = rng.integers(0, len(cs), size=(n_boot, len(cs)))
    bs, bt = cs[draw].sum(axis=1), ct[draw].sum(axis=1)
    ratio = np.divide(bs, bt, out=np.full(n_boot, np.nan), where=bt > 0)
    ratio = ratio[~np.isnan(ratio)]
    a = (1 - confidence) / 2
    low, high = (np.quantile(ratio, [a, 1 - a]) if ratio.size else (0.0, 1.0))
    est = total_s / total_t
    return Interval(est, float(min(low, est)), float(max(high, est)), int(round(total_s)), int(round(total_t)))
