"""The recommendation and the families on the tiny corpus with the FAKE encoder (fast; no model).

All six strategies with dense, bm25 and hybrid: every family's verdict agrees
with its interval, the best set and the rule that picks from it, the cut and
its rates, and the words for each configuration.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from ragdiag.analyses.compare.best import best
from ragdiag.core.gate import Gate
from ragdiag.analyses.compare.comparisons import compare, family
from ragdiag.analyses.compare.effects import CONTRASTS, effects
from ragdiag.core.defaults import ALPHA, PRACTICAL_MARGIN, PRIMARY_K
from ragdiag.analyses.recommend import complexity_key, describe_config, recommend
from ragdiag.core.stats import Interval


@pytest.fixture(scope="module")
def six(tiny_corpus, tiny_truth, fake_encoder):
    """The tiny corpus under all six strategies, dense/bm25/hybrid, with the FAKE encoder."""
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A,B,C,D,E,F",
                    retrievers="dense,bm25,hybrid")


def _excludes_zero(d: dict) -> bool:
    return d["low"] > 0 or d["high"] < 0


@pytest.mark.parametrize("k", [1, 2, PRIMARY_K, None])
def test_no_verdict_contradicts_its_interval_fake_encoder(six, k):
    fam = family(six, k=k)
    assert len(fam) == 18 * 17 // 2
    for c in fam:
        d = c.difference()
        assert (c.status == "different") == _excludes_zero(d) == (c.p_adjusted < ALPHA)
        assert ("not shown different" in c.verdict) == (not _excludes_zero(d))
        if k is not None:  # hits: never looser than the pair alone
            assert c.p_adjusted >= c.test.p - 1e-12
    for a, b in itertools.combinations(list(six.results)[:6], 2):
        alone = compare(six, a, b, k=k)
        assert (alone.status == "different") == _excludes_zero(alone.difference())


def test_effects_family_on_the_tiny_design(six):
    res = effects(six, k=2)
    assert len(res.rows) == len(CONTRASTS) * 3  # seven contrasts for each of three retrievers
    assert {(r.switch, r.with_, r.without) for r in res.rows} == set(CONTRASTS)
    for r in res.rows:
        assert (r.status == "different") == (r.low > 0 or r.high < 0) == (r.p_adjusted < ALPHA)
        alone = compare(six, f"{r.with_}/{r.retriever}", f"{r.without}/{r.retriever}", k=2)
        assert r.p == alone.test.p and (r.wins, r.losses, r.ties) == (alone.test.wins, alone.test.losses,
                                                                       alone.test.ties)
        assert r.p_adjusted >= r.p - 1e-12
        assert set(r.destroyed) == {r.with_, r.without}
    # blind cuts destroy needles on the tiny corpus (see conftest): the counts come from the chunking audit
    assert res.rows[0].destroyed == {s: len(six.indexes[s].report.destroyed) for s in res.rows[0].destroyed}
    doc = json.loads(json.dumps(res.as_json()))
    assert set(doc["rows"][0]["difference"]) == {"estimate", "low", "high", "kind"}
    with pytest.raises(ValueError, match="no contrast"):
        effects(six, k=2, strategies=["A", "E"])


def test_best_set_is_not_shown_worse_than_the_best(six):
    res = best(six, k=2)
    means = {r.config: r.mean for r in res.rows}
    assert means[res.best] == max(means.values())
    for r in res.rows:
        if r.config == res.best:
            assert r.in_best_set and r.p_adjusted is None
        else:
            assert r.estimate == pytest.approx(r.mean - means[res.best])
            assert r.in_best_set == (r.high >= 0) == (r.p_adjusted >= ALPHA)
    assert set(res.best_set) == {r.config for r in res.rows if r.in_best_set}


def test_describe_and_the_order_of_simplicity():
    assert describe_config("E/hybrid") == "paragraph cuts + section header, hybrid retrieval"
    assert describe_config("A/dense") == "blind 512-char cuts, dense retrieval"
    assert describe_config("B/bm25") == "blind cuts + overlap, BM25"
    assert describe_config("F/rerank-maxsim") == "paragraph cuts + section header + overlap, hybrid + word-level rerank"
    assert describe_config("D/rerank-ce") == "paragraph cuts + overlap, hybrid + cross-encoder rerank"
    assert describe_config("C/dense@use") == "paragraph cuts, dense retrieval (use)"
    order = sorted(["F/rerank-ce", "E/hybrid", "C/bm25", "E/dense", "A/dense", "D/dense"], key=complexity_key)
    # dense < bm25 < hybrid < rerankers; within one retriever fewer switches first (A none, E and D two)
    assert order == ["A/dense", "D/dense", "E/dense", "C/bm25", "E/hybrid", "F/rerank-ce"]


def _cost(config: str, ms: float) -> "object":
    from ragdiag.analyses.cost import CostRow

    return CostRow(config, Interval(0.5, 0.2, 0.8, 4, 8), Gate(4, 0.6, PRIMARY_K), 1.0, "measured", ms, ms, 8, 0,
                   0.0)


def _answered_comparison(ev, gate, max_bluff=0.05):
    """The oracle of the decision's comparison, by hand: each configuration's own proposed cut for the bluff goal,
    the answered column under it (closest holder in the window below the cut), Hsu's MCB over questions."""
    from ragdiag.analyses.compare.best import best_of
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.threshold import Goal, propose_cut
    from ragdiag.core.defaults import DEFAULT_CUT

    labels = sorted((c.label for c in ev.results if not c.external), key=complexity_key)
    values, cuts = [], {}
    for c in labels:
        t = gate_table(ev, c, gate)
        cuts[c] = propose_cut(t, Goal(max_bluff=max_bluff), default=DEFAULT_CUT).cut
        values.append((t.closest_holder[t.in_domain] < cuts[c]).astype(float))
    return best_of(values, ev.groups(ev.in_domain), labels, k=gate.k), cuts


