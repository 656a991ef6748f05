"""The cluster of each query: its question (a question's phrasings fail together).

Every share counted per query (funnel stages, redundancy, granularity, recall)
gets the interval used for recall, over these clusters:
:func:`ragdiag.analyses.compare.intervals.clustered_share`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["query_clusters"]


def query_clusters(queries) -> np.ndarray:
    """One cluster label per query: its question id (ood queries are their own cluster)."""
    return np.array([q.question_id or q.id for q in queries], dtype=object)
