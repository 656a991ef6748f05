"""Comparisons of an evaluation's configurations (ragdiag.analyses.compare): exact values on a hand-checkable fixture.

Four questions asked in two phrasings each, plus one out-of-domain query, and
three configurations whose needle is either first (rank 1) or not found (0),
so hits are the same at every k:

    query        A  B  C
    q1:course    1  0  1
    q1:ticket    1  0  1
    q2:course    1  1  1
    q2:ticket    0  1  1
    q3:course    0  0  1
    q3:ticket    0  0  1
    q4:course    1  0  1
    q4:ticket    1  0  1

Per question (hits of the first minus the second, summed over its phrasings):

* A vs B: q1 +2, q2 -1, q3 0, q4 +2 -> wins 2, losses 1, ties 1. Sign flips of
  magnitudes 2, 1, 2 give sums +-5, +-3, +-1 (twice each of +-1); |S| >= 3 in 4
  of the 8 patterns: p = 0.5. Difference (5 - 2) / 8 = 0.375.
* A vs C: q1 0, q2 -1, q3 -2, q4 0 -> wins 0, losses 2, ties 2; only +-(1 + 2)
  reaches 3: p = 2/4 = 0.5. Difference (5 - 8) / 8 = -0.375.
* B vs C: q1 -2, q2 0, q3 -2, q4 -2 -> wins 0, losses 3, ties 1; only all-equal
  signs reach 6: p = 2/8 = 0.25. Difference (2 - 8) / 8 = -0.75.

Alone, each pair's interval starts from its exact sign-flip test: A vs B has |S| = 3
of 8 queries and the null's largest value 5 has tail 2/8 >= 0.05, so c = 5 and
the interval is (3 +/- 5) / 8 = [-0.25, 1.0]; B vs C: |S| = 6, null {6: 2/8, 2: 6/8},
c = 6, interval (-6 +/- 6) / 8 = [-1.5, 0.0] (touches 0: not shown different, p 0.25).

Alone, the interval is then widened to hold the score (Tango) interval at 1.96.

Within a family (never looser than each pair alone), the adjusted p and the simultaneous intervals come from the
(3!)^4 = 1296 arrangements of the three systems within each question (one
block: the statistic is the studentized max |S| / sqrt(Q) over the pairs, ``Q``
the sum of squared per-question differences, recomputed in each arrangement);
the tests below recount them by brute force, independently of the library.
"""

from __future__ import annotations

from statistics import NormalDist
from types import SimpleNamespace

import numpy as np
import pytest

from ragdiag.analyses.compare.comparisons import compare, compare_in_family, family, family_rows, pairwise
from ragdiag.analyses.compare.score import score_bounds
from ragdiag.core.defaults import PRIMARY_K
from ragdiag.evaluation.records import Config, ConfigResult, Evaluation
from ragdiag.documents.truth import Query

HITS = {"A": [1, 1, 1, 0, 0, 0, 1, 1], "B": [0, 0, 1, 1, 0, 0, 0, 0], "C": [1] * 8}


def _result(cfg: Config, ranks) -> ConfigResult:
    """A ConfigResult holding only needle ranks (the comparisons read nothing else)."""
    n = len(ranks)
    z = np.zeros((n, 1))
    return ConfigResult(cfg, np.asarray(ranks, dtype=np.int64), np.full(n, np.nan), np.zeros(n),
                        np.zeros((n, 1), dtype=np.int64), z, z, np.zeros((n, 1), dtype=bool))


@pytest.fixture(scope="module")
def ev() -> Evaluation:
    queries = tuple(Query(f"q{i}:{p}", f"question {i} ({p})", p, f"q{i}") for i in range(1, 5)
                    for p in ("course", "ticket")) + (Query("o1", "unrelated", "ood", None, "far"),)
    results = {Config(s, "dense"): _result(Config(s, "dense"), hits + [0]) for s, hits in HITS.items()}
    truth = SimpleNamespace(phrasings=("course", "ticket"))  # all the comparisons read of the ground truth
    return Evaluation(corpus=None, truth=truth, queries=queries, indexes={}, results=results)


