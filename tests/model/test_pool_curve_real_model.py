"""The real all-MiniLM-L6-v2's test of what ``test_pool_curve.py`` checks on hand-made data (kept apart, so that
those run in the fast loop)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.model
def test_fitted_on_half_the_bundled_corpus_it_predicts_the_whole(corpus, truth, encoder, bundled_store):
    """Seeded: fitted on subsets of at most 50% of E/dense's distractor chunks, the 95% prediction interval at the
    whole corpus's size holds the whole corpus's recall at 4 and answered at the cut; the 100% point is the
    evaluation's own R@4 and answered (its ranks and distances, read directly)."""
    from ragdiag.authoring.pool_curve import pool_curve
    from ragdiag.core.gate import Gate
    from ragdiag.evaluation.evaluate import evaluate

    store = bundled_store  # the session's, seeded from the shipped index (conftest.py)
    ev = evaluate(corpus, truth, encoder=encoder, strategies="E", retrievers="dense", store=store)
    vectors = store.embed(encoder, [q.text for q in ev.queries]).vectors
    gate = Gate()
    n = len(ev.indexes["E"].chunks)
    curve = pool_curve(ev, "E/dense", vectors, gate, at_size=n, fit_max_fraction=0.5)
    whole = {p.measure: p for p in curve.points if p.fraction == 1.0}
    res, mask = ev.result("E/dense"), ev.in_domain
    ranks, dist = res.needle_rank[mask], res.needle_distance[mask]
    assert whole["R@4"].rate == pytest.approx(float(((ranks > 0) & (ranks <= gate.k)).mean()))
    assert whole["answered"].rate == pytest.approx(
        float(((ranks > 0) & (ranks <= gate.keep) & gate.under(np.nan_to_num(dist, nan=np.inf))).mean()))
    sizes = sorted({p.size for p in curve.points})
    assert sizes[-1] == n and len(sizes) == 4
    for fit in curve.fits:
        assert fit.refused is None, fit.refused
        assert fit.sizes == tuple(sorted(fit.sizes)) and max(fit.sizes) < n  # only the subsets up to 50%
        actual = whole[fit.measure].rate
        assert fit.low <= actual <= fit.high, (fit.measure, fit.sentence(), actual)
        assert fit.slope < 0  # more distractors, fewer needles found


@pytest.mark.model
def test_fitted_on_half_the_beir_example_it_predicts_the_whole(encoder, tmp_path):
    """The BEIR example collection (docs/collections.md), judged by document: documents are the unit sampled.
    Seeded: fitted on subsets of at most 50% of the documents that hold no answer, the 95% prediction interval at
    the whole collection's size holds its recall at 4 and answered at the cut."""
    from ragdiag.authoring.pool_curve import document_pool_curve
    from ragdiag.core.gate import Gate
    from ragdiag.documents.collections import open_collection
    from ragdiag.documents.collections.examples import make_examples
    from ragdiag.index.store import Store

    make_examples(tmp_path / "examples")
    collection = open_collection(f"beir:{tmp_path / 'examples' / 'beir-sklearn'}")
    n = len(collection.corpus.documents)
    curve = document_pool_curve(collection, encoder, Gate(), store=Store(tmp_path / "cache"), at_size=n,
                                fit_max_fraction=0.5)
    whole = {p.measure: p for p in curve.points if p.fraction == 1.0}
    assert curve.unit == "documents" and curve.corpus_size == n == 128 and curve.questions == 32
    for fit in curve.fits:
        assert fit.refused is None, fit.refused
        assert max(fit.sizes) < n
        assert fit.low <= whole[fit.measure].rate <= fit.high, (fit.measure, fit.sentence(), whole[fit.measure])
