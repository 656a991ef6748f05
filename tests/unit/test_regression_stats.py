"""The gate's paired statistics on tiny hand-checkable fixtures, with scipy's binomtest and brute force as oracles."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest

from ragdiag.analyses.compare.paired import sign_flip_test
from statistics import NormalDist

from ragdiag.analyses.compare.score import score_test
from ragdiag.present.regression.stats import paired_gate


def _brute(d, n, delta):
    """Both one-sided sign-flip tails of e = d - delta * n by enumerating every sign pattern."""
    e = np.asarray(d, float) - delta * np.asarray(n, float)
    obs = e.sum()
    sums = np.array([np.dot(s, e) for s in itertools.product((-1, 1), repeat=len(e))])
    return float((sums >= obs - 1e-9).mean()), float((sums <= obs + 1e-9).mean())


# (baseline, candidate, groups, margin, expected verdict, expected p_worse, arithmetic)
TABLE = [
    # nothing changed: pass without a test
    ([1, 0, 1], [1, 0, 1], ["a", "b", "c"], 0.05, "pass", 1.0, "no query changed"),
    # 3 of 4 questions lost, none won: P(all 3 discordant signs negative) = 1/8
    ([1, 1, 1, 1], [0, 0, 0, 1], ["a", "b", "c", "d"], 0.05, "inconclusive", 1 / 8, "1/2^3"),
    # 5 lost of 5: 1/32 < 0.05: shown worse
    ([1] * 5, [0] * 5, list("abcde"), 0.05, "fail", 1 / 32, "1/2^5"),
    # one question, two phrasings, both lost (d = -2), another lost one phrasing (d = -1):
    # sums of +/-2 +/-1: -3 has probability 1/4
    ([1, 1, 1, 0], [0, 0, 0, 0], ["a", "a", "b", "b"], 0.05, "inconclusive", 1 / 4, "P(S <= -3) = 1/4"),
    # 1 loss among 40 questions, 39 ties, margin 0.2: shown no worse than -20 points
    ([1] * 40, [0] + [1] * 39, [f"q{i}" for i in range(40)], 0.2, "pass", 1 / 2, "one discordant: P(S <= -1) = 1/2"),
]


@pytest.mark.parametrize("base, cand, groups, margin, verdict, p_worse, why", TABLE)
def test_table(base, cand, groups, margin, verdict, p_worse, why):
    g = paired_gate(base, cand, groups, margin=margin)
    assert g.verdict == verdict, why
    assert g.p_worse == pytest.approx(p_worse), why


@pytest.mark.parametrize("wins, losses, ties", [(0, 5, 10), (2, 7, 20), (4, 4, 3), (1, 9, 0), (6, 1, 12)])
def test_one_phrasing_worse_test_is_binomtest(wins, losses, ties):
    base = [0] * wins + [1] * losses + [1] * ties
    cand = [1] * wins + [0] * losses + [1] * ties
    g = paired_gate(base, cand, [f"q{i}" for i in range(len(base))])
    oracle = binomtest(losses, wins + losses, 0.5, alternative="greater").pvalue
    assert g.p_worse == pytest.approx(oracle, rel=1e-9)
    assert (g.verdict == "fail") == (oracle < 0.05)


def test_worse_test_is_half_the_two_sided_sign_flip_test():
    """Clustered (2 phrasings): the one-sided p in the direction observed is half ragdiag's two-sided one."""
    rng = np.random.default_rng(3)
    base = rng.random(40) < 0.7
    cand = base.copy()
    cand[:12] = rng.random(12) < 0.3
    groups = [f"q{i // 2}" for i in range(40)]
    g = paired_gate(base, cand, groups)
    d = np.bincount(np.arange(40) // 2, weights=cand.astype(float) - base.astype(float))
    assert d.sum() < 0
    assert g.p_worse == pytest.approx(sign_flip_test(d) / 2, rel=1e-9)


def _tango_z(wins, losses, n, delta):
    """Tango (1998) score statistic for p_win - p_loss = delta, closed form (the oracle for one phrasing)."""
    a = 2 * n
    b = -wins - losses + (2 * n - wins + losses) * delta
    c = -losses * delta * (1 - delta)
    p_loss = (-b + np.sqrt(b * b - 4 * a * c)) / (2 * a)
    return (wins - losses - n * delta) / np.sqrt(n * (2 * p_loss + delta - delta * delta))


@pytest.mark.parametrize("wins, losses, ties", [(1, 0, 29), (0, 1, 29), (3, 2, 27), (6, 1, 40), (2, 5, 13)])
@pytest.mark.parametrize("delta", [-0.05, -0.1, 0.02])
def test_score_test_is_tango_with_one_phrasing(wins, losses, ties, delta):
    d = [1] * wins + [-1] * losses + [0] * ties
    n = wins + losses + ties
    assert score_test(d, [1] * n, delta) == pytest.approx(_tango_z(wins, losses, n, delta), rel=1e-7)


def test_one_change_among_unchanged_queries_is_not_proof_of_non_inferiority():
    """1 of 30 out-of-domain queries newly bluffs, 29 unchanged: a new-bluff rate of 10% is still plausible."""
    g = paired_gate([0] * 30, [0] * 29 + [1], [f"o{i}" for i in range(30)], higher_is_better=False)
    assert g.verdict == "inconclusive"
    assert g.low < 0 < 0.05 < g.high  # the interval of the bluff-rate difference reaches past the margin
    z = _tango_z(0, 1, 30, -0.05)  # oriented: the candidate is "worse" by one
    assert g.p_noninferior == pytest.approx(1 - NormalDist().cdf(z), rel=1e-7)


def test_clustered_worse_test_matches_brute_force():
    base = [1, 1, 1, 0, 1, 1, 0, 1, 1, 1]
    cand = [1, 0, 1, 1, 0, 0, 0, 1, 1, 1]
    groups = ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e"]
    g = paired_gate(base, cand, groups)
    d, n = [-1, 1, -2, 0, 0], [2, 2, 2, 2, 2]
    assert g.p_worse == pytest.approx(_brute(d, n, 0.0)[1])  # P(S <= -2) over +/-1 +/-1 +/-2: 5/8... by enumeration
    # the interval's lower end is where the score test starts rejecting "no better than delta"
    upper = lambda x: 1 - NormalDist().cdf(score_test(d, n, x))  # noqa: E731
    assert upper(g.low - 1e-6) < 0.05 <= upper(g.low + 1e-6)


def test_verdict_and_interval_agree():
    rng = np.random.default_rng(7)
    for _ in range(30):
        base = rng.random(60) < 0.6
        cand = np.where(rng.random(60) < 0.2, rng.random(60) < 0.5, base)
        g = paired_gate(base, cand, [f"q{i // 2}" for i in range(60)], margin=0.1)
        if g.verdict == "fail":
            assert g.high <= 1e-9
        elif g.verdict == "pass" and g.changed:
            assert g.low >= -0.1 - 1e-9
        elif g.verdict == "inconclusive":
            assert g.low < -0.1 + 1e-9 and g.high > -1e-9
            assert g.needed is None or g.needed > 30
            if g.needed is not None:  # the scaled mix is decided, one question fewer (within 1%) is not
                assert g.needed_verdict in ("pass", "fail")


def test_bluffs_lower_is_better():
    """For bluffs, more bluffs is worse: 5 of 5 out-of-domain queries newly bluff -> fail, difference +1."""
    g = paired_gate([0] * 5, [1] * 5, list("abcde"), higher_is_better=False)
    assert g.verdict == "fail" and g.estimate == 1.0 and g.low <= 1.0 <= g.high + 1e-9


@pytest.mark.parametrize("kwargs, message", [
    ({"margin": 1.0}, "margin"), ({"margin": -0.1}, "margin"), ({"alpha": 0.5}, "alpha"), ({"alpha": 0}, "alpha"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        paired_gate([1], [0], ["a"], **kwargs)


def test_outcomes_must_be_paired_and_binary():
    with pytest.raises(ValueError, match="same queries"):
        paired_gate([1, 0], [1], ["a", "b"])
    with pytest.raises(ValueError, match="0/1"):
        paired_gate([0.5], [1], ["a"])


def test_questions_needed_is_the_smallest_decided_scaling():
    """3 losses in 32 questions (one phrasing): the exact test needs 5 losses (1/32 < 0.05),
    round(3 N / 32) >= 5 first at N = 48; the margin test never passes at -9.4 points."""
    base, cand = [1] * 32, [0] * 3 + [1] * 29
    g = paired_gate(base, cand, [f"q{i}" for i in range(32)])
    assert (g.verdict, g.needed, g.needed_verdict) == ("inconclusive", 48, "fail")


def test_large_sets_keep_the_exact_worse_test_and_agree_with_the_interval():
    """10,000 questions of 2 phrasings (past the joint grid): 163 better, 365 worse is shown worse."""
    rng = np.random.default_rng(1)
    base = rng.random(20000) < 0.6
    cand = base.copy()
    cand[:2000] = ~cand[:2000]
    g = paired_gate(base, cand, [f"q{i // 2}" for i in range(20000)])
    d = np.bincount(np.arange(20000) // 2, weights=cand.astype(float) - base.astype(float))
    assert g.p_worse == pytest.approx(sign_flip_test(d) / 2, abs=1e-12)
    assert g.verdict == "fail" and g.high < 0 and g.low < g.estimate < g.high


# --- the rule is monotone, and says what it risks --------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

from ragdiag.present.regression.stats import VERDICTS  # noqa: E402


@st.composite
def _runs(draw):
    g = draw(st.integers(1, 24))
    phrasings = draw(st.integers(1, 2))
    n = g * phrasings
    base = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    cand = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    groups = [f"q{i // phrasings}" for i in range(n)]
    return base, cand, groups


@settings(max_examples=80, deadline=None)
@given(runs=_runs(), data=st.data(), strict=st.booleans(), higher=st.booleans())
def test_a_better_candidate_never_gets_a_worse_verdict(runs, data, strict, higher):
    base, cand, groups = runs
    bad = 0 if higher else 1  # the outcome that is worse for the candidate
    worse_at = [i for i, c in enumerate(cand) if c == bad]
    if not worse_at:
        return
    i = data.draw(st.sampled_from(worse_at))
    better = list(cand)
    better[i] = 1 - bad
    before = paired_gate(base, cand, groups, higher_is_better=higher, strict=strict)
    after = paired_gate(base, better, groups, higher_is_better=higher, strict=strict)
    assert VERDICTS.index(after.verdict) >= VERDICTS.index(before.verdict), (before, after)


def test_identical_and_one_better_both_pass_and_say_what_they_risk():
    # the old shortcut passed an identical candidate and called one better on a single question inconclusive
    base = [1] * 20 + [0] * 12
    same = paired_gate(base, base, [f"q{i}" for i in range(32)])
    one_better = paired_gate(base, base[:20] + [1] + [0] * 11, [f"q{i}" for i in range(32)])
    assert same.verdict == one_better.verdict == "pass"
    # 0 of 32 worse: a per-question loss rate up to 1 - 0.025 ** (1 / 32) = 10.9% is not ruled out
    assert same.unseen == pytest.approx(1 - 0.025 ** (1 / 32))
    # a candidate 5 points worse through rare whole-question losses shows none 0.95 ** 32 = 19.4% of the time
    assert same.false_pass == pytest.approx(0.95 ** 32, abs=1e-9)
    strict = paired_gate(base, base, [f"q{i}" for i in range(32)], strict=True)
    assert strict.verdict == "inconclusive" and strict.false_pass <= 0.05


def test_the_gate_markdown_states_the_false_pass_rate_for_its_question_count():
    # an identical candidate on 32 questions of one phrasing passes; the Markdown says what that risks: a candidate
    # 5 points worse through rare whole-question losses shows none 0.95 ** 32 = 19.4% of the time, and the
    # "worse" test's note says it tests symmetry, not only the mean
    from ragdiag.core.gate import Gate
    from ragdiag.present.regression.checks import gate_report
    from ragdiag.present.regression.render import gate_markdown
    from handmade import hand_run

    qs = [(f"q{i}.a", f"q{i}", "answerable", f"text {i}", 1 if i < 20 else 9, 0.3, 0.3) for i in range(32)]
    run = hand_run(qs, questions=32, gate=Gate(4, 0.6, 4))
    md = gate_markdown(gate_report(run, run))
    assert f"false-pass rate at the 5-point margin for 32 questions: {0.95 ** 32:.0%}" in md
    assert "as likely up as down (symmetry" in md


@settings(max_examples=60, deadline=None)
@given(d=st.lists(st.integers(-2, 2), min_size=1, max_size=40), alpha=st.sampled_from([0.05, 0.025, 0.1]))
def test_the_score_bound_found_six_steps_a_call_is_the_one_found_step_by_step(d, alpha):
    # _bisect's levels only batch the evaluations: the same midpoints, in the same floating point, the same end
    from ragdiag.analyses.compare.score import score_curve
    from ragdiag.present.regression.stats import _bisect

    dd = np.asarray(d, dtype=np.float64)
    n = np.full(dd.size, 2.0)
    rejects = lambda xs: [1.0 - NormalDist().cdf(z) < alpha for z in score_curve(dd, n, xs).tolist()]  # noqa: E731
    one = _bisect(rejects, -1.0 + 1e-9, float(dd.sum() / n.sum()), rejected_at_lo=True)
    six = _bisect(rejects, -1.0 + 1e-9, float(dd.sum() / n.sum()), rejected_at_lo=True, levels=6)
    assert one == six