def _oracle(ev, pairs, k=PRIMARY_K):
    """Brute force over every arrangement of the systems within each question: adjusted p, c (studentized), S, Q."""
    import itertools

    systems = sorted({c for pr in pairs for c in pr})
    mask = ev.in_domain
    qs = sorted({q.question_id for q in ev.queries if q.in_domain})
    hits = {c: (ev.result(c).needle_rank[mask] > 0) & (ev.result(c).needle_rank[mask] <= k) for c in systems}
    qids = [q.question_id for q in ev.queries if q.in_domain]
    Y = {c: [int(sum(h for h, g in zip(hits[c], qids) if g == q)) for q in qs] for c in systems}
    per_q = [list(itertools.permutations([Y[c][i] for c in systems])) for i in range(len(qs))]

    def stat(cols, a, b):  # |S| / sqrt(Q) of a - b over the questions, 0 when they never differ
        ia, ib = systems.index(a), systems.index(b)
        d = [col[ia] - col[ib] for col in cols]
        q = sum(x * x for x in d)
        return abs(sum(d)) / q ** 0.5 if q else 0.0

    maxes = [round(max(stat(combo, a, b) for a, b in pairs), 12) for combo in itertools.product(*per_q)]
    n = len(maxes)
    tail = lambda t: sum(m >= round(t, 12) for m in maxes) / n  # noqa: E731
    c = max(v for v in set(maxes) if tail(v) >= 0.05)
    observed = list(zip(*[Y[s] for s in systems]))
    obs = {pr: sum(Y[pr[0]]) - sum(Y[pr[1]]) for pr in pairs}
    q = {pr: sum((x - y) ** 2 for x, y in zip(Y[pr[0]], Y[pr[1]])) for pr in pairs}
    d = {pr: [x - y for x, y in zip(Y[pr[0]], Y[pr[1]])] for pr in pairs}
    return {pr: tail(stat(observed, *pr)) for pr in pairs}, c, obs, q, d


@pytest.mark.parametrize("k", [1, PRIMARY_K, 20])
def test_family_rows_agree_with_a_brute_force_max_t(ev, k):
    from ragdiag.analyses.compare.score import score_bounds

    rows = family_rows(family(ev, k=k))
    pairs = [("A/dense", "B/dense"), ("A/dense", "C/dense"), ("B/dense", "C/dense")]
    p_adj, c, obs, q, d = _oracle(ev, pairs, k)
    assert [(r.a, r.b, r.wins, r.losses, r.ties, r.p, r.difference, r.n_questions) for r in rows] == [
        ("A/dense", "B/dense", 2, 1, 1, 0.5, 0.375, 4),
        ("A/dense", "C/dense", 0, 2, 2, 0.5, -0.375, 4),
        ("B/dense", "C/dense", 0, 3, 1, 0.25, -0.75, 4)]
    for r, pr in zip(rows, pairs):
        alone = compare(ev, *pr, k=k)
        # never looser than the pair alone: the larger p, and the interval that reaches 0 if either does
        assert r.p_adjusted == pytest.approx(max(p_adj[pr], alone.test.p), abs=1e-12)
        # the studentized interval (obs +/- c sqrt(Q)) / 8, widened to the score interval at c, within [-1, 1]
        s_low, s_high = score_bounds(d[pr], [2] * 4, c)
        fam = (max(-1.0, min((obs[pr] - c * q[pr] ** 0.5) / 8, s_low)),
               min(1.0, max((obs[pr] + c * q[pr] ** 0.5) / 8, s_high)))
        fam_excludes = fam[0] > 0 or fam[1] < 0
        expected = fam if not fam_excludes else (alone.difference()["low"], alone.difference()["high"])
        assert (r.low, r.high) == pytest.approx(expected, abs=1e-12)
        assert r.kind == "simultaneous" and (r.status == "different") == (r.low > 0 or r.high < 0)
        assert (r.status == "different") == (r.p_adjusted < 0.05)
    # the exploratory q-values: BH of (0.5, 0.5, 0.25) = (0.5, 0.5, 0.5)
    assert [r.q_value for r in rows] == [0.5, 0.5, 0.5]
    assert rows[0].cells()["p_adjusted"] == rows[0].p_adjusted
    assert pairwise(ev, k=k) == rows


