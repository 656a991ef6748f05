"""The outcome counts of a native cut, cut by hand from the raw scores (the oracle of the native report's tests)."""

from __future__ import annotations

import math

import numpy as np

from ragdiag.core.gate import Gate


def by_hand(ev, config: str, keep: int, value: float) -> dict[str, int]:
    """Answered, given wrong passages, refused (answerable) and bluffs (off-topic) at ``score >= value``, from
    the raw scores of each query's top ``min(k, keep)`` chunks (a BM25 score of 0 is no retrieval)."""
    res = ev.result(config)
    w = Gate(keep).window(res.top_scores.shape[1])
    out = {"answered": 0, "wrong_sources": 0, "no_answer": 0, "bluffs": 0}
    for i, q in enumerate(ev.queries):
        s = np.asarray(res.top_scores[i, :w], dtype=float)
        kept = [j for j in range(w) if math.isfinite(s[j]) and s[j] >= value
                and not (config.endswith("bm25") and s[j] <= 0)]
        if not q.in_domain:
            out["bluffs"] += bool(kept)
        elif any(res.top_holds[i, j] for j in kept):
            out["answered"] += 1
        else:
            out["wrong_sources" if kept else "no_answer"] += 1
    return out
