"""Two-sided (issue 44): the AUROC of the gate's score with its interval over questions, and the infeasibility
verdict, on seeded simulations with known score distributions and against scikit-learn's AUROC."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtri

from ragdiag.analyses.gate_table import GateTable
from ragdiag.analyses.threshold.separation import auroc, feasibility, separation


def _draw(rng, target, n_q=30, phrasings=2, n_ood=30, rho=0.5):
    """Answerable distances (two phrasings per question, correlated within it) and off-topic ones, normal with a
    shift that gives AUROC ``target`` (Phi(shift / sqrt(2))): lower is better."""
    shift = np.sqrt(2) * ndtri(target)
    q = rng.normal(size=n_q)
    pos = np.sqrt(rho) * np.repeat(q, phrasings) + np.sqrt(1 - rho) * rng.normal(size=n_q * phrasings)
    return pos - shift, rng.normal(size=n_ood), np.repeat(np.arange(n_q), phrasings)


def test_auroc_equals_scikit_learns():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(1)
    for _ in range(20):
        pos, neg, g = _draw(rng, 0.8)
        pos = np.round(pos, 1)  # ties: half a pair each, as scikit-learn counts them
        neg = np.round(neg, 1)
        want = roc_auc_score(np.r_[np.ones(pos.size), np.zeros(neg.size)], -np.r_[pos, neg])
        assert auroc(pos, neg, g).estimate == pytest.approx(want, abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("target", [0.6, 0.8, 0.95])
def test_the_interval_covers_the_true_auroc(target):
    rng = np.random.default_rng(int(target * 1000))
    runs, hit = 400, 0
    for _ in range(runs):
        pos, neg, g = _draw(rng, target)
        s = auroc(pos, neg, g)
        hit += s.low <= target <= s.high
    assert hit / runs >= 0.93, hit / runs


def _table(pos, neg, g, kinds=None):
    n_in, n_ood = pos.size, neg.size
    return GateTable(tuple(f"q{i}" for i in range(n_in + n_ood)), np.r_[np.ones(n_in, bool), np.zeros(n_ood, bool)],
                     closest=np.r_[pos, neg], closest_holder=np.r_[pos, np.full(n_ood, np.inf)], window=4,
                     groups=tuple(f"g{x}" for x in g) + tuple(f"o{i}" for i in range(n_ood)),
                     kinds=(None,) * n_in + tuple(kinds if kinds is not None else ["near"] * n_ood))


def _brute_force(pos, neg, max_bluff, min_answered):
    """Some cut (kept: value < cut) with bluff share <= max_bluff and answered share >= min_answered?"""
    for cut in np.r_[np.unique(np.r_[pos, neg]), np.inf, -np.inf]:
        for c in (cut, np.nextafter(cut, np.inf) if np.isfinite(cut) else cut):
            if (neg < c).mean() <= max_bluff + 1e-12 and (pos < c).mean() >= min_answered - 1e-12:
                return True
    return False


@pytest.mark.parametrize("target", [0.6, 0.8, 0.95])
def test_infeasible_exactly_when_no_cut_meets_both_goals(target):
    rng = np.random.default_rng(44 + int(100 * target))
    seen = set()
    for _ in range(60):
        pos, neg, g = _draw(rng, target)
        for max_bluff, min_answered in ((0.05, 0.5), (0.05, 0.2), (0.1, 0.8)):
            f = feasibility(_table(pos, neg, g), max_bluff, min_answered)
            assert f.feasible == _brute_force(pos, neg, max_bluff, min_answered)
            seen.add(f.feasible)
            if not f.feasible:
                assert f.sentence().startswith("no cut on this distance separates") and "are answered" in f.sentence()
    assert seen == {True, False}  # both verdicts occur: the check is not vacuous


def test_near_and_far_separately():
    rng = np.random.default_rng(7)
    pos, _, g = _draw(rng, 0.9)
    near = rng.normal(size=15) - 1.0  # near-miss questions sit among the answerable ones
    far = rng.normal(size=15) + 2.0
    out = separation(_table(pos, np.r_[near, far], g, kinds=["near"] * 15 + ["far"] * 15))
    assert set(out) == {"off-topic", "near", "far"}
    assert out["near"].estimate < out["off-topic"].estimate < out["far"].estimate
    assert out["near"].n_off_topic == out["far"].n_off_topic == 15 and out["off-topic"].n_questions == 30


def test_the_native_score_tables_separation_matches_the_distance_tables_for_dense(tiny_corpus, tiny_truth,
                                                                                 fake_encoder):
    """For dense retrieval the ranking's own score is the cosine similarity, 1 - the distance: the same AUROC."""
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.threshold.score import score_table
    from ragdiag.evaluation.evaluate import evaluate

    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="E", retrievers="dense")
    a = separation(gate_table(ev, "E/dense"))
    b = separation(score_table(ev, "E/dense"))
    assert set(a) == set(b) == {"off-topic", "near", "far"}
    for k in a:
        assert a[k].estimate == pytest.approx(b[k].estimate, abs=1e-6) and a[k].n_answerable == b[k].n_answerable