def test_recommend_takes_the_simplest_of_the_best_set_or_the_cheapest_measured(six):
    """The simplest (or cheapest measured) member of the best set within PRACTICAL_MARGIN of the best's answered
    share at its own cut."""
    rec = recommend(six, Gate(k=2))
    res, cuts = _answered_comparison(six, Gate(k=2))
    assert rec.best_set == res.best_set and rec.config in rec.best_set
    assert rec.cuts == cuts and rec.cut == cuts[rec.config]
    assert [(r.config, r.mean, r.low, r.high) for r in rec.comparison.rows] == [
        (r.config, r.mean, r.low, r.high) for r in res.rows]
    rows = {r.config: r for r in res.rows}
    # the shortlist: the best and the members whose simultaneous interval to it stays above -margin (shown within it)
    shortlist = [m for m in res.best_set if m == res.best or rows[m].low >= -PRACTICAL_MARGIN - 1e-12]
    assert res.best in shortlist
    assert rec.config == min(shortlist, key=complexity_key)
    if len(shortlist) > 1:
        assert rec.words == describe_config(rec.config) and "the simplest" in rec.why
    else:  # 8 questions show no member within 5 points: said plainly, and the pick is the best, with its interval
        assert len(res.best_set) > 1 and rec.config == res.best
        assert "the data cannot separate the" in rec.why and "runner-up" in rec.why and "Hsu's MCB" in rec.why
    # the tiny truth has 2 off-topic queries: too few to certify 5%, so the in-sample cut, said to be optimistic
    assert rec.cut_method == "in sample (optimistic)" and "it takes at least 19" in rec.guarantee
    doc = json.loads(json.dumps(rec.as_json()))
    for key in ("answered", "bluffs", "lost"):
        assert set(doc[key]) == {"count", "rate", "low", "high"}
    n_in = int(six.in_domain.sum())
    assert doc["answered"]["count"] + doc["lost"]["count"] == n_in
    # measured cost: the cheapest member of the best set wins, whatever the order of simplicity
    members = shortlist
    if len(members) > 1:
        costly = {m: 10.0 for m in members}
        costly[members[-1]] = 1.0
        cheap = recommend(six, Gate(k=2), costs=[_cost(m, ms) for m, ms in costly.items()])
        assert cheap.config == members[-1] and "measured cost" in cheap.why
        # latencies within 25% are a tie (timing noise): the simplest of the tied ones wins
        close = {m: 10.0 for m in members}
        close[members[-1]] = 9.0
        tied = recommend(six, Gate(k=2), costs=[_cost(m, ms) for m, ms in close.items()])
        assert tied.config == min(members, key=complexity_key)
    with pytest.raises(ValueError, match="max_bluff"):
        recommend(six, max_bluff=0.0)


