"""The comparison with the best and the recommendation on the bundled corpus: an independent Hsu, and resampling.

The bundled corpus is evaluated once per session (``bundled_eval_all``: all strategies and default retrievers,
vectors seeded from the shipped index, the real encoder), so these are model-marked.
"""

from __future__ import annotations


import numpy as np
import pytest

from families import FAMILIES, coverage
from ragdiag.analyses.compare import best, best_of
from ragdiag.analyses.compare.best import outcome_matrix
from ragdiag.analyses.recommend import complexity_key, shortlist
from ragdiag.core.defaults import ALPHA, PRACTICAL_MARGIN, PRIMARY_K

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def bundled(bundled_eval_all):
    ev = bundled_eval_all  # the session's (conftest.py), shared with test_verdicts_corpora
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
    page = (Path(__file__).resolve().parents[2] / "docs" / "statistics-changes.md").read_text(encoding="utf-8")
    section = page.split("### bundled corpus", 1)[1].split("### data/de-haushalt", 1)[0]
    assert (f"{len(res.best_set)} after (Hsu, critical value {res.critical:.3g}); ") in section
    outside = [r for r in res.rows if not r.in_best_set]
    for r in outside:
        if f"| {r.config} | {100 * r.mean:.1f}% | in the set |" in section:  # a membership this change moved
            assert f"| out | {100 * r.estimate:+.1f} [{100 * r.low:+.1f}, {100 * r.high:+.1f}] |" in section


# The families on the bundled corpus's own questions (slow as well as model: each under 2 minutes). Nine systems
# as in tests/slow/test_families_simulation.py: 0 a baseline, 1..6 near-copies of it, 7 and 8 independent systems.
KINDS = ("E/hybrid", "A/bm25", "C/dense")  # three real configurations of different kinds
NINE = ("E/hybrid", "E/dense", "E/bm25", "E/rerank-maxsim", "D/hybrid", "F/hybrid", "A/hybrid", "B/dense", "C/bm25")


def _resample(groups, rng):
    """The questions drawn with replacement (a question's phrasings kept together): query columns and new groups."""
    qs, inv = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(inv == q) for q in range(qs.size)]
    pick = rng.integers(0, qs.size, qs.size)
    cols = np.concatenate([members[q] for q in pick])
    return cols, np.concatenate([np.full(members[q].size, i) for i, q in enumerate(pick)])


def _exchangeable_nine(values, groups, labels, rng, eps=0.05):
    """Nine systems of equal recall built from the bundled corpus's real per-query hits.

    The questions are resampled; in each one the real outcomes of the three ``KINDS`` (both phrasings, as
    measured) are dealt at random to the baseline and the two independent systems, so the three have the same
    recall given the questions while each keeps the real agreement of its phrasings and the real discordance
    between kinds. A near-copy repeats the baseline's outcome on each query, except with chance ``eps`` the
    outcome there of one of the three kinds at random (same expected recall again, as an int8 or HNSW variant
    disagrees with its baseline on a query or two).
    """
    cols, new_groups = _resample(groups, rng)
    src = values[[labels.index(c) for c in KINDS]][:, cols]  # (3, queries)
    n_q = int(new_groups.max()) + 1
    deal = np.array([rng.permutation(3) for _ in range(n_q)])[new_groups]  # (queries, 3): kind per role
    at = np.arange(cols.size)
    out = np.empty((9, cols.size))
    out[0], out[7], out[8] = (src[deal[:, r], at] for r in range(3))
    for s in range(1, 7):
        own = rng.random(cols.size) < eps
        out[s] = np.where(own, src[rng.integers(0, 3, cols.size), at], out[0])
    return out, new_groups


@pytest.mark.slow
def test_family_wise_error_on_the_bundled_questions(bundled):
    from ragdiag.analyses.compare.simultaneous import max_t, with_best

    _, values, groups, labels = bundled
    rng = np.random.default_rng(20261206)
    n = 150
    wrong = dict.fromkeys([*FAMILIES, "best: a statement false (Hsu)", "best: some tied configuration dropped"], 0)
    dropped = np.zeros(9)
    for _ in range(n):
        v, g = _exchangeable_nine(values, groups, labels, rng)
        seed = int(rng.integers(1 << 31))
        for name, (pairs, blocks) in FAMILIES.items():
            rows, _ = max_t(v, g, pairs, blocks=blocks, draws=1000, seed=seed)
            wrong[name] += any(r.excludes_zero for r in rows)
        wb = with_best(v, g, draws=1000, seed=seed)
        dropped += ~wb.in_best_set
        # every true difference is 0: a statement is false when a lower end passes 0 (a dropped one is "not the
        # best", true of a tied one: see test_families_simulation)
        wrong["best: a statement false (Hsu)"] += bool((wb.lower > 0).any())
        wrong["best: some tied configuration dropped"] += bool((~wb.in_best_set).any())
    rates = {k: v / n for k, v in wrong.items()}
    print(rates, dropped / n)
    for name in [*FAMILIES, "best: a statement false (Hsu)"]:
        assert rates[name] <= 0.06, rates
    assert (dropped / n).max() <= 0.06, dropped / n  # each one of the tied, whichever is the best, stays


@pytest.mark.slow
def test_simultaneous_intervals_cover_on_the_bundled_questions(bundled):
    # nine real configurations of unequal recall; the bundled questions resampled with replacement stand for new
    # questions and the full set's recall for the truth: every family's intervals must all cover 93% of the time
    _, values, groups, labels = bundled
    v_all = values[[labels.index(c) for c in NINE]]
    truth = v_all.mean(axis=1)

    def draw(rng):
        cols, g = _resample(groups, rng)
        return v_all[:, cols], g

    # Hsu's statements: the upper end of mu_i - max_{j != i} mu_j (an outsider's: 0, "not the best"), and the lower
    # end of the difference to the reference printed (the observed best; the best's: the runner-up)
    rates = coverage(np.random.default_rng(20261207), draw, truth)
    print(rates, truth.round(3))
    for name in rates:
        assert rates[name] >= 0.93, rates


def test_best_json_critical_difference_is_the_printed_half_width(bundled):
    # `best --json`'s critical_difference is the printed interval's upper half-width (high less the difference),
    # to the 3 decimals printed; and the labels name the interval printed (Hsu's MCB, no bootstrap)
    from ragdiag.cli.verdicts import best_text

    ev, *_ = bundled
    res = best(ev, k=PRIMARY_K, configs=[c for c in ev.results if not c.external])
    text = best_text(res)
    assert "bootstrap" not in text.lower() and "low (Hsu MCB)" in text and "high (Hsu MCB)" in text
    printed = {line.split()[0]: [float(x) for x in line.split()[1:5]] for line in text.splitlines()[3:]}
    for row in res.as_json()["rows"]:
        _, diff, low, high = printed[row["config"]]
        assert row["critical_difference"] == pytest.approx(high - diff, abs=1.5e-3), row["config"]
        assert (low, high) == pytest.approx((row["difference_to_best"]["low"], row["difference_to_best"]["high"]),
                                            abs=6e-4)
        assert (high >= 0) == row["in_best_set"] or abs(high) < 6e-4  # the set is the intervals that reach 0