def test_compare_alone_inverts_the_exact_sign_flip_test(ev):
    c = compare(ev, "A/dense", "B/dense", k=PRIMARY_K)
    assert c.wins == ("q1:course", "q1:ticket", "q4:course", "q4:ticket")
    assert c.losses == ("q2:ticket",)
    assert (c.test.wins, c.test.losses, c.test.ties, c.test.p, c.test.phrasings) == (2, 1, 1, 0.5, 2)
    assert c.p_adjusted == 0.5 and c.family == 1 and c.metric == f"R@{PRIMARY_K}"
    # the exact test's (3 +/- 5) / 8 = [-0.25, 1.0], widened to the score interval at 1.96 (per question
    # differences +2, -1, 0, +2 of 2 phrasings: Tango's, with clusters, runs from -0.2986 to +0.8134)
    z = NormalDist().inv_cdf(0.975)
    s_low, s_high = score_bounds([2, -1, 0, 2], [2] * 4, z)
    assert s_low < -0.25 and s_high < 1.0
    assert c.difference() == {"estimate": 0.375, "low": s_low, "high": 1.0, "kind": "simultaneous"}
    assert c.verdict == (f"A/dense vs B/dense at R@{PRIMARY_K} over 4 questions: not shown different: +38 pts "
                         "(\u221230 to +100), this pair alone, sign-flip p = 0.500; A/dense wins 2 questions, loses 1")
    bc = compare(ev, "B/dense", "C/dense")
    # the exact test's (-6 +/- 6) / 8 = [-1.5, 0.0], within [-1, 1], and the score interval's upper end past 0
    b_low, b_high = score_bounds([-2, 0, -2, -2], [2] * 4, z)
    assert b_high > 0.1
    assert bc.difference() == {"estimate": -0.75, "low": -1.0, "high": b_high, "kind": "simultaneous"}
    assert bc.status == "not shown different" and bc.p_adjusted == 0.25
    mrr = compare(ev, "A/dense", "B/dense", k=None)  # ranks are 1 or absent: MRR equals the hits
    assert mrr.metric == "MRR" and not mrr.primary and mrr.test.p == 0.5 and "descriptive only" in mrr.verdict
    assert mrr.difference()["low"] == pytest.approx(s_low) and mrr.difference()["high"] == pytest.approx(1.0)


def test_compare_by_phrasing_counts_one_query_per_question(ev):
    c = compare(ev, "B/dense", "C/dense", k=1, phrasing="ticket")  # q1 -1, q2 0, q3 -1, q4 -1
    assert (c.test.wins, c.test.losses, c.test.ties, c.test.p) == (0, 3, 1, 0.25)
    with pytest.raises(ValueError, match="unknown phrasing 'chat'; choose one of: all, course, ticket"):
        compare(ev, "B/dense", "C/dense", phrasing="chat")
    with pytest.raises(ValueError, match="k must be >= 1"):
        compare(ev, "B/dense", "C/dense", k=0)


