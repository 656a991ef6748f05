"""The funnel's table of cases (``CASES``): one question with one phrasing each, placed by hand in FAKE rankings
(:func:`synthetic_eval`, a synthetic evaluation: hand-set ranks and distances, not produced by any retriever)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ragdiag.documents.truth import Query
from ragdiag.evaluation.evaluate import _config_result
from ragdiag.evaluation.records import Config, Evaluation

N_CHUNKS = 60
FAR, NEAR = 0.9, 0.3

# name, holder?, truncated?, dense rank, bm25 rank, hybrid rank, rerank rank, holder distance, top-1 distance,
# expected stage under hybrid, under the reranker, reranker movement.  k = 4, pool = 25, cut 0.6, keep 4.
CASES = [
    ("destroyed", False, False, 0, 0, 0, 0, FAR, NEAR, "destroyed", "destroyed", ""),
    ("truncated", True, True, 30, 9, 12, 12, FAR, NEAR, "truncated", "truncated", ""),
    ("truncated-but-found", True, True, 30, 1, 2, 2, NEAR, NEAR, "answered", "answered", ""),
    ("not-in-pool", True, False, 40, 3, 31, 31, FAR, NEAR, "not-in-pool", "not-in-pool", ""),
    ("ranked-low", True, False, 8, 9, 10, 11, FAR, NEAR, "ranked-low", "ranked-low", ""),
    ("demoted", True, False, 2, 2, 3, 7, NEAR, NEAR, "answered", "ranked-low", "demoted"),
    ("promoted", True, False, 5, 8, 7, 1, NEAR, NEAR, "ranked-low", "answered", "promoted"),
    ("refused", True, False, 1, 1, 1, 1, 0.7, 0.7, "refused", "refused", ""),
    ("kept-but-wrong", True, False, 3, 3, 3, 3, 0.7, NEAR, "kept-but-wrong", "kept-but-wrong", ""),
    ("answered", True, False, 1, 1, 1, 2, NEAR, NEAR, "answered", "answered", ""),
]


@dataclass
class FakeIndex:
    """A FAKE strategy index: holders and truncation set by hand."""

    holders: dict
    truncated: set
    report: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(destroyed=()))

    def truncated_before_needle(self, question_id, needle_end):
        return question_id in self.truncated


def _ranking(holder: int, rank: int, rng) -> np.ndarray:
    """A full FAKE ranking of N_CHUNKS positions with ``holder`` at ``rank`` (0: holder absent)."""
    others = [p for p in rng.permutation(N_CHUNKS) if p != holder]
    if rank:
        others.insert(rank - 1, holder)
    else:
        others.append(holder)
    return np.array(others)


def synthetic_eval(cases=CASES, columns=((3, "dense"), (4, "bm25"), (5, "hybrid"), (6, "rerank-maxsim"))) -> Evaluation:
    rng = np.random.default_rng(0)
    queries = tuple(Query(f"{c[0]}:course", c[0], "course", question_id=c[0]) for c in cases)
    holders = {c[0]: (np.array([i]) if c[1] else np.array([], dtype=np.int64)) for i, c in enumerate(cases)}
    index = FakeIndex(holders, {c[0] for c in cases if c[2]})
    truth = SimpleNamespace(question=lambda qid: SimpleNamespace(end=100))
    results = {}
    for col, name in columns:
        orders = np.stack([_ranking(i, c[col], rng) for i, c in enumerate(cases)])
        dist = np.full((len(cases), N_CHUNKS), FAR)
        for i, c in enumerate(cases):
            dist[i, orders[i, 0]] = c[8]
            if c[1]:
                dist[i, i] = c[7]
        cfg = Config("E", name)
        results[cfg] = _config_result(cfg, index, truth, queries, orders, -dist, dist, seconds=0.0)
    return Evaluation(corpus=None, truth=truth, queries=queries, indexes={"E": index}, results=results)
