"""The ruler check (ragdiag.authoring.ruler, ``ragdiag ruler``): headroom, shortcuts, leakage, discrimination."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragdiag.analyses.compare.power import resolvable
from ragdiag.authoring.leakage import leakage
from ragdiag.authoring.ruler import _document_names, discrimination, headroom, ruler

ROOT = Path(__file__).resolve().parents[2]
BUNDLED_TRUTH = ROOT / "data" / "sklearn-user-guide.truth.json"


@pytest.mark.parametrize("values, groups, resolvable_share, side, ceiling, floor, room", [
    # question a: both phrasings found by both configs (ceiling); b: they differ on one phrasing of two
    ([[1, 1, 1, 0], [1, 1, 0, 0]], ["a", "a", "b", "b"], 0.3, "ceiling", 1, 0, 0.25),  # best 0.75: 25 < 30 points
    ([[1, 1, 1, 0], [1, 1, 0, 0]], ["a", "a", "b", "b"], 0.2, None, 1, 0, 0.25),  # 25 points of room >= 20
    # the best finds 1 of 4 queries: 25 points from the floor, under the 30 resolved
    ([[1, 0, 0, 0], [0, 0, 0, 0]], ["a", "a", "b", "b"], 0.3, "floor", 0, 1, 0.25),
    # half the queries are found by every config, and they agree on all but one of 8: room 12.5 < 20
    ([[1, 1, 1, 1, 0, 0, 1, 0], [1, 1, 1, 1, 0, 0, 0, 0]], list("aabbccdd"), 0.2, "agree", 2, 1, 0.125),
])
def test_headroom_table(values, groups, resolvable_share, side, ceiling, floor, room):
    h = headroom(values, groups, k=20, resolvable=resolvable_share)
    assert (h.side, h.ceiling, h.floor, h.room) == (side, ceiling, floor, room)
    assert h.saturated == (side is not None)
    assert h.sentence().startswith("R@20 is saturated" if side else "R@20 has room")


def test_discrimination_of_one_pair_is_the_sign_test():
    # 7 of 8 questions go one way: the exact sign-flip p is 2/256 < 0.05, so the pair is separated;
    # alone, 8 questions need 6 one-way disagreements (p = 2/64), and P(Bin(8, delta) >= 6) first
    # reaches 0.8 at delta = 0.805 on the 0.5-point grid (scipy: 0.8078; at 0.80, 0.7969)
    from scipy.stats import binom

    d = discrimination([[1] * 7 + [0], [0] * 8], list("abcdefgh"))
    assert (d.pairs, d.separated, d.critical) == (1, 1, None)
    assert d.resolvable == d.alone == 0.805
    assert binom.sf(5, 8, 0.805) >= 0.8 > binom.sf(5, 8, 0.8)


def test_discrimination_of_a_family_reads_its_critical_value():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 2, size=(4, 40))
    groups = [f"q{i // 2}" for i in range(40)]
    d = discrimination(values, groups)
    assert d.pairs == 6 and d.questions == 20 and d.phrasings == 2
    assert d.critical is not None and 2.0 < d.critical < 3.5
    assert d.family == resolvable(20, 2, family_size=6, critical=d.critical).family


@pytest.mark.parametrize("doc_id, names", [
    ("svm", []),  # a plain word: the topic
    ("feature_selection", ["feature_selection"]),
    ("notes/2024-budget.md", ["2024-budget.md", "2024-budget"]),
    ("svm.md", ["svm.md"]),
])
def test_document_names(doc_id, names):
    assert _document_names(doc_id) == names


def _evaluate(corpus, truth):
    from fakes import FakeEncoder

    from ragdiag.evaluation.evaluate import evaluate

    # FAKE bag-of-words encoder: the dense configuration is plumbing here; BM25 is the real one
    return evaluate(corpus, truth, encoder=FakeEncoder(dim=1024), strategies="E", retrievers="dense,bm25")


@pytest.fixture(scope="module")
def easy_and_bundled(corpus):
    """The bundled questions as written, and the same questions with every phrasing a copy of its needle."""
    from ragdiag.documents.truth import parse_truth

    data = json.loads(BUNDLED_TRUTH.read_text(encoding="utf-8"))
    easy = json.loads(json.dumps(data))
    for q in easy["questions"]:
        q["queries"] = {p: q["needle"] for p in q["queries"]}
    bundled = parse_truth(data, corpus, source="bundled")
    copied = parse_truth(easy, corpus, source="easy")
    return _evaluate(corpus, copied), _evaluate(corpus, bundled)


def test_an_easy_set_is_flagged_and_the_bundled_set_is_not(easy_and_bundled):
    easy_ev, bundled_ev = easy_and_bundled
    easy, bundled = ruler(easy_ev), ruler(bundled_ev)
    assert easy.verdict == "too easy"
    assert len(easy.shortcuts.copies) == easy.shortcuts.queries == 64  # every query is its needle
    assert easy.shortcuts.quantiles()["min"] == 1.0
    assert "too easy" in " ".join(easy.problems())
    assert bundled.verdict != "too easy"
    # the copies flagged are exactly the queries leakage() warns about (the authoring check, read directly)
    expected = [q.id for q in bundled_ev.queries if q.in_domain
                and leakage(q.text, bundled_ev.truth.question(q.question_id).needle).warn]
    assert [q for q, _, _ in bundled.shortcuts.copies] == expected
    # BM25 alone at rank 1, counted from the evaluation's ranks
    ranks = bundled_ev.result("E/bm25").needle_rank[bundled_ev.in_domain]
    assert bundled.shortcuts.bm25_first == int((ranks == 1).sum())
    assert bundled.shortcuts.bm25 == "E/bm25"
    assert easy.shortcuts.bm25_share > bundled.shortcuts.bm25_share


@pytest.mark.model
def test_ruler_json_on_the_bundled_corpus(tmp_path):
    """``ruler --json`` with the real model: the saturated ks, BM25 alone, the flagged questions, the resolvable difference."""
    env = {**os.environ, "RAGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "ragdiag", "ruler", "E/dense", "E/bm25", "E/hybrid",
                          "E/rerank-maxsim", "F/hybrid", "--json"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["verdict"] in ("can tell", "cannot rank")
    assert doc["configs"] == ["E/dense", "E/bm25", "E/hybrid", "E/rerank-maxsim", "F/hybrid"]
    rows = {h["measure"]: h for h in doc["headroom"]}
    assert set(rows) == {"R@1", "R@4", "R@8", "R@20"}
    assert doc["saturated"] == [m for m, h in rows.items() if h["saturated"]]
    for h in rows.values():  # saturated exactly when the resolvable difference exceeds the room it has
        room = min(1 - h["high"], h["high"], h["room"])
        assert h["saturated"] == (room < h["resolvable"])
    assert "R@20" in doc["saturated"] and "R@1" not in doc["saturated"]
    assert rows["R@20"]["sentence"].startswith("R@20 is saturated")
    s = doc["shortcuts"]
    assert s["bm25"] == "E/bm25" and s["queries"] == 64 and 0 < s["bm25_share"] < 0.8
    assert set(c["query"] for c in s["copies"]) <= set(doc["flagged"])
    assert "q14:course" in doc["flagged"]  # copies 6 of its 7 content words from its needle (see leakage.py)
    d = doc["discrimination"]
    assert d["pairs"] == 10 and d["questions"] == 32 and d["phrasings"] == 2
    assert d["resolvable_points"] == pytest.approx(
        100 * resolvable(32, 2, family_size=10, critical=d["critical"]).family)
    assert 0 <= d["separated"] <= 10


@pytest.mark.slow
def test_discrimination_agrees_with_a_simulation_of_the_family_test():
    """At the ruler's resolvable difference, the family's max-T separates a one-way pair 80% of the time (within 10%).

    Six configurations on 32 questions in 2 phrasings, independent hits at 0.5; configurations 0 and 1 are
    alike except that on a share 2 * delta of the questions 0 finds one phrasing and 1 does not (the most
    favourable case the figure is for). Seeded: 150 families, each tested with the all-pairs studentized max-T.
    """
    from ragdiag.analyses.compare.simultaneous import max_t

    M, n, P = 6, 32, 2
    groups = [f"q{i // P}" for i in range(n * P)]
    pairs = list(itertools.combinations(range(M), 2))

    def family(rng, delta):
        v = rng.integers(0, 2, size=(M, n * P))
        v[1] = v[0]
        for q in np.flatnonzero(rng.random(n) < P * delta):
            v[0, q * P], v[1, q * P] = 1, 0
        return v

    figure = discrimination(family(np.random.default_rng(1), 0.0), groups)
    assert figure.pairs == 15 and figure.resolvable is not None
    rng = np.random.default_rng(7)
    reps = 150  # seeded; 0.747 found at the figure (0.76 with 200 families of 1000 shuffles)
    found = sum(max_t(family(rng, figure.resolvable), groups, pairs, draws=500,
                      seed=int(rng.integers(1 << 30)))[0][0].excludes_zero for _ in range(reps))
    assert abs(found / reps - 0.8) <= 0.08, found / reps


def test_at_size_without_the_pool_curve_is_one_line(capsys):
    from ragdiag.cli.parser import main

    assert main(["ruler", "--at-size", "5000"]) == 2
    err = capsys.readouterr().err
    assert err == "error: --at-size goes with --pool-curve\n"


@pytest.mark.slow
def test_ruler_pool_curve_json_plumbing(monkeypatch, capsys, tmp_path):
    """``ruler CONFIG... --pool-curve --at-size N --json`` on the bundled corpus with the FAKE encoder (plumbing:
    its numbers are not MiniLM's): one document with the ruler and the curve, the extrapolation or its refusal."""
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    assert main(["ruler", "E/dense", "E/bm25", "--pool-curve", "--at-size", "5000", "--no-cache", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    curve = doc["pool_curve"]
    assert doc["configs"] == ["E/dense", "E/bm25"] and curve["config"] == "E/dense"
    assert [p["fraction"] for p in curve["points"]] == [0.1, 0.25, 0.5, 1.0] * 2
    assert {f["measure"] for f in curve["fits"]} == {"R@4", "answered"}
    for f in curve["fits"]:
        assert f["at_size"] == 5000
        assert (f["refused"] is None) == (f["estimate"] is not None)
    assert main(["ruler", "E/dense", "--pool-curve", "--at-size", str(101 * curve["corpus_size"]),
                 "--no-cache", "--json"]) == 0
    far = json.loads(capsys.readouterr().out)["pool_curve"]["fits"]
    assert all(f["estimate"] is None and "more than 100 times the corpus" in f["refused"] for f in far)
