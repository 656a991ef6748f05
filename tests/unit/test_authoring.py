"""Ground-truth authoring: problems as records, leakage, power, coverage, suggestions, safe saving."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from ragdiag.authoring.checks import check_needle, check_truth, loader_problems, near_ood_matches
from ragdiag.authoring.coverage import coverage, format_coverage
from ragdiag.authoring.edit import add_ood, add_question, next_id
from ragdiag.authoring.leakage import LEAKAGE_WARN, leakage
from ragdiag.analyses.compare.power import resolvable_difference, resolution_sentence, sign_test_power
from ragdiag.authoring.save import ConflictError, backup_path, merge, open_truth, save_truth
from ragdiag.authoring.suggest import suggest, to_truth_data
from ragdiag.authoring.text import content_words, sentences
from ragdiag.index.chunking import STRATEGIES, chunk_document, destroyed_needles
from ragdiag.documents.corpus import Corpus, load_corpus, make_document
from ragdiag.core.stats import sign_test_counts
from ragdiag.documents.truth import NEEDLE_MAX, NEEDLE_MIN, parse_truth

ROOT = Path(__file__).resolve().parents[2]
BUNDLED_TRUTH = ROOT / "data" / "sklearn-user-guide.truth.json"

DOC = ("# Tea\n\nIntro line.\n\n## Brewing\n\n"
       "Green tea should be brewed with water at about 80 degrees Celsius. It takes two to three minutes.\n\n"
       "- Black tea tolerates boiling water and steeps for four to five minutes.\n\n"
       "```\nCode. Is not prose.\n```\n\n| a | b |\n")


@pytest.fixture(scope="module")
def small() -> Corpus:
    return Corpus("small", (make_document("tea", DOC),), name="small")


def test_sentences_index_the_canonical_text_and_skip_headings_code_tables(small):
    doc = small.document("tea")
    got = sentences(doc)
    assert [s.text for s in got] == [
        "Intro line.",
        "Green tea should be brewed with water at about 80 degrees Celsius.",
        "It takes two to three minutes.",
        "Black tea tolerates boiling water and steeps for four to five minutes.",  # list marker not included
    ]
    assert all(doc.text[s.start:s.end] == s.text for s in got)
    assert [s.section for s in got] == ["", "Brewing", "Brewing", "Brewing"]


def test_content_words():
    assert content_words("What is the default value of C in SVMs?") == {"default", "value", "svm"}
    assert content_words("Wie lange zieht grüner Tee?") == {"lange", "zieht", "grüner", "tee"}


def test_loader_problems_are_records_naming_entry_and_field(small):
    data = {"questions": [
        {"id": "q1", "needle": "Green tea", "queries": {"course": "a", "Bad": "b"}},
        {"needle": "Nowhere in the text at all, this sentence is not there.", "queries": {"course": "x"}},
        {"id": "q1", "needle": "Green tea should be brewed with water at about 80 degrees Celsius.",
         "queries": {"course": "", "ticket": "t"}},
    ], "ood": [{"id": "o1", "kind": "mid", "query": "x"}, {"id": "o2", "kind": "far", "query": " "}]}
    got = {(p.item, p.field) for p in loader_problems(data, small)}
    assert got == {("question q1", "needle"), ("question q1", "queries.Bad"), ("question #2", "id"),
                   ("question #2", "needle"),  # the loader skips a needle without an id; checked anyway
                   ("question q1", "id"), ("question q1", "queries.course"), ("ood o1", "kind"), ("ood o2", "query")}
    assert all(p.severity == "error" for p in loader_problems(data, small))


def test_ood_checked_even_without_questions(small):
    got = loader_problems({"questions": [], "ood": [{"id": "o1", "kind": "xx", "query": "q"}]}, small)
    assert ("file", "") in {(p.item, p.field) for p in got}
    assert ("ood o1", "kind") in {(p.item, p.field) for p in got}


def test_check_needle_agrees_with_chunking(small, tiny_corpus, tiny_truth):
    bad = check_needle("Green tea", small)
    assert not bad.ok and "9 characters" in bad.problems[0]
    assert "heading" in check_needle("## Brewing\n\nGreen tea should be brewed with water", small).problems[0]
    for q in tiny_truth.questions:
        chk = check_needle(q.needle, tiny_corpus)
        assert chk.ok and (chk.doc_id, chk.start, chk.end) == (q.doc_id, q.start, q.end)
        doc = tiny_corpus.document(q.doc_id)
        for cut in chk.chunking:
            d = destroyed_needles(chunk_document(doc, STRATEGIES[cut.strategy]), [(q.id, q.doc_id, q.start, q.end)])
            assert cut.whole == (not d)
            assert cut.cuts == (tuple(c - q.start for c in d[0].cuts) if d else ())


def test_leakage_hand_checked():
    lk = leakage("What is the default value of C?", "C is 1 by default.")
    assert (lk.share, lk.copied, lk.words) == (0.5, ("default",), ("default", "value"))
    assert leakage("?", "anything").share == 0.0
    copied = leakage("Green tea brewed water degrees Celsius", "Green tea should be brewed with water at 80 degrees Celsius.")
    assert copied.share == 1.0 and copied.warn


def test_leakage_calibration_claims_of_the_docstring():
    data = json.loads(BUNDLED_TRUTH.read_text())
    course = sorted(leakage(q["queries"]["course"], q["needle"]).share for q in data["questions"])
    ticket = [leakage(q["queries"]["ticket"], q["needle"]).share for q in data["questions"]]
    assert round((course[15] + course[16]) / 2, 2) == 0.57
    assert sum(s >= LEAKAGE_WARN for s in course) == 4
    assert round(max(ticket), 2) == 0.23


def test_check_truth_on_bundled(corpus):
    data = json.loads(BUNDLED_TRUTH.read_text())
    problems = check_truth(data, corpus)
    assert {p.severity for p in problems} == {"warning"}
    assert sorted(p.item for p in problems) == ["question q01", "question q14", "question q29", "question q30"]
    # none of its near ood queries is (nearly) held by one sentence ...
    assert not [p for p in problems if p.item.startswith("ood")]
    # ... but a near query built from a corpus sentence is flagged
    data["ood"].append({"id": "oX", "kind": "near", "query": "Does the KD tree partition the parameter space along the data axes?"})
    flagged = [p for p in check_truth(data, corpus) if p.item == "ood oX"]
    assert flagged and flagged[0].field == "query" and "neighbors" in flagged[0].message


def test_near_ood_matches_best_first(corpus):
    m = near_ood_matches("binary tree structure recursively partitions parameter space", corpus, top=3)
    assert m[0].share == 1.0 and m[0].sentence.doc_id == "neighbors"
    assert [x.share for x in m] == sorted((x.share for x in m), reverse=True)


# ----- power ----------------------------------------------------------------------


def _power_brute(n, p_win, p_loss, alpha=0.05):
    """Oracle: enumerate every (wins, losses) with its multinomial probability."""
    tot = 0.0
    for w in range(n + 1):
        for l_ in range(n + 1 - w):
            t = n - w - l_
            prob = math.factorial(n) / (math.factorial(w) * math.factorial(l_) * math.factorial(t)) \
                * p_win**w * p_loss**l_ * (1 - p_win - p_loss)**t
            if sign_test_counts(w, l_).p <= alpha:
                tot += prob
    return tot


@settings(max_examples=40, deadline=None)
@given(n=hst.integers(0, 18), a=hst.floats(0, 1), b=hst.floats(0, 1))
def test_power_equals_enumeration(n, a, b):
    p_win, p_loss = a * (1 - 0) * 0.6, b * 0.4
    assert sign_test_power(n, p_win, p_loss) == pytest.approx(_power_brute(n, p_win, p_loss), abs=1e-9)


def test_resolvable_with_phrasings_and_a_family_matches_the_exact_test():
    from ragdiag.analyses.compare.power import resolvable
    from ragdiag.analyses.compare import sign_flip_test

    r = resolvable(32, 2, family_size=276, critical=3.3)
    assert (r.alone, r.family) == (0.12, 0.2025)
    assert r.as_json() == {"alone": 0.12, "family": {"size": 276, "points": 0.2025, "critical": 3.3},
                           "questions": 32, "phrasings": 2, "k": 4}
    # the best case with 2 phrasings: one phrasing flipped per discordant question, all one way; 6 such questions
    # (a difference of 6/64 = 9.4 points) already reach p = 2/64 < 0.05, the sign test on 6 of 6
    assert sign_flip_test([1] * 6 + [0] * 26) == 2 / 64
    # 80% power needs P(Bin(32, 2 * delta) >= 6) >= 0.8: delta = 0.12 does, 0.115 does not
    assert sign_test_power(32, 0.24, 0.0) >= 0.8 > sign_test_power(32, 0.23, 0.0)
    # within a family whose studentized max-T critical value is 3.3: m one-way questions give |S| / sqrt(Q) =
    # sqrt(m) > 3.3 from m = 11 on; P(Bin(32, 2 * delta) >= 11) >= 0.8 first at 2 * delta = 0.405
    from scipy.stats import binom
    assert binom.sf(10, 32, 0.405) >= 0.8 > binom.sf(10, 32, 0.40)
    assert "under about 12 points cannot be told apart alone" in r.words() and "family of 276" in r.words()
    assert "critical value 3.30" in r.words()


def test_questions_to_resolve_is_resolvable_read_the_other_way():
    from ragdiag.analyses.compare.power import questions_to_resolve, resolvable

    for alpha in (0.05, 0.05 / 276):
        for n in (8, 20, 32, 64):
            r = resolvable(n, 2, family_size=1, alpha=alpha)
            if r.alone is None:
                continue
            # n questions resolve r.alone: they are enough for it, and not for half a point less
            need = questions_to_resolve(r.alone, 2, alpha=alpha)
            assert need <= n and questions_to_resolve(r.alone - 0.0025, 2, alpha=alpha) > need - 1
            assert resolvable(need, 2, family_size=1, alpha=alpha).alone <= r.alone
    assert questions_to_resolve(0.05, 1) > questions_to_resolve(0.05, 2)  # a second phrasing flips more
    with pytest.raises(ValueError, match="share of recall"):
        questions_to_resolve(5, 2)  # points, not a share


def test_resolvable_difference():
    assert resolvable_difference(5) is None  # five wins of five: p = 0.0625 > 0.05
    assert resolvable_difference(32) == 24.0
    d = resolvable_difference(32) / 100
    assert sign_test_power(32, d, 0) >= 0.8 > sign_test_power(32, d - 0.005, 0)
    assert resolvable_difference(64) < resolvable_difference(32)
    assert resolvable_difference(64, discordance=0.3) > resolvable_difference(64)
    assert "smaller than about 24 points" in resolution_sentence(32, 4)


# ----- coverage ------------------------------------------------------------------------


def test_coverage_counts(tiny_corpus):
    from tiny import TINY_TRUTH

    data = json.loads(json.dumps(TINY_TRUTH))
    data["questions"][0]["queries"].pop("ticket")
    cov = coverage(data, tiny_corpus)
    assert cov.n_questions == len(data["questions"]) == sum(r.questions for r in cov.sections)
    assert cov.missing == ((data["questions"][0]["id"], "ticket"),)
    assert (cov.near, cov.far) == (1, 1)
    assert "phrasings missing (1)" in format_coverage(cov)


# ----- suggestions on three corpora ------------------------------------------------------

GERMAN = {
    "tee": ("# Teezubereitung\n\nTee ist ein Aufgussgetränk aus den Blättern der Teepflanze.\n\n## Grüner Tee\n\n"
            "Grüner Tee wird mit Wasser von etwa 80 Grad Celsius aufgegossen und zieht zwei bis drei Minuten. "
            "Kochendes Wasser verbrennt die Blätter und macht den Aufguss bitter. "
            "Die Standardmenge beträgt zwölf Gramm Blätter pro Liter Wasser für einen milden Aufguss.\n\n"
            "## Schwarzer Tee\n\n"
            "Schwarzer Tee verträgt sprudelnd kochendes Wasser und zieht vier bis fünf Minuten. "
            "Ein Schuss Milch mildert die Gerbstoffe, verändert aber das Aroma deutlich.\n\n"
            "## Lagerung\n\n"
            "Tee gehört in eine lichtdichte, luftdichte Dose fern von Gewürzen, weil die Blätter Gerüche annehmen. "
            "Die meisten grünen Tees verlieren ihr frisches Aroma innerhalb eines Jahres nach der Ernte.\n"),
    "fahrrad": ("# Fahrradpflege\n\n## Kette\n\n"
                "Die Kette verschleißt schneller als jedes andere Teil und längt sich mit der Zeit. "
                "Kettenöl wird auf die inneren Glieder aufgetragen und der Überschuss nach einer Minute abgewischt. "
                "Standardmäßig empfiehlt der Hersteller eine Kontrolle der Kettenlängung alle tausend Kilometer.\n\n"
                "## Reifen\n\n"
                "Rennradreifen fahren mit sechs bis acht Bar; prüfe den Druck wöchentlich, denn Luft entweicht "
                "langsam durch den Schlauch. Ein Ventiladapter ermöglicht das Aufpumpen an jeder Tankstelle.\n"),
}


@pytest.fixture(scope="module")
def german(tmp_path_factory) -> Corpus:
    root = tmp_path_factory.mktemp("de") / "wissen"
    root.mkdir()
    for name, text in GERMAN.items():
        (root / f"{name}.md").write_text(text, encoding="utf-8")
    return load_corpus(root)


def _assert_valid(sugg, corpus):
    assert sugg.questions
    for c in sugg.questions:
        chk = check_needle(c.needle, corpus)
        assert chk.ok, (c.needle, chk.problems)
        assert NEEDLE_MIN <= len(c.needle) <= NEEDLE_MAX
        assert c.why and c.draft
    # once phrasings are filled in (here: the draft and a stand-in ticket), the file loads as a ground truth
    data = to_truth_data(sugg)
    assert data["questions"][0]["queries"] == {"course": "", "ticket": ""}  # nothing pretends to be written
    for q in data["questions"]:
        q["queries"] = {"course": q["draft"]["course"], "ticket": f"ticket for {q['id']}"}
    truth = parse_truth(json.loads(json.dumps(data)), corpus)
    assert len(truth.questions) == len(sugg.questions) and len(truth.ood) == len(sugg.ood)
    assert [p for p in check_truth(data, corpus) if p.severity == "error"] == []


def test_suggest_bundled(corpus):
    sugg = suggest(corpus, 40)
    _assert_valid(sugg, corpus)
    assert len(sugg.questions) == 40
    by_doc = {d.id: sum(c.doc_id == d.id for c in sugg.questions) for d in corpus.documents}
    # in proportion to size: 40 x (chars of the doc / chars of all), rounded by largest remainders
    share = {d.id: 40 * len(d.text) / corpus.n_chars for d in corpus.documents}
    assert all(math.floor(share[d]) <= by_doc[d] <= math.ceil(share[d]) for d in by_doc), (by_doc, share)
    assert min(by_doc.values()) >= 1
    assert len({(c.doc_id, c.section) for c in sugg.questions}) >= 30
    assert sugg.ood and all(o.kind == "near" for o in sugg.ood)
    assert not [m for o in sugg.ood for m in near_ood_matches(o.query, corpus, top=1) if m.warn]


def test_suggest_fixture_kb(kb_corpus):
    _assert_valid(suggest(kb_corpus, 15), kb_corpus)


def test_suggest_german(german):
    sugg = suggest(german, 5, n_ood=2)
    _assert_valid(sugg, german)
    assert {c.doc_id for c in sugg.questions} == {"tee", "fahrrad"}
    assert any("default" in " ".join(c.why) for c in sugg.questions)  # "Standardmäßig ..." / "Standardmenge"


def test_suggest_rejects_zero(corpus):
    with pytest.raises(ValueError, match="at least one"):
        suggest(corpus, 0)


# ----- saving -------------------------------------------------------------------------------------

def _truth_file(tmp_path: Path, suffix=".json") -> Path:
    data = {"corpus": "kept", "questions": [{"id": "q01", "needle": "n", "queries": {"course": "c"}, "note": "x"}],
            "ood": [], "custom": {"nested": [1, 2]}}
    path = tmp_path / f"kb.truth{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        import yaml

        path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_save_round_trip_keeps_unknown_fields_and_previous_version(tmp_path, suffix):
    path = _truth_file(tmp_path, suffix)
    before = path.read_bytes()
    opened = open_truth(path)
    new = add_ood(opened.data, "o01", "far", "q")
    saved = save_truth(path, new, expected_sha256=opened.sha256)
    again = open_truth(path)
    assert again.data == new and again.data["custom"] == {"nested": [1, 2]} and again.data["questions"][0]["note"] == "x"
    assert again.sha256 == saved.sha256 and again.fmt == suffix.strip(".")
    assert backup_path(path).read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_save_refuses_a_file_changed_since_opened(tmp_path):
    path = _truth_file(tmp_path)
    opened = open_truth(path)
    path.write_text(path.read_text().replace("kept", "changed by someone"), encoding="utf-8")
    with pytest.raises(ConflictError, match="changed on disk"):
        save_truth(path, opened.data, expected_sha256=opened.sha256)
    assert "changed by someone" in path.read_text()
    new = tmp_path / "new.truth.json"
    with pytest.raises(ConflictError, match="created"):
        new.write_text("{}")
        save_truth(new, {"questions": []}, expected_sha256=None)


def test_crash_between_write_and_rename_keeps_the_old_file(tmp_path, monkeypatch):
    path = _truth_file(tmp_path)
    before = path.read_bytes()
    opened = open_truth(path)

    def crash(*args):
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        save_truth(path, add_ood(opened.data, "o01", "far", "q"), expected_sha256=opened.sha256)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


CRASH = """
import os, sys
sys.path.insert(0, sys.argv[2])
from ragdiag.authoring.save import open_truth, save_truth
from ragdiag.authoring.edit import add_ood
o = open_truth(sys.argv[1])
real = os.replace
def die(src, dst):
    if str(dst) == sys.argv[1]:
        os._exit(9)  # the process dies after the new text is on disk, before the rename
    real(src, dst)