def test_compare_in_family_keeps_the_family_in_either_direction(ev):
    ab = compare_in_family(ev, "A/dense", "B/dense")
    ba = compare_in_family(ev, "B/dense", "A/dense")
    assert (ab.family, ab.family_name) == (3, "all 3 pairs")
    assert (ba.a.label, ba.test.wins, ba.test.losses, ba.p_adjusted, ba.family) == ("B/dense", 1, 2, ab.p_adjusted, 3)
    assert ba.test.difference.estimate == -0.375
    assert ba.difference()["low"] == -ab.difference()["high"] and ba.difference()["high"] == -ab.difference()["low"]
    assert ba.wins == ab.losses
    planned = compare_in_family(ev, "B/dense", "C/dense", baseline="B/dense")  # B against A and C
    p_adj, c, *_ = _oracle(ev, [("B/dense", "A/dense"), ("B/dense", "C/dense")])
    assert (planned.family, planned.family_name) == (2, "B/dense against each other configuration")
    assert planned.p_adjusted == pytest.approx(max(p_adj[("B/dense", "C/dense")], planned.test.p))


def test_planned_family_is_the_baseline_against_each_other(ev):
    fam = family(ev, baseline="C/dense", k=PRIMARY_K)
    p_adj, *_ = _oracle(ev, [("C/dense", "A/dense"), ("C/dense", "B/dense")])
    assert [(c.a.label, c.b.label, c.test.p) for c in fam] == [("C/dense", "A/dense", 0.5), ("C/dense", "B/dense", 0.25)]
    assert [c.p_adjusted for c in fam] == pytest.approx([max(p_adj[("C/dense", "A/dense")], 0.5),
                                                         max(p_adj[("C/dense", "B/dense")], 0.25)])
    assert {c.family_name for c in fam} == {"C/dense against each other configuration"} and fam[0].family == 2


def test_summary_and_json_name_the_family_and_the_interval(ev):
    c = compare_in_family(ev, "B/dense", "C/dense", k=PRIMARY_K)
    text = c.summary()
    assert text.startswith(f"B/dense vs C/dense at R@{PRIMARY_K} (all), over 4 questions: wins 0, losses 3, ties 1; "
                           "exact sign-flip test p = 0.25, adjusted p = ")
    assert "(simultaneous, exact (1,296 arrangements))" in text and "unadjusted question bootstrap" in text
    doc = c.as_json()
    assert (doc["p"], doc["family_size"], doc["discordant_queries"]["b_finds"]) == (
        0.25, 3, ["q1:course", "q1:ticket", "q3:course", "q3:ticket", "q4:course", "q4:ticket"])
    assert set(doc["difference"]) == {"estimate", "low", "high", "kind"} and doc["difference"]["kind"] == "simultaneous"
    assert doc["status"] == ("different" if doc["difference"]["high"] < 0 else "not shown different")


@pytest.mark.parametrize("df", [1, 2, 5, 31, 100, 10_000])
def test_t_quantile_matches_scipy_stats(df):
    from scipy import stats

    from ragdiag.analyses.compare.intervals import _t_quantile

    assert _t_quantile(0.95, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-12)


def test_two_identical_configurations_get_an_interval_wider_than_zero():
    # nothing differs on any question: the exact test's interval collapses to +0 (+0 to +0); the score interval
    # (the hull's other half) does not: 4 questions of 2 phrasings cannot rule out a difference that rarely shows
    queries = tuple(Query(f"q{i}:{p}", f"question {i} ({p})", p, f"q{i}") for i in range(1, 5)
                    for p in ("course", "ticket"))
    hits = [1, 1, 1, 0, 0, 0, 1, 1]
    results = {Config(s, "dense"): _result(Config(s, "dense"), hits) for s in ("A", "B")}
    twin = Evaluation(corpus=None, truth=SimpleNamespace(phrasings=("course", "ticket")), queries=queries,
                      indexes={}, results=results)
    c = compare(twin, "A/dense", "B/dense")
    d = c.difference()
    assert (c.test.wins, c.test.losses, d["estimate"]) == (0, 0, 0.0)
    low, high = score_bounds([0, 0, 0, 0], [2] * 4, NormalDist().inv_cdf(0.975))
    assert (d["low"], d["high"]) == pytest.approx((low, high)) and high - low > 0.5
    assert c.status == "not shown different" and "0 pts (0 to 0)" not in c.verdict
