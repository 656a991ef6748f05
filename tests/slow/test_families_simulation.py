"""Families that hold when systems differ in kind: seeded simulations (slow selection, each under 2 minutes).

The case the pooled scale broke: a baseline, six near-copies of it (as int8,
binary and HNSW variants are: each query's outcome is the baseline's except with
a small chance of its own draw) and two independent systems, all of equal
recall, on 32 questions in 2 phrasings that share a difficulty. Every family
path (all pairs, the planned baseline family, the chunking contrasts' blocked
family, the comparison with the best) runs through the functions the product
calls (:func:`ragdiag.analyses.compare.simultaneous.max_t` and
:func:`~ragdiag.analyses.compare.simultaneous.with_best`; the product's paths add
only the never-looser-than-alone guard), with 1,000 seeded shuffles per family
(the product uses 20,000) so that a few hundred data sets fit in the time.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from families import FAMILIES, coverage, hsu_statements_wrong
from ragdiag.analyses.compare.simultaneous import max_t, with_best

pytestmark = pytest.mark.slow

K = 9  # 0: the baseline; 1..6: near-copies; 7, 8: independent
G, P = 32, 2


def _draw(rng, shifts=None, eps=0.05):
    """Hits (systems, queries): system s hits when its uniform falls under p_q + shifts[s] (true recall E p + shift).

    A near-copy reuses the baseline's uniform on each query except with chance ``eps``,
    so it agrees with the baseline on most queries but keeps its own recall exactly.
    """
    shifts = np.zeros(K) if shifts is None else np.asarray(shifts, dtype=float)
    pq = np.repeat(0.15 + 0.6 * rng.beta(2.0, 2.0, size=G), P)  # in [0.15, 0.75]: shifts of +/-0.15 stay in [0, 1]
    base_u = rng.random(G * P)
    out = []
    for s in range(K):
        u = base_u.copy() if s <= 6 else rng.random(G * P)
        if 1 <= s <= 6:
            own = rng.random(G * P) < eps
            u[own] = rng.random(int(own.sum()))
        out.append(u < pq + shifts[s])
    return np.array(out, dtype=float), np.repeat(np.arange(G), P)


def test_family_wise_error_holds_with_near_copies_and_independent_systems():
    rng = np.random.default_rng(20261202)
    n = 250
    keys = [*FAMILIES, "best: a statement false (Hsu)", "best: some tied configuration dropped"]
    wrong = dict.fromkeys(keys, 0)
    dropped = np.zeros(K)
    beyond_hsu = 0
    for _ in range(n):
        v, g = _draw(rng)
        seed = int(rng.integers(1 << 31))
        for name, (pairs, blocks) in FAMILIES.items():
            rows, _ = max_t(v, g, pairs, blocks=blocks, draws=1000, seed=seed)
            wrong[name] += any(r.low > 0 or r.high < 0 for r in rows)
            assert all((r.low > 0 or r.high < 0) == (r.p_adjusted < 0.05) for r in rows)
        wb = with_best(v, g, draws=1000, seed=seed)
        out = ~wb.in_best_set
        dropped += out
        wrong["best: a statement false (Hsu)"] += hsu_statements_wrong(wb, np.zeros(K))
        wrong["best: some tied configuration dropped"] += bool(out.any())
        # some one dropped exactly when the largest studentized difference of any pair passes Hsu's constant:
        # a property of the set, so no rule that gives Hsu's set can drop fewer tied configurations
        beyond_hsu += bool(wb.worst.max() > wb.critical + 1e-9)
        assert np.array_equal(out, wb.upper < 0)
    assert beyond_hsu == wrong["best: some tied configuration dropped"]
    rates = {k: v / n for k, v in wrong.items()}
    print(rates, dropped / n)
    for name in FAMILIES:
        assert rates[name] <= 0.06, rates
    # Hsu's guarantee: whichever configuration is the best, it stays in the set at least 95% of the time. With nine
    # equally good ones each is a best, and each must stay; a dropped one is stated "not the best" (another is at
    # least as good), true of a tied one, so no statement of the comparison with the best is false more often
    assert (dropped / n).max() <= 0.06, dropped / n
    assert rates["best: a statement false (Hsu)"] <= 0.06, rates
    # what Hsu does not promise, measured (docs/statistics-changes.md): that *no* tied configuration drops
    assert rates["best: some tied configuration dropped"] <= 0.12, rates


def test_simultaneous_intervals_cover_with_near_copies():
    # unequal recall: near-copies 5 and 10 points under the baseline (and one above), independents 10 and 15 under
    shifts = np.array([0.0, 0.0, -0.05, -0.05, -0.10, 0.05, 0.0, -0.10, -0.15])
    rates = coverage(np.random.default_rng(20261203), lambda rng: _draw(rng, shifts), shifts)
    print(rates)
    for name in rates:
        assert rates[name] >= 0.93, rates


@pytest.mark.parametrize("p_win, p_loss", [(0.0, 0.0), (0.02, 0.0), (0.03, 0.03), (0.06, 0.0)])
def test_pair_intervals_cover_when_few_questions_differ(p_win, p_loss):
    # one pair alone, 32 questions of one phrasing, rare disagreements: per question only A hits with chance
    # p_win, only B with p_loss; the true difference is p_win - p_loss. Kept: data sets with 0-3 discordant questions
    rng = np.random.default_rng(int(1000 * (p_win + 2 * p_loss)) + 11)
    groups = np.arange(32)
    held = kept = 0
    while kept < 400:
        u = rng.random(32)
        a = np.where(u < p_win, 1, np.where(u < p_win + p_loss, 0, (rng.random(32) < 0.6).astype(int)))
        b = np.where(u < p_win, 0, np.where(u < p_win + p_loss, 1, a))
        if np.count_nonzero(a != b) > 3:
            continue
        kept += 1
        (row,), _ = max_t(np.array([a, b], dtype=float), groups, [(0, 1)])
        held += row.low <= p_win - p_loss <= row.high
        assert row.high - row.low > 0.05  # never "+0 (+0 to +0)"
    assert held / kept >= 0.93, held / kept


def _detected_share(rng, configs, n, phrasings, delta, detects, runs=150) -> float:
    """The share of ``runs`` data sets in which ``detects(v, groups, seed)`` tells system 0 from system 1.

    ``configs`` systems hit at random (chance 1/2) on ``n`` questions in ``phrasings`` phrasings; system 1 copies
    system 0 except on a ``phrasings * delta`` share of the questions, where 0 hits and 1 misses by one phrasing
    (recall apart by ``delta``, most favourably: all one way).
    """
    groups = np.repeat(np.arange(n), phrasings)
    detected = 0
    for _ in range(runs):
        v = (rng.random((configs, n * phrasings)) < 0.5).astype(float)
        v[1] = v[0]
        flip = np.flatnonzero(rng.random(n) < phrasings * delta) * phrasings  # first phrasing of those questions
        v[0, flip], v[1, flip] = 1.0, 0.0
        detected += detects(v, groups, int(rng.integers(1 << 31)))
    return detected / runs


def test_family_power_figure_agrees_with_a_simulation_of_the_family_test():
    # what truth stats and the report say: within all pairs of 6 configurations on 32 questions in 2 phrasings,
    # the smallest difference detected 80% of the time (most favourable: one phrasing per disagreeing question,
    # all one way). Simulate exactly that at that size with the family test itself: it must agree within 10%
    from ragdiag.analyses.compare.power import family_critical, resolvable

    configs, n, phrasings = 6, 32, 2
    r = resolvable(n, phrasings, family_size=15)
    assert r.critical == family_critical(configs, n, phrasings)
    delta = r.family  # a share of recall: P * delta of the questions disagree one way, by one phrasing
    rng = np.random.default_rng(20261204)
    pairs = list(itertools.combinations(range(configs), 2))
    detected = _detected_share(rng, configs, n, phrasings, delta,
                               lambda v, g, seed: max_t(v, g, pairs, draws=1000, seed=seed)[0][0].low > 0)
    assert abs(detected - 0.8) <= 0.08, detected


@pytest.mark.parametrize("p", [1 / 320, 1 / 64, 1 / 32])
def test_clustered_rate_covers_at_few_events(p):
    # 32 questions in 2 phrasings that share the event half the time (a needle lost for both): rare rates mostly
    # give 0-2 events; the clustered interval (exact at 0-2 on the effective counts) must keep its 95%
    from ragdiag.analyses.compare import clustered_rate

    rng = np.random.default_rng(int(1 / p))
    groups = np.repeat(np.arange(32), 2)
    held = 0
    runs = 2000
    for _ in range(runs):
        shared = rng.random(32) < 0.5
        first = rng.random(32) < p
        second = np.where(shared, first, rng.random(32) < p)
        iv = clustered_rate(np.column_stack([first, second]).ravel(), groups)
        held += iv.low <= p <= iv.high
    assert held / runs >= 0.93, held / runs


def test_report_power_figure_agrees_with_a_simulation_of_the_best_test():
    # the report's "within the family" figure reads the best set's own critical value (Hsu's, one-sided): at 6
    # configurations on 32 questions in 2 phrasings, the difference it names must be the one Hsu's test (the
    # worse of a pair dropped from the best set) detects 80% of the time, within 10%
    from ragdiag.analyses.compare.power import resolvable

    configs, n, phrasings = 6, 32, 2
    rng = np.random.default_rng(20261208)
    groups = np.repeat(np.arange(n), phrasings)
    c = with_best((rng.random((configs, n * phrasings)) < 0.5).astype(float), groups, draws=1000, seed=1).critical
    delta = resolvable(n, phrasings, family_size=15, critical=c).family
    detected = _detected_share(rng, configs, n, phrasings, delta,
                               lambda v, g, seed: not with_best(v, g, draws=1000, seed=seed).in_best_set[1])
    print(c, delta, detected)
    assert abs(detected - 0.8) <= 0.08, detected
