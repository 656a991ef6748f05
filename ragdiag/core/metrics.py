"""Per-query retrieval metrics. Means, intervals and paired tests are separate steps.

A rank is 1-based; 0 means the needle is in no returned chunk (destroyed, or
beyond the list).
"""

from __future__ import annotations

import numpy as np

__all__ = ["hits_at_k", "reciprocal_rank", "KS", "MRR_DEPTH"]

from .defaults import KS, MRR_DEPTH


def _ranks(ranks) -> np.ndarray:
    r = np.asarray(ranks)
    if r.ndim != 1:
        raise ValueError(f"ranks must be one value per query (1-D), got shape {r.shape}")
    if r.size and (r.min() < 0 or not np.issubdtype(r.dtype, np.integer)):
        raise ValueError("ranks must be non-negative integers (1-based, 0 = not found)")
    return r


def hits_at_k(ranks, k: int) -> np.ndarray:
    """Per query: did a chunk holding the needle appear in the top ``k``?

    Parameters
    ----------
    ranks : array_like of int
        One 1-based rank per query; 0 means the needle is in no returned chunk.
    k : int
        The cut-off, ``k >= 1``.

    Returns
    -------
    numpy.ndarray of bool
        ``1 <= rank <= k`` per query; its mean is recall@k (hit rate).

    Examples
    --------
    >>> hits_at_k([1, 3, 0, 9], 4).tolist()
    [True, True, False, False]
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    r = _ranks(ranks)
    return (r >= 1) & (r <= k)


def reciprocal_rank(ranks, *, depth: int = MRR_DEPTH) -> np.ndarray:
    """Per query: 1/rank when the needle is in the top ``depth``, else 0.

    Parameters
    ----------
    ranks : array_like of int
        One 1-based rank per query; 0 means the needle is in no returned chunk.
    depth : int, keyword-only
        Ranks beyond it count 0 (default :data:`~ragdiag.core.defaults.MRR_DEPTH`).

    Returns
    -------
    numpy.ndarray of float
        The reciprocal rank per query; its mean is MRR@depth.

    Examples
    --------
    >>> reciprocal_rank([1, 4, 0, 25]).tolist()
    [1.0, 0.25, 0.0, 0.0]
    """
    r = _ranks(ranks)
    out = np.zeros(r.shape, dtype=np.float64)
    ok = (r >= 1) & (r <= depth)
    out[ok] = 1.0 / r[ok]
    return out
