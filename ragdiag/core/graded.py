"""Per-query measures over graded judgments: nDCG@k, AP@k (MAP@k), recall@k, success@k, all found@k.

A query's judgments map item ids (documents or chunks) to integer grades; an
item is *relevant* when its grade is at least 1 (the TREC convention:
``trec_eval``'s default relevance level); a grade of 0 or less means judged not
relevant. Each function returns one value per query; means, intervals and
paired tests are separate steps (:mod:`ragdiag.core.stats`).

The definitions are TREC's (``trec_eval`` 9, as ``pytrec_eval`` and ``ranx``
compute them), so an exported run and qrels give the same numbers there:

- **nDCG@k**: DCG@k / IDCG@k with the discount ``1 / log2(rank + 1)``; IDCG is
  computed from the judgments (the best possible ordering of every judged
  grade), never from the ranked list. Gains are the grade itself (``linear``:
  ``trec_eval``'s ``ndcg_cut`` and ranx's ``ndcg``, the default) or ``2^grade - 1``
  (``exponential``: Burges et al.; ranx's ``ndcg_burges``). With grades 0/1 both
  are the same.
- **AP@k**: the precision at the rank of each relevant item found in the top k,
  summed and divided by *all* relevant items of the query (``map_cut_k``);
  its mean over queries is MAP@k.
- **recall@k**: the share of all relevant items found in the top k (TREC's
  ``recall_k``), not whether one was found.
- **success@k** (hit rate): at least one relevant item in the top k; ragdiag's
  R@k for span gold.
- **all found@k**: every relevant item in the top k (recall@k == 1), for
  questions with several relevant items.

Every query must have at least one relevant item (a query without one has no
defined recall: drop it before, as collections do when they load).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

__all__ = ["GAINS", "ndcg_at_k", "average_precision_at_k", "recall_at_k", "success_at_k", "all_found_at_k",
           "MEASURES", "measure"]

#: Gain of a grade in nDCG: ``linear`` (TREC's default) or ``exponential`` (``2^grade - 1``).
GAINS = ("linear", "exponential")

Ranked = Sequence[Sequence[str]]
Judged = Sequence[Mapping[str, int]]


def _check(ranked: Ranked, judged: Judged, k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    if len(ranked) != len(judged):
        raise ValueError(f"one ranked list per query and one set of judgments per query: got {len(ranked)} ranked "
                         f"lists and {len(judged)} judgments")
    for i, (items, grades) in enumerate(zip(ranked, judged)):
        if isinstance(items, str):
            raise ValueError(f"query #{i + 1}: the ranked list must be a list of ids, not one string")
        if len(set(items)) != len(items):
            raise ValueError(f"query #{i + 1}: an id appears twice in the ranked list; keep each item once, "
                             "at its best rank")
        if not any(g >= 1 for g in grades.values()):
            raise ValueError(f"query #{i + 1} has no relevant item (grade >= 1); drop it before measuring")


def _gain(grade: int, gain: str) -> float:
    if grade <= 0:
        return 0.0
    return float(grade) if gain == "linear" else float(2 ** grade - 1)


def ndcg_at_k(ranked: Ranked, judged: Judged, *, k: int, gain: str = "linear") -> np.ndarray:
    """Per query: normalised discounted cumulative gain of the top ``k``.

    Parameters
    ----------
    ranked : sequence of sequence of str
        Per query, the item ids in ranked order (best first; no duplicates).
    judged : sequence of mapping str -> int
        Per query, the judged items and their grades (>= 1 relevant).
    k : int, keyword-only
        The cut-off, ``k >= 1``.
    gain : {"linear", "exponential"}, keyword-only
        A grade's gain: the grade (TREC's ``ndcg_cut``, the default) or ``2^grade - 1``.

    Returns
    -------
    numpy.ndarray of float
        ``DCG@k / IDCG@k`` per query, in [0, 1].

    Notes
    -----
    ``DCG@k = sum_{i=1..k} gain(grade_i) / log2(i + 1)``; ``IDCG@k`` is the DCG@k of the judged grades
    sorted from best to worst: the judgments fix it, whatever the ranked list holds.

    References
    ----------
    Järvelin, K. and Kekäläinen, J. (2002). Cumulated gain-based evaluation of IR techniques. ACM TOIS 20(4).

    Examples
    --------
    Grades d1 = 2, d2 = 1; the list ranks d2 then x then d1. Linear: DCG = 1/log2(2) + 2/log2(4) = 2,
    IDCG = 2/log2(2) + 1/log2(3) = 2.6309, nDCG = 0.7602; exponential (gains 3 and 1): 2.5 / 3.6309 = 0.6885.

    >>> round(float(ndcg_at_k([["d2", "x", "d1"]], [{"d1": 2, "d2": 1}], k=10)[0]), 4)
    0.7602
    >>> round(float(ndcg_at_k([["d2", "x", "d1"]], [{"d1": 2, "d2": 1}], k=10, gain="exponential")[0]), 4)
    0.6885
    """
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {', '.join(GAINS)}, got {gain!r}")
    _check(ranked, judged, k)
    out = np.zeros(len(ranked))
    for i, (items, grades) in enumerate(zip(ranked, judged)):
        dcg = sum(_gain(grades.get(d, 0), gain) / math.log2(r + 2) for r, d in enumerate(items[:k]))
        ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
        idcg = sum(_gain(g, gain) / math.log2(r + 2) for r, g in enumerate(ideal))
        out[i] = dcg / idcg
    return out


def average_precision_at_k(ranked: Ranked, judged: Judged, *, k: int) -> np.ndarray:
    """Per query: average precision of the top ``k`` over *all* relevant items (TREC's ``map_cut``).

    Examples
    --------
    Relevant a and b (any grade >= 1); the list is a, x, b: (1/1 + 2/3) / 2 = 0.8333. With a third relevant
    item c never retrieved, the same list scores (1 + 2/3) / 3 = 0.5556.

    >>> average_precision_at_k([["a", "x", "b"]], [{"a": 1, "b": 2}], k=10).round(4).tolist()
    [0.8333]
    >>> average_precision_at_k([["a", "x", "b"]], [{"a": 1, "b": 2, "c": 1}], k=10).round(4).tolist()
    [0.5556]
    """
    _check(ranked, judged, k)
    out = np.zeros(len(ranked))
    for i, (items, grades) in enumerate(zip(ranked, judged)):
        found, total = 0, 0.0
        for r, d in enumerate(items[:k], 1):
            if grades.get(d, 0) >= 1:
                found += 1
                total += found / r
        out[i] = total / sum(1 for g in grades.values() if g >= 1)
    return out


def _found(ranked: Ranked, judged: Judged, k: int) -> tuple[np.ndarray, np.ndarray]:
    _check(ranked, judged, k)
    found = np.array([sum(1 for d in items[:k] if grades.get(d, 0) >= 1) for items, grades in zip(ranked, judged)])
    relevant = np.array([sum(1 for g in grades.values() if g >= 1) for grades in judged])
    return found, relevant


def recall_at_k(ranked: Ranked, judged: Judged, *, k: int) -> np.ndarray:
    """Per query: the share of all relevant items found in the top ``k`` (TREC's ``recall_k``).

    >>> recall_at_k([["a", "x", "b"], ["y"]], [{"a": 1, "b": 1, "c": 2}, {"y": 1}], k=2).round(4).tolist()
    [0.3333, 1.0]
    """
    found, relevant = _found(ranked, judged, k)
    return found / relevant


def success_at_k(ranked: Ranked, judged: Judged, *, k: int) -> np.ndarray:
    """Per query: was at least one relevant item in the top ``k``? (hit rate; ragdiag's R@k)

    >>> success_at_k([["a", "x"], ["x", "y"]], [{"b": 1, "a": 1}, {"z": 1}], k=2).tolist()
    [True, False]
    """
    found, _ = _found(ranked, judged, k)
    return found >= 1


def all_found_at_k(ranked: Ranked, judged: Judged, *, k: int) -> np.ndarray:
    """Per query: were all its relevant items in the top ``k``?

    >>> all_found_at_k([["a", "b"], ["a", "x"]], [{"b": 1, "a": 2}, {"a": 1, "c": 1}], k=2).tolist()
    [True, False]
    """
    found, relevant = _found(ranked, judged, k)
    return found == relevant


#: The measures by name, as tables and ``--json`` name them.
MEASURES = {
    "ndcg": ndcg_at_k,
    "map": average_precision_at_k,
    "recall": recall_at_k,
    "success": success_at_k,
    "all_found": all_found_at_k,
}


def measure(name: str, ranked: Ranked, judged: Judged, *, k: int) -> np.ndarray:
    """The per-query values of measure ``name`` (one of :data:`MEASURES`) as floats.

    >>> measure("success", [["a"]], [{"a": 1}], k=1).tolist()
    [1.0]
    """
    if name not in MEASURES:
        raise ValueError(f"unknown measure {name!r}; choose one of {', '.join(MEASURES)}")
    return np.asarray(MEASURES[name](ranked, judged, k=k), dtype=np.float64)
