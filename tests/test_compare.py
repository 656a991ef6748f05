"""Comparisons of an evaluation's configurations (ragdiag.compare): exact values on a hand-checkable fixture.

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

Holm over the three raw p (0.5, 0.5, 0.25): the smallest times 3 = 0.75, then
0.5 times 2 = 1.0, then max(1.0, 0.5) = 1.0: adjusted (1.0, 1.0, 0.75).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ragdiag.compare.comparisons import FAMILIES, compare, compare_in_family, family, family_rows, pairwise
from ragdiag.defaults import PRIMARY_K
from ragdiag.evaluation import Config, ConfigResult, Evaluation
from ragdiag.rows import PairRow
from ragdiag.truth import Query

HITS = {"A": [1, 1, 1, 0, 0, 0, 1, 1], "B": [0, 0, 1, 1, 0, 0, 0, 0], "C": [1] * 8}


def _result(cfg: Config, ranks) -> ConfigResult:
    """A ConfigResult holding only needle ranks (the comparisons read nothing else)."""
    n = len(ranks)
    z = np.zeros((n, 1))
    return ConfigResult(cfg, np.asarray(ranks, dtype=np.int64), np.full(n, np.nan), np.zeros(n),
                        np.zeros((n, 1), dtype=np.int64), z, z, np.zeros((n, 1), dtype=bool), ("hit",) * n)


@pytest.fixture(scope="module")
def ev() -> Evaluation:
    queries = tuple(Query(f"q{i}:{p}", f"question {i} ({p})", p, f"q{i}") for i in range(1, 5)
                    for p in ("course", "ticket")) + (Query("o1", "unrelated", "ood", None, "far"),)
    results = {Config(s, "dense"): _result(Config(s, "dense"), hits + [0]) for s, hits in HITS.items()}
    truth = SimpleNamespace(phrasings=("course", "ticket"))  # all the comparisons read of the ground truth
    return Evaluation(corpus=None, truth=truth, queries=queries, indexes={}, results=results)


@pytest.mark.parametrize("k", [1, PRIMARY_K, 20])
def test_family_rows_hand_computed(ev, k):
    rows = family_rows(family(ev, k=k))
    descriptive = k != PRIMARY_K
    status = "descriptive" if descriptive else "not shown different"
    assert rows == [
        PairRow("A/dense", "B/dense", 2, 1, 1, 0.5, 1.0, 0.375, rows[0].low, rows[0].high, status, 4),
        PairRow("A/dense", "C/dense", 0, 2, 2, 0.5, 1.0, -0.375, rows[1].low, rows[1].high, status, 4),
        PairRow("B/dense", "C/dense", 0, 3, 1, 0.25, 0.75, -0.75, rows[2].low, rows[2].high, status, 4),
    ]
    assert rows[0].cells() == {"a": "A/dense", "b": "B/dense", "wins": 2, "losses": 1, "ties": 1, "p": 0.5,
                               "p_holm": 1.0, "difference": 0.375, "low": rows[0].low, "high": rows[0].high,
                               "status": status, "n_questions": 4}
    # B never finds what C misses: every resampling of questions gives a difference below 0
    assert rows[2].high < 0 and rows[2].low >= -1.0
    assert pairwise(ev, k=k) == rows


def test_compare_lists_the_discordant_queries(ev):
    c = compare(ev, "A/dense", "B/dense", k=PRIMARY_K)
    assert c.wins == ("q1:course", "q1:ticket", "q4:course", "q4:ticket")
    assert c.losses == ("q2:ticket",)
    assert (c.test.wins, c.test.losses, c.test.ties, c.test.p, c.test.phrasings) == (2, 1, 1, 0.5, 2)
    assert c.p_holm is None and c.p_shown == 0.5 and c.metric == f"R@{PRIMARY_K}"
    assert c.verdict.startswith(f"A/dense vs B/dense at R@{PRIMARY_K} over 4 questions: not shown different (p = 0.500)")
    mrr = compare(ev, "A/dense", "B/dense", k=None)  # ranks are 1 or absent: MRR equals the hits
    assert mrr.metric == "MRR" and mrr.status == "descriptive" and mrr.test.p == 0.5


def test_compare_by_phrasing_counts_one_query_per_question(ev):
    c = compare(ev, "B/dense", "C/dense", k=1, phrasing="ticket")  # q1 -1, q2 0, q3 -1, q4 -1
    assert (c.test.wins, c.test.losses, c.test.ties, c.test.p) == (0, 3, 1, 0.25)
    with pytest.raises(ValueError, match="unknown phrasing 'chat'; choose one of: all, course, ticket"):
        compare(ev, "B/dense", "C/dense", phrasing="chat")
    with pytest.raises(ValueError, match="k must be >= 1"):
        compare(ev, "B/dense", "C/dense", k=0)


def test_compare_in_family_keeps_the_family_p_in_either_direction(ev):
    ab = compare_in_family(ev, "A/dense", "B/dense")
    ba = compare_in_family(ev, "B/dense", "A/dense")
    assert (ab.p_holm, ab.family, ab.family_name) == (1.0, 3, "all 3 pairs")
    assert (ba.a.label, ba.test.wins, ba.test.losses, ba.p_holm, ba.family) == ("B/dense", 1, 2, 1.0, 3)
    assert ba.test.difference.estimate == -0.375
    planned = compare_in_family(ev, "B/dense", "C/dense", planned=True)  # B against A and C: Holm over 2
    assert (planned.family, planned.p_holm, planned.family_name) == (2, 0.5, "B/dense against each other configuration")


def test_planned_family_is_the_baseline_against_each_other(ev):
    fam = family(ev, baseline="C/dense", k=PRIMARY_K)
    assert [(c.a.label, c.b.label, c.test.p, c.p_holm) for c in fam] == [
        ("C/dense", "A/dense", 0.5, 0.5), ("C/dense", "B/dense", 0.25, 0.5)]
    assert FAMILIES == ("all pairs", "planned")


def test_summary_mentions_the_family(ev):
    c = compare_in_family(ev, "B/dense", "C/dense", k=PRIMARY_K)
    text = c.summary()
    assert text.startswith(f"B/dense vs C/dense at R@{PRIMARY_K} (all), over 4 questions: wins 0, losses 3, ties 1; "
                           "exact sign-flip test p = 0.25, Holm p = 0.75 within all 3 pairs (3); difference -0.75 [")
    doc = c.as_json()
    assert (doc["p"], doc["p_holm"], doc["family_size"], doc["discordant_queries"]["b_finds"]) == (
        0.25, 0.75, 3, ["q1:course", "q1:ticket", "q3:course", "q3:ticket", "q4:course", "q4:ticket"])


@pytest.mark.parametrize("df", [1, 2, 5, 31, 100, 10_000])
def test_t_quantile_matches_scipy_stats(df):
    from scipy import stats

    from ragdiag.compare.intervals import _t_quantile

    assert _t_quantile(0.95, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-12)