os.replace = die
save_truth(sys.argv[1], add_ood(o.data, "o99", "far", "lost"), expected_sha256=o.sha256)
"""


def test_process_killed_before_rename_loses_no_entry(tmp_path):
    path = _truth_file(tmp_path)
    before = open_truth(path)
    r = subprocess.run([sys.executable, "-c", CRASH, str(path), str(ROOT)], capture_output=True, text=True)
    assert r.returncode == 9, r.stderr
    after = open_truth(path)
    assert after.data == before.data and after.sha256 == before.sha256
    # the next save works and keeps everything
    save_truth(path, add_ood(after.data, "o01", "far", "q"), expected_sha256=after.sha256)
    assert [q["id"] for q in open_truth(path).data["questions"]] == ["q01"]


WRITER = Path(__file__).parents[1] / "helpers" / "_truth_writer.py"


def test_concurrent_writers_lose_no_entries(tmp_path):
    path = _truth_file(tmp_path)
    procs = [subprocess.Popen([sys.executable, str(WRITER), str(path), f"w{k}", "10"], stdout=subprocess.PIPE,
                              text=True) for k in range(4)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, outs
    data = open_truth(path).data
    assert sorted(o["id"] for o in data["ood"]) == sorted(f"w{k}-{i}" for k in range(4) for i in range(10))
    assert data["custom"] == {"nested": [1, 2]} and data["questions"][0]["note"] == "x"
    print("refused saves (then merged):", [o.split()[-1] for o in outs])


def test_merge_three_way():
    base = {"questions": [{"id": "q1", "needle": "a"}, {"id": "q2", "needle": "b"}], "ood": [], "x": 1}
    mine = {"questions": [{"id": "q1", "needle": "A"}, {"id": "q3", "needle": "c"}], "ood": [], "x": 1}
    theirs = {"questions": [{"id": "q1", "needle": "a"}, {"id": "q2", "needle": "b"}, {"id": "q4", "needle": "d"}],
              "ood": [{"id": "o1"}], "x": 2, "y": 3}
    merged, conflicts = merge(base, mine, theirs)
    assert merged == {"questions": [{"id": "q1", "needle": "A"}, {"id": "q4", "needle": "d"},
                                    {"id": "q3", "needle": "c"}], "ood": [{"id": "o1"}], "x": 2, "y": 3}
    assert conflicts == []
    theirs["questions"][0]["needle"] = "Z"
    merged, conflicts = merge(base, mine, theirs)
    assert conflicts == ["q1"] and merged["questions"][0]["needle"] == "A"


def test_edits():
    data = {"questions": [{"id": "q09"}], "ood": [{"id": "o01"}], "other": True}
    assert next_id(data, "q") == "q10" and next_id(data, "o") == "o02" and next_id({}, "q") == "q01"
    new = add_question(data, "q10", "needle", {"course": "c"})
    assert new["other"] is True and data["questions"] == [{"id": "q09"}]
    with pytest.raises(ValueError, match="taken"):
        add_question(new, "o01", "n", {})


# ----- command line ---------------------------------------------------------------------------------

def _cli(capsys, *args):
    from ragdiag.cli.parser import main

    capsys.readouterr()
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_check_stats_suggest(tmp_path, capsys):
    rc, out, err = _cli(capsys, "truth", "check", str(BUNDLED_TRUTH))
    assert rc == 1 and out.count("warning: question") == 4 and "0 error(s), 4 warning(s)" in err
    assert _cli(capsys, "truth", "check", str(BUNDLED_TRUTH), "--errors-only")[0] == 0
    bad = json.loads(BUNDLED_TRUTH.read_text())
    bad["questions"][2]["needle"] = "too short"
    bad["questions"][5]["queries"]["ticket"] = ""
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    rc, out, _ = _cli(capsys, "truth", "check", str(f), "--corpus", str(ROOT / "data" / "sklearn-user-guide"),
                      "--errors-only")
    assert rc == 1
    assert "error: question q03, needle: needle is 9 characters" in out
    assert "error: question q06, queries.ticket: query 'ticket' is empty" in out
    rc, out, _ = _cli(capsys, "truth", "stats", str(BUNDLED_TRUTH))
    assert rc == 0 and "under about 12 points cannot be told apart alone" in out and "phrasings missing: none" in out
    rc, out, _ = _cli(capsys, "truth", "stats", str(BUNDLED_TRUTH), "--json", "--family-size", "276")
    assert rc == 0 and json.loads(out)["resolvable"]["alone"] == 0.12
    from ragdiag.analyses.compare.power import resolvable

    want = resolvable(32, 2, family_size=276)  # the family's critical value simulated for 24 configurations
    assert json.loads(out)["resolvable"]["family"] == {"size": 276, "points": want.family, "critical": want.critical}
    cand = tmp_path / "cand.json"
    rc, out, _ = _cli(capsys, "truth", "suggest", "-n", "6", "--out", str(cand))
    assert rc == 0 and "6 candidate needles" in out
    assert len(json.loads(cand.read_text())["questions"]) == 6
    assert _cli(capsys, "truth", "suggest", "-n", "6", "--out", str(cand))[0] == 2  # no silent overwrite
    assert _cli(capsys, "truth", "check", str(tmp_path / "missing.json"))[0] == 2
    (tmp_path / "broken.json").write_text('{"questions": [')
    rc, out, _ = _cli(capsys, "truth", "check", str(tmp_path / "broken.json"))
    assert rc == 1 and out.startswith("error: file: broken.json is not valid JSON")


_ids = hst.sets(hst.sampled_from([f"x{i}" for i in range(12)]), max_size=6)


@settings(max_examples=60, deadline=None)
@given(base=_ids, mine_add=_ids, theirs_add=_ids, mine_del=_ids, theirs_del=_ids)
def test_merge_keeps_every_addition_and_deletion(base, mine_add, theirs_add, mine_del, theirs_del):
    def entries(ids):
        return [{"id": i, "kind": "far", "query": i} for i in sorted(ids)]

    mine_add, theirs_add = mine_add - base, theirs_add - base - mine_add
    mine = {"questions": [], "ood": entries((base - mine_del) | mine_add)}
    theirs = {"questions": [], "ood": entries((base - theirs_del) | theirs_add)}
    merged, conflicts = merge({"questions": [], "ood": entries(base)}, mine, theirs)
    assert conflicts == []
    assert {o["id"] for o in merged["ood"]} == (base - mine_del - theirs_del) | mine_add | theirs_add


@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.sampled_from(["# T", "## Sec", "", "Some words here.", "Another one! Yes.", "- item e.g. this",
                                    "```", "code. Here.", "> quoted. Text.", "| a | b |", "x\u00e9 \u00dcber alles."]),
                 min_size=1, max_size=25))
def test_sentences_index_the_text_and_avoid_headings_and_code(lines):
    text = "\n".join(lines) + "\n"
    if not text.strip():
        return
    doc = make_document("d", text)
    heads = doc.heading_spans()
    for s in sentences(doc):
        assert doc.text[s.start:s.end] == s.text and s.text == s.text.strip() and s.text
        assert not any(s.start < he and hs < s.end for hs, he in heads)
        assert s.section == doc.section_at(s.start).title
