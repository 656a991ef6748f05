"""``truth plan``: the questions a decision needs (exact power of compare's test) and where to write them."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from ragdiag.analyses.compare.paired import sign_flip_test
from ragdiag.analyses.compare.power import questions_to_resolve, sign_test_power
from ragdiag.authoring.plan import uncovered_sections, where_to_write
from ragdiag.authoring.sizing import alternative, questions_for_power, sign_flip_power, size_for


def _simulated_power(n: int, alt, draws: int, seed: int) -> float:
    """Draw ``n`` questions from ``alt`` ``draws`` times and run compare's own test (``sign_flip_test``) on each."""
    rng = np.random.default_rng(seed)
    pi = np.array(alt.pi + (0.0,) * (alt.phrasings - len(alt.pi)))
    rejected = 0
    for _ in range(draws):
        disc = rng.random(n) < alt.discordance
        mags = rng.choice(np.arange(1, alt.phrasings + 1), size=n, p=pi)
        signs = np.where(rng.random(n) < alt.theta, 1, -1)
        d = np.where(disc, mags * signs, 0)
        rejected += sign_flip_test(d) <= 0.05
    return rejected / draws


@pytest.mark.parametrize("n, psi, theta", [(20, 0.5, 0.8), (40, 0.3, 0.9), (7, 1.0, 1.0), (60, 0.15, 0.7)])
def test_one_magnitude_is_the_exact_sign_test(n, psi, theta):
    # |d| = 1 only: the sign-flip test is the sign test, whose exact power power.py sums another way (the oracle)
    alt = alternative(psi * (2 * theta - 1), psi, (1.0,))
    got, lost = sign_flip_power(n, alt)
    assert lost < 1e-9
    assert got == pytest.approx(sign_test_power(n, psi * theta, psi * (1 - theta)), abs=1e-9)


def test_most_favourable_case_agrees_with_questions_to_resolve():
    # every disagreement one way, one phrasing of two flipped: questions_to_resolve's lower bound (78, in its docstring)
    assert questions_for_power(alternative(0.05, 0.0, (1.0, 0.0))) == questions_to_resolve(0.05, 2) == 78


def test_planned_size_reaches_the_power_in_simulation_with_two_magnitudes():
    # 40% of questions disagree, a third of them in both phrasings (|d| = 2): the exact sum over (m1, m2)
    alt = alternative(0.1, 0.4, (2 / 3, 1 / 3), phrasings=2)
    n = questions_for_power(alt)
    exact, lost = sign_flip_power(n, alt)
    assert exact >= 0.8 and sign_flip_power(n - 1, alt)[0] < 0.8 and lost < 1e-9
    simulated = _simulated_power(n, alt, draws=1500, seed=7)
    # 1500 draws: standard error about 1 point at 80%
    assert abs(simulated - exact) < 0.035
    assert abs(simulated - 0.8) < 0.05


def test_size_for_reads_the_discordance_and_its_interval():
    d = [1] * 6 + [-1] * 2 + [2] * 2 + [0] * 30  # 10 of 40 disagree; magnitudes 1 (8) and 2 (2)
    s = size_for(d, 2, margin=0.1)
    seen = s.favourable_alternative  # the observed discordance: the favourable case, said second
    assert s.discordant == 10 and seen.discordance == 0.25
    assert seen.pi == (0.8, 0.2)
    # theta from delta = psi * E|d| * (2 theta - 1) / P: 0.1 = 0.25 * 1.2 * (2 theta - 1) / 2 -> theta = 5/6
    assert seen.theta == pytest.approx(5 / 6)
    # planned at the upper end of the interval, never under the favourable count
    assert s.alternative.discordance == s.discordance_interval[1] and s.planned >= s.favourable
    assert s.low <= s.planned <= s.high
    assert s.discordance_interval[0] < 0.25 < s.discordance_interval[1]


def test_alternative_refuses_impossible_inputs():
    with pytest.raises(ValueError, match="difference is a share"):
        alternative(0, 0.2)
    with pytest.raises(ValueError, match="pi must be"):
        alternative(0.05, 0.2, (0.5, 0.2))


def _brute_uncovered(corpus, truth):
    out = []
    for d in corpus.documents:
        for s in d.sections:
            text = d.text[s.start:s.end]
            if not any(q.doc_id == d.id and q.needle in text for q in truth.questions):
                out.append((d.id, s.title))
    return out


def test_uncovered_sections_match_a_brute_force_list(corpus, truth):
    got = uncovered_sections(corpus, truth)
    assert got == _brute_uncovered(corpus, truth)
    assert 0 < len(got) < sum(len(d.sections) for d in corpus.documents)


