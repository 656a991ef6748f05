"""The comparison with the best and the recommendation on the bundled corpus: an independent Hsu, and resampling.

The bundled corpus is evaluated once (all strategies and default retrievers, vectors
seeded from the shipped index, the real encoder), so these are model-marked.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.analyses.compare import best, best_of
from ragdiag.analyses.compare.best import outcome_matrix
from ragdiag.analyses.recommend import complexity_key, shortlist
from ragdiag.core.defaults import ALPHA, PRACTICAL_MARGIN, PRIMARY_K

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def bundled(corpus, truth, encoder, tmp_path_factory):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.index.snapshot import seed_from_snapshot
    from ragdiag.index.store import Store

    store = Store(tmp_path_factory.mktemp("store-stats"))
    seed_from_snapshot(store, corpus, truth, encoder)
    ev = evaluate(corpus, truth, encoder=encoder, store=store)
    configs = [c for c in ev.results if not c.external]
    values, groups = outcome_matrix(ev, configs, k=PRIMARY_K)
    return ev, values, np.asarray(groups), [c.label for c in configs]


def _hsu(values, groups, c=None, *, draws=4000, seed=99):
    """Hsu's MCB from the textbook: i stays unless m_i - m_j + c * s_ij < 0 for some j (D_i^+ = 0), in sums.

    s_ij is the pair's own spread sqrt(sum over questions of (y_i - y_j)^2); c, when not given, is the largest
    over the possible bests b of the one-sided (1 - alpha) critical value of max_j (S_j - S_b) / s_jb, by
    shuffling each question's outcomes among the configurations (written here, independently of the library).
    """
    qs, inv = np.unique(groups, return_inverse=True)
    Y = np.zeros((values.shape[0], qs.size))
    for q in range(qs.size):
        Y[:, q] = values[:, inv == q].sum(axis=1)

    def stats(y):  # T[i, j] = (S_i - S_j) / s_ij, 0 when the two never differ
        d = y[:, None, :] - y[None, :, :]
        s = np.sqrt((d ** 2).sum(axis=2))
        return np.divide(d.sum(axis=2), s, out=np.zeros_like(s), where=s > 0), s

    k = Y.shape[0]
    if c is None:
        rng = np.random.default_rng(seed)
        rival = np.empty((draws, k))
        for r in range(draws):
            t, _ = stats(rng.permuted(Y, axis=0))  # each question's column shuffled on its own
            np.fill_diagonal(t, -np.inf)
            rival[r] = t.max(axis=0)  # per b: the largest T[j, b]
        c = max(np.sort(rival[:, b])[int(np.ceil((1 - ALPHA) * draws)) - 1] for b in range(k))
    t, s = stats(Y)
    S = Y.sum(axis=1)
    keep = [all(S[i] - S[j] + c * s[i, j] >= 0 for j in range(k) if j != i) for i in range(k)]
    worst = [max(t[j, i] for j in range(k) if j != i) for i in range(k)]
    return np.array(keep), float(c), np.array(worst)


def test_best_set_matches_an_independent_hsu(bundled):
    ev, values, groups, labels = bundled
    res = best(ev, k=PRIMARY_K, configs=[c for c in ev.results if not c.external])
    mine = np.array([r.in_best_set for r in sorted(res.rows, key=lambda r: labels.index(r.config))])
    # the textbook rule at the library's critical value gives exactly the library's set
    keep, _, worst = _hsu(values, groups, res.critical)
    assert np.array_equal(keep, mine)
    # and the independent critical value is the same to Monte Carlo error; sets agree away from the boundary
    keep_own, c_own, _ = _hsu(values, groups)
    assert c_own == pytest.approx(res.critical, rel=0.06)
    lo, hi = sorted((c_own, res.critical))
    away = (worst < lo - 1e-9) | (worst > hi + 1e-9)
    assert np.array_equal(keep_own[away], mine[away]) and away.sum() >= len(labels) - 2
    assert 1 <= mine.sum() < len(labels)


def test_recommendation_is_rarely_truly_worse_than_the_best_by_more_than_the_margin(bundled):
    # the questions resampled with replacement (phrasings kept together); the full set's recall stands for the
    # truth. The rule's pick (no measured cost: the simplest of its shortlist) must be truly more than the margin
    # under the true best in at most 5% of resamples, unless it says the data cannot separate the candidates
    _, values, groups, labels = bundled
    truth = values.mean(axis=1)
    qs, inv = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(inv == q) for q in range(qs.size)]
    rng = np.random.default_rng(20261205)
    bad = runs = 0
    for _ in range(60):
        pick_q = rng.integers(0, qs.size, qs.size)
        cols = np.concatenate([members[q] for q in pick_q])
        new_groups = np.concatenate([[f"r{i}"] * members[q].size for i, q in enumerate(pick_q)])
        res = best_of(values[:, cols], new_groups, labels, draws=2000, seed=int(rng.integers(1 << 31)))
        short = shortlist(res)
        pick = min(short, key=complexity_key)
        separated = len(short) > 1 or len(res.best_set) == 1  # else: "the data cannot separate", said plainly
        runs += 1
        bad += separated and truth.max() - truth[labels.index(pick)] > PRACTICAL_MARGIN + 1e-12
    assert bad / runs <= 0.05, (bad, runs)


def test_the_changes_page_states_the_bundled_best_set_as_computed(bundled):
    # docs/statistics-changes.md lists what `best --json` gives on the bundled corpus: it must not drift
    from pathlib import Path

    ev, *_ = bundled
    res = best(ev, k=PRIMARY_K, configs=[c for c in ev.results if not c.external])
    page = (Path(__file__).resolve().parent.parent / "docs" / "statistics-changes.md").read_text(encoding="utf-8")
    section = page.split("### bundled corpus", 1)[1].split("### data/de-haushalt", 1)[0]
    assert (f"{len(res.best_set)} after (Hsu, critical value {res.critical:.3g}); ") in section
    outside = [r for r in res.rows if not r.in_best_set]
    for r in outside:
        if f"| {r.config} | {100 * r.mean:.1f}% | in the set |" in section:  # a membership this change moved
            assert f"| out | {100 * r.estimate:+.1f} [{100 * r.low:+.1f}, {100 * r.high:+.1f}] |" in section