def test_cost_ties_follow_the_measured_spread():
    from ragdiag.analyses.cost import CostRow
    from ragdiag.analyses.recommend import _measured

    def row(config, median, p95):
        return CostRow(config, Interval(0.5, 0.2, 0.8, 4, 8), Gate(4, 0.6, PRIMARY_K), 1.0, "measured", median, p95,
                       8, 0, 0.0)

    # the cheapest's p95 is 80% above its median: a member 70% slower is within its spread (tier 0), 90% is not
    costs = [row("A/dense", 10.0, 18.0), row("B/dense", 17.0, 20.0), row("C/dense", 19.0, 25.0)]
    assert _measured(costs, ["A/dense", "B/dense", "C/dense"]) == {"A/dense": 0, "B/dense": 0, "C/dense": 1}
    # a tight spread still ties within COST_TIE (25%)
    tight = [row("A/dense", 10.0, 10.1), row("B/dense", 12.4, 12.5), row("C/dense", 13.0, 13.1)]
    assert _measured(tight, ["A/dense", "B/dense", "C/dense"]) == {"A/dense": 0, "B/dense": 0, "C/dense": 1}


def test_recommend_with_enough_off_topic_queries_uses_the_conformal_cut(six):
    from dataclasses import replace

    from ragdiag.analyses.threshold.choice import conformal_cut
    from ragdiag.analyses.gate_table import gate_table

    # 20 copies of the two off-topic queries (exchangeable draws are all the cut needs): 40 >= 1/0.05 - 1
    ood = [i for i, q in enumerate(six.queries) if not q.in_domain]
    keep = [i for i, q in enumerate(six.queries) if q.in_domain] + ood * 20
    queries = tuple(six.queries[i] if i not in ood or n < len(six.queries) else
                    replace(six.queries[i], id=f"{six.queries[i].id}-{n}") for n, i in enumerate(keep))
    results = {c: replace(r, needle_rank=r.needle_rank[keep], needle_distance=r.needle_distance[keep],
                          top1_distance=r.top1_distance[keep], top_order=r.top_order[keep],
                          top_distance=r.top_distance[keep], top_scores=r.top_scores[keep],
                          top_holds=r.top_holds[keep],
                          retrieved=None if r.retrieved is None else np.asarray(r.retrieved)[keep])
               for c, r in six.results.items()}
    ev = replace(six, queries=queries, results=results)
    rec = recommend(ev, Gate(k=2))
    cut, words = conformal_cut(gate_table(ev, rec.config), 0.05)
    assert rec.cut_method == "conformal" and rec.cut == cut
    assert "chance that the realised rate exceeds 5.0%" in rec.guarantee


def test_recommend_reuses_a_comparison_with_the_best_it_is_given(six):
    """A caller that has the decision's comparison passes it: the same recommendation, computed once; a comparison
    of recall (or at another k, or for another goal) is refused: the decision is on answered at the cut."""
    first = recommend(six, Gate(k=2))
    again = recommend(six, Gate(k=2), best_result=first.comparison)
    assert again.as_json() == first.as_json()
    with pytest.raises(ValueError, match="best_result"):
        recommend(six, Gate(k=4), best_result=first.comparison)  # another k
    with pytest.raises(ValueError, match="best_result"):
        recommend(six, Gate(k=2), max_bluff=0.1, best_result=first.comparison)  # another goal
    recall = best(six, k=2, configs=[c for c in six.results if not c.external])
    with pytest.raises(ValueError, match="answered at each configuration's own cut"):
        recommend(six, Gate(k=2), best_result=recall)