def test_where_adds_up_and_favours_large_uncovered_sections(corpus, truth):
    places = where_to_write(corpus, truth, 40)
    assert sum(p.count for p in places) == 40
    uncovered = set(uncovered_sections(corpus, truth))
    for p in places:
        assert (p.kind == "uncovered") == ((p.doc, p.section) in uncovered)
    # D'Hondt: the section with the most characters per question gets the first one
    sizes = {(d.id, s.title): s.end - s.start for d in corpus.documents for s in d.sections}
    now = Counter((q.doc_id, q.section) for q in truth.questions)
    best = max(sizes, key=lambda k: sizes[k] / (now.get(k, 0) + 1))
    assert any((p.doc, p.section) == best for p in places)


def test_where_puts_disagreements_first(corpus, truth):
    q = truth.questions[0]
    idx = next(i for i, s in enumerate(corpus.document(q.doc_id).sections) if s.start <= q.start < s.end)
    places = where_to_write(corpus, truth, 5, disagreements=Counter({(q.doc_id, idx): 2}), versus_words="A and B")
    assert places[0].kind == "disagree" and places[0].count == 2 and places[0].doc == q.doc_id
    assert sum(p.count for p in places) == 5


@pytest.mark.model
def test_plan_on_the_bundled_corpus(tmp_path, corpus, truth, capsys):
    """``truth plan E/hybrid --versus F/hybrid``: the count is the power of compare's test, checked by simulation."""
    from ragdiag.authoring.sizing import Alternative
    from ragdiag.cli.parser import main

    assert main(["truth", "plan", "E/hybrid", "--versus", "F/hybrid", "--json", "--cache", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["now"] == 32 and out["questions_needed"] == out["sizing"]["planned"] - 32
    m = out["sizing"]["model"]
    alt = Alternative(m["discordance"], tuple(m["magnitudes"]), m["p_plus"], m["difference"], m["phrasings"],
                      m["one_way"])
    planned = out["sizing"]["planned"]
    # the stated discordance, simulated with compare's own test at the planned size: 80% within 5 points
    assert abs(_simulated_power(planned, alt, draws=1500, seed=11) - 0.8) < 0.05
    assert sum(p["count"] for p in out["where"]) == out["questions_needed"]
    assert [(u["doc"], u["section"]) for u in out["uncovered"]] == _brute_uncovered(corpus, truth)


@pytest.mark.parametrize("argv, message", [
    (["E/hybrid"], "say which decision to plan for"),
    (["E/hybrid", "--versus", "E/hybrid"], "both name E/hybrid"),
    (["E/hybrid", "--versus", "F/hybrid", "--margin", "2"], "--margin is a difference in recall in (0, 1)"),
    (["E/hybrid", "--decide", "gate"], "pass --baseline CONFIG2"),
    (["E/hybrid", "--versus", "F/hybrid", "--strategies", "E,F"], "--strategies and --retrievers choose the family"),
    (["E/hybrid", "--versus", "F/hybrid", "--baseline", "F/hybrid"], "--baseline goes with --decide gate"),
    (["X/hybrid", "--versus", "F/hybrid"], "bad configuration 'X/hybrid'"),
])
def test_bad_arguments_are_one_line(argv, message, capsys):
    from ragdiag.cli.parser import main

    assert main(["truth", "plan", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err


@pytest.mark.parametrize("m, p", [(0, 0.3), (1, 0.5), (17, 0.25), (400, 0.1), (5, 0.0), (5, 1.0)])
def test_binomial_pmf_matches_scipy(m, p):
    from scipy.stats import binom

    from ragdiag.authoring.sizing import _pmf

    np.testing.assert_allclose(_pmf(m, p), binom.pmf(np.arange(m + 1), m, p), rtol=1e-9, atol=1e-300)


def test_the_plan_says_its_worst_case_first():
    """3 of 32 questions disagree (95% interval 3%-24%): planned at 24% (200 questions), the observed 9% second (78);
    the 78 would have 36% power at 24% (docs/ground-truth.md)."""
    s = size_for([1] * 3 + [0] * 29, 2, margin=0.05)
    assert (s.planned, s.favourable, s.high) == (200, 78, 200) and s.needed == 168
    assert s.alternative.discordance == pytest.approx(s.discordance_interval[1])
    weak = sign_flip_power(78, alternative(0.05, s.discordance_interval[1], (1.0, 0.0), phrasings=2))[0]
    assert round(weak, 2) == 0.36
