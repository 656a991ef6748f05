"""The real all-MiniLM-L6-v2's tests of what ``test_funnel.py`` checks on FAKEs (kept apart, so that those run in
the fast loop)."""

from __future__ import annotations

import pytest

from ragdiag.analyses.funnel import funnels
from ragdiag.core.metrics import hits_at_k


@pytest.mark.model
def test_bundled_corpus_funnel_real_model(bundled_eval_c):
    """Bundled corpus, strategy C, real model: one stage per query, ranks consistent with the stages."""
    ev = bundled_eval_c
    n_in = int(ev.in_domain.sum())
    fs = {f.config.label: f for f in funnels(ev)}
    for label, f in fs.items():
        assert sum(f.counts().values()) == n_in == len(f.rows)
        for r in f.rows:
            if r.stage == "destroyed":
                assert r.final_rank is None
            elif r.stage == "not-in-pool":
                assert r.pool_rank > 25
            elif r.stage == "ranked-low":
                assert 4 < r.final_rank and r.pool_rank <= 25
            elif r.stage in ("refused", "kept-but-wrong", "answered"):
                assert r.final_rank <= 4
        assert f.counts()["answered"] + f.counts()["refused"] + f.counts()["kept-but-wrong"] == int(
            hits_at_k(ev.result(label).needle_rank[ev.in_domain], 4).sum())
    hybrid = fs["C/hybrid"]
    dense, bm25 = ev.result("C/dense").needle_rank, ev.result("C/bm25").needle_rank
    ids = [q.id for q in ev.queries]
    for r in hybrid.rows:
        i = ids.index(r.query_id)
        assert (r.dense_rank or 0, r.bm25_rank or 0) == (int(dense[i]), int(bm25[i]))
