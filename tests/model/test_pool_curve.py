"""The pool curve (ragdiag.authoring.pool_curve): nested subsets of the chunks, a log-linear fit, its refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragdiag.authoring.pool_curve import MAX_EXTRAPOLATION, PoolPoint, fit_log_linear, subset_ranks


@pytest.mark.parametrize("distances, holders, keep, ranks", [
    # one query, chunks 0..3; the holder is chunk 2 (0.2); chunks 0 (0.1) and 3 (0.05) are closer
    ([[0.1, 0.3, 0.2, 0.05]], [[0, 0, 1, 0]], [1, 1, 1, 1], [3]),
    ([[0.1, 0.3, 0.2, 0.05]], [[0, 0, 1, 0]], [1, 1, 0, 0], [2]),  # the holder is kept even when "left out"
    ([[0.1, 0.3, 0.2, 0.05]], [[0, 0, 1, 0]], [0, 1, 1, 0], [1]),
    ([[0.1, 0.3, 0.2, 0.05]], [[0, 1, 1, 0]], [1, 1, 1, 1], [3]),  # the closest of two holders counts
    ([[0.2, 0.2]], [[0, 1]], [1, 1], [1]),  # a tie is not closer: the holder keeps its place
    ([[0.1, 0.3]], [[0, 0]], [1, 1], [0]),  # no holder (a destroyed needle): never found
])
def test_subset_ranks_table(distances, holders, keep, ranks):
    got, best = subset_ranks(np.array(distances), np.array(holders, dtype=bool), np.array(keep, dtype=bool))
    assert got.tolist() == ranks
    assert (ranks[0] == 0) == math.isinf(best[0])


def _points(rates, sizes=(100, 250, 500, 1000), fractions=(0.1, 0.25, 0.5, 1.0), half=0.02, noise=()):
    """One measure's points; the whole corpus (fraction 1) is one observation, repeated in every draw."""
    out = []
    for i, (f, s, r) in enumerate(zip(fractions, sizes, rates)):
        draws = (r,) * 3 if not noise or f == 1.0 else tuple(r + e for e in noise[i])
        out.append(PoolPoint("R@4", f, s, float(np.mean(draws)), r - half, r + half, draws))
    return out


def test_a_log_linear_curve_is_extrapolated_with_its_prediction_interval():
    # rate = 1.2 - 0.1 ln(size), with draws scattered by +/-0.01 around it
    sizes = (100, 250, 500, 1000)
    rates = [1.2 - 0.1 * math.log(s) for s in sizes]
    pts = _points(rates, noise=[(-0.01, 0.0, 0.01)] * 4)
    fit = fit_log_linear(pts, at_size=10_000, corpus_size=1000)
    assert fit.refused is None
    assert fit.slope == pytest.approx(-0.1) and fit.intercept == pytest.approx(1.2)
    assert fit.estimate == pytest.approx(1.2 - 0.1 * math.log(10_000))
    assert fit.low < fit.estimate < fit.high
    # 10 observations (3 draws at each of 3 sizes, the whole corpus once): residuals +/-0.01 at 3 sizes, so
    # s^2 = 3 * 2 * 0.01^2 / 8; the variance adds the draws' (t with 8 df, the leverage at 10,000) and the
    # questions' (the whole corpus's interval: +/-0.02)
    from scipy.stats import t

    X = np.column_stack([np.ones(10), np.r_[np.repeat(np.log(sizes[:3]), 3), math.log(sizes[3])]])
    x0 = np.array([1.0, math.log(10_000)])
    s2 = 3 * 2 * 0.01 ** 2 / 8
    half = math.sqrt(t.ppf(0.975, 8) ** 2 * s2 * (1 + x0 @ np.linalg.inv(X.T @ X) @ x0) + 0.02 ** 2)
    assert (fit.high - fit.low) / 2 == pytest.approx(half, rel=1e-6)


def test_a_bending_curve_is_refused_with_the_reason():
    # flat, then a cliff: 0.90, 0.89, 0.88, then 0.40 at the whole corpus; intervals +/- 2 points
    fit = fit_log_linear(_points([0.90, 0.89, 0.88, 0.40]), at_size=5000, corpus_size=1000)
    assert fit.estimate is None and fit.refused.startswith("the curve is not log-linear within its intervals")
    # the same three first sizes alone are a line: no refusal
    assert fit_log_linear(_points([0.90, 0.89, 0.88, 0.40]), at_size=5000, corpus_size=1000,
                          max_fraction=0.5).refused is None


def test_extrapolation_past_100x_is_refused():
    pts = _points([0.9, 0.8, 0.7, 0.6], sizes=(10, 100, 1000, 10000))
    ok = fit_log_linear(pts, at_size=MAX_EXTRAPOLATION * 10000, corpus_size=10000)
    far = fit_log_linear(pts, at_size=MAX_EXTRAPOLATION * 10000 + 1, corpus_size=10000)
    assert ok.refused is None and ok.estimate == pytest.approx(0.9 - 0.1 * 5)
    assert far.estimate is None and "more than 100 times the corpus" in far.refused
    assert "fewer than three" in fit_log_linear(pts[:2], at_size=100).refused


@pytest.mark.model
def test_fitted_on_half_the_bundled_corpus_it_predicts_the_whole(corpus, truth, encoder, tmp_path):
    """Seeded: fitted on subsets of at most 50% of E/dense's distractor chunks, the 95% prediction interval at the
    whole corpus's size holds the whole corpus's recall at 4 and answered at the cut; the 100% point is the
    evaluation's own R@4 and answered (its ranks and distances, read directly)."""
    from ragdiag.authoring.pool_curve import pool_curve
    from ragdiag.core.gate import Gate
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.index.snapshot import seed_from_snapshot
    from ragdiag.index.store import Store

    store = Store(tmp_path / "cache")
    seed_from_snapshot(store, corpus, truth, encoder, strategies=["E"], log=lambda m: None)
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
