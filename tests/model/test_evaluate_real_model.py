"""The real all-MiniLM-L6-v2's tests of what ``test_evaluate.py`` checks on FAKEs (kept apart, so that those run in
the fast loop)."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.analyses.gate_table import query_outcomes
from ragdiag.analyses.outcomes import LADDER, OOD_OUTCOMES
from ragdiag.analyses.summary import summary_rows
from ragdiag.core.gate import Gate
from ragdiag.index.chunking import destroyed_needles


@pytest.mark.model
def test_bundled_corpus_real_model(bundled_eval_c, truth):
    ev = bundled_eval_c
    rows = {r.config: r for r in summary_rows(ev)}
    assert set(rows) == {"C/dense", "C/bm25", "C/hybrid"}
    assert 0.4 <= rows["C/dense"].recall[20].estimate <= 1.0
    index = ev.indexes["C"]
    assert index.normalisation_error < 1e-5
    n_destroyed = len(destroyed_needles(index.chunks, truth.needles()))
    for label, row in rows.items():
        assert 0 < row.mrr.estimate < 1, label
        assert row.queries == 64
        assert row.destroyed == n_destroyed
        # recall never falls as k grows
        est = [row.recall[k].estimate for k in (1, 4, 8, 20)]
        assert est == sorted(est), label
        res = ev.result(label)
        ind = ev.in_domain
        ladder = tuple(o.outcome for o in query_outcomes(ev, label, Gate(keep=20, cut=2.0)))  # every query's outcome
        assert set(np.array(ladder)[ind]) <= set(LADDER) and set(np.array(ladder)[~ind]) <= set(OOD_OUTCOMES)
        # destroyed queries: one per phrasing of each destroyed question, rank 0
        destroyed = [i for i, o in enumerate(ladder) if o == "destroyed"]
        assert len(destroyed) == 2 * n_destroyed
        assert (res.needle_rank[destroyed] == 0).all()
    assert ev.indexes["C"].vectors.shape == (len(index.chunks), 384)
