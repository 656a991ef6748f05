"""``threshold --by``: each slice at the proposed cut, its own conformal cut, and one verdict for all slices."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from ragdiag.analyses.gate_table import GateTable
from ragdiag.analyses.threshold.choice import Goal, conformal_cut, cut_choice
from ragdiag.analyses.threshold.export import thresholds_yaml
from ragdiag.analyses.slice_cuts import OOD_RULE, choose_by, cut_slices, query_labels

from offtopic import ENGLISH_OOD
from no_work import no_work  # noqa: F401 - the fixture

DATA = Path(__file__).resolve().parents[2] / "data"
MODEL = {"model": "sentence-transformers/all-MiniLM-L6-v2", "weights_sha256": "7e54b3bc" + "0" * 56}


def _two_languages(en_holder: float = 0.85) -> tuple[GateTable, list]:
    """Six ``de`` questions answered at 0.4, six ``en`` ones at ``en_holder``; off-topic: three ``de`` at 0.6,
    seven ``en`` at 0.95 (one query per question)."""
    inside = np.r_[np.full(6, 0.4), np.full(6, en_holder)]
    ood = np.r_[np.full(3, 0.6), np.full(7, 0.95)]
    t = GateTable(tuple(f"q{i}" for i in range(12)) + tuple(f"o{i}" for i in range(10)),
                  np.r_[np.ones(12, bool), np.zeros(10, bool)], closest=np.r_[inside, ood],
                  closest_holder=np.r_[inside, np.full(10, np.inf)], window=4)
    return t, [("de",)] * 6 + [("en",)] * 6 + [("de",)] * 3 + [("en",)] * 7


def test_each_slice_at_the_global_cut_and_at_its_own():
    t, labels = _two_languages()
    s = cut_slices(t, labels, by="language", goal=Goal(max_bluff=0.2))
    # global: 10 off-topic, j = floor(0.2 * 11) = 2 -> the 2nd smallest, 0.6 (rounded down: 0.6)
    assert s.cut == 0.6 and s.method == "conformal"
    en, de = s.rows  # sorted by answered at the global cut
    assert (en.label, en.answerable, en.out_of_domain, en.answered.count, en.bluffs.count) == ("en", 6, 7, 0, 0)
    assert (de.label, de.answerable, de.out_of_domain, de.answered.count, de.bluffs.count) == ("de", 6, 3, 6, 0)
    # en's own: 7 off-topic, j = floor(0.2 * 8) = 1 -> its smallest, 0.95; every en question answered under it
    assert en.own_cut == 0.95 and "1/8" in en.guarantee and en.answered_at_own_cut.count == 6
    # de's own: 3 off-topic, j = floor(0.2 * 4) = 0: no guarantee, the sentence instead of a number
    assert de.own_cut is None and "it takes at least 4" in de.guarantee and de.answered_at_own_cut is None
    assert en.rest_answered.count == 6 and de.rest_answered.count == 0
    assert not s.verdict.one_cut_serves_all and s.verdict.needs_own_cut == ("en", "de")
    assert s.verdict.sentence.startswith("Slice `en` needs its own cut: answered 0% (0–46) vs 100% (54–100)")
    assert f"({en.difference_words.split('(')[1]}" in s.verdict.sentence  # the interval it was decided with


def test_one_cut_serves_slices_alike_and_the_sentence_carries_the_largest_gap():
    t, labels = _two_languages(en_holder=0.4)
    s = cut_slices(t, labels, by="language", goal=Goal(max_bluff=0.2))
    assert s.verdict.one_cut_serves_all is True and s.verdict.needs_own_cut == ()
    assert s.verdict.sentence.startswith("One cut serves every slice by language: at cut 0.600")
    assert all(r.low <= 0 <= r.high for r in s.rows)


def test_too_few_questions_is_no_verdict():
    t, labels = _two_languages()
    keep = np.r_[np.arange(3), np.arange(6, 9), np.arange(12, 22)]  # 3 questions per language
    from ragdiag.analyses.threshold.choice import _subset

    mask = np.zeros(22, bool)
    mask[keep] = True
    s = cut_slices(_subset(t, mask), [labels[i] for i in keep], by="language", goal=Goal(max_bluff=0.2))
    assert s.verdict.one_cut_serves_all is None and all(r.needs_own_cut is None for r in s.rows)
    assert s.verdict.sentence.startswith("Cannot tell whether one cut serves every slice")


def test_off_topic_queries_without_a_label_count_in_every_slice():
    """By doc (or phrasing) an off-topic query is in every slice: each slice's own cut is the global one."""
    t, labels = _two_languages()
    doc_labels = [*labels[:12], *[None] * 10]
    s = cut_slices(t, doc_labels, by="doc", goal=Goal(max_bluff=0.2))
    global_cut, _ = conformal_cut(t, 0.2)
    assert all(r.out_of_domain == 10 and r.own_cut == global_cut for r in s.rows)
    assert "every doc slice" in OOD_RULE["doc"] and s.as_json()["off_topic_queries"] == OOD_RULE["doc"]
    # the worse slice's own cut answers no more: said in the verdict, not contradicted
    assert "needs better retrieval, not another cut" in s.verdict.sentence


def test_bad_inputs_are_one_line_errors():
    t, labels = _two_languages()
    with pytest.raises(ValueError, match="bluff goal"):
        cut_slices(t, labels, by="language", goal=Goal(min_answered=0.5))
    with pytest.raises(ValueError, match="one entry per query"):
        cut_slices(t, labels[:-1], by="language", goal=Goal(max_bluff=0.2))
    with pytest.raises(ValueError, match="by must be one of"):
        cut_slices(t, labels, by="colour", goal=Goal(max_bluff=0.2))
    with pytest.raises(ValueError, match="no question has a tag"):
        cut_slices(t, [()] * 22, by="tag", goal=Goal(max_bluff=0.2))
    none = GateTable(("a", "b"), np.array([True, True]), np.array([0.2, 0.3]), np.array([0.2, 0.3]), 4)
    with pytest.raises(ValueError, match="no global cut"):  # no off-topic query: no proposal to judge at
        cut_slices(none, [("x",), ("y",)], by="tag", goal=Goal(max_bluff=0.2))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.1, 0.9), min_size=12, max_size=12), st.lists(st.floats(0.3, 1.0), min_size=8, max_size=8),
       st.lists(st.sampled_from(["a", "b"]), min_size=20, max_size=20))
def test_the_verdict_is_exactly_the_intervals_that_exclude_zero(holder, ood, names):
    t = GateTable(tuple(f"q{i}" for i in range(20)), np.r_[np.ones(12, bool), np.zeros(8, bool)],
                  closest=np.r_[holder, ood], closest_holder=np.r_[holder, np.full(8, np.inf)], window=4)
    s = cut_slices(t, [(n,) for n in names], by="tag", goal=Goal(max_bluff=0.3), draws=400)  # 8 off-topic: a cut
    excluded = tuple(r.label for r in sorted(s.rows, key=lambda r: r.difference)
                     if r.needs_own_cut is not None and (r.high < 0 or r.low > 0))
    assert s.verdict.needs_own_cut == excluded
    if s.verdict.judged:
        assert s.verdict.one_cut_serves_all == (not excluded)
    # the counts add up: every answerable query is in exactly one slice here
    assert sum(r.answerable for r in s.rows) == 12
    for r in s.rows:
        assert r.answered.count == sum(t.closest_holder[i] < s.cut for i in range(12) if names[i] == r.label)


def test_json_shape():
    t, labels = _two_languages()
    doc = json.loads(json.dumps(cut_slices(t, labels, by="language", goal=Goal(max_bluff=0.2)).as_json()))
    row = doc["slices"][0]
    assert {"slice", "answerable", "out_of_domain", "answered", "bluffs", "own_cut", "guarantee"} <= set(row)
    assert set(row["answered"]) == set(row["bluffs"]) == {"count", "rate", "low", "high"}
    assert {"one_cut_serves_all", "sentence"} <= set(doc["verdict"])
    assert doc["by"] == "language" and "detect_language" in doc["labels_from"]


def test_the_export_carries_only_slices_with_a_guarantee_and_round_trips():
    t, labels = _two_languages()
    s = cut_slices(t, labels, by="language", goal=Goal(max_bluff=0.2))
    choice = cut_choice(t, Goal(max_bluff=0.2), folds=2)
    doc = yaml.safe_load(thresholds_yaml(t, choice, config="E/dense", model=MODEL, slices=s.export_block()))
    block = doc["slices"]
    assert block["by"] == "language" and set(block["cuts"]) == {"en"} and set(block["without_own_cut"]) == {"de"}
    en = block["cuts"]["en"]
    assert en["cosine_distance"] == 0.95 and en["cosine_similarity"] == pytest.approx(0.05)
    assert en["answered_at_this_cut"]["count"] == 6 and "1/8" in en["guarantee"]
    assert doc["cut"]["cosine_distance"] == 0.6  # the global cut, for every query not listed
    with pytest.raises(ValueError, match="tag or language only"):
        cut_slices(t, [*labels[:12], *[None] * 10], by="doc", goal=Goal(max_bluff=0.2)).export_block()


def test_query_labels_and_the_page_choice():
    from ragdiag.documents.truth import Query

    qs = [Query("q1:en", "How do I oil my chain?", "en", "q1", tags=("bike",)),
          Query("q1:de", "Wie öle ich die Kette?", "de", "q1", tags=("bike",)),
          Query("o1", "What is the moon made of?", "ood", kind="far", tags=("space",))]
    assert query_labels(qs, "language") == (("en",), ("de",), ("en",))
    assert query_labels(qs, "tag") == (("bike",), ("bike",), ("space",))
    assert query_labels(qs, "phrasing") == (("en",), ("de",), None)
    assert choose_by(qs) == "language" and choose_by(qs[:1]) == "tag"
    assert choose_by([Query("q1:x", "oil my chain", "x", "q1")]) == "doc"


# ----- the command line -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("extra", "message"), [
    (["--max-bluff", "0.05", "--by", "colour"], "argument --by: invalid choice: 'colour'"),
    (["--min-answered", "0.5", "--by", "tag"], "--by needs a bluff goal (--max-bluff A)"),
    (["--max-bluff", "0.05", "--by", "tag", "--export-slices"], "--export-slices adds a slices block"),
    (["--max-bluff", "0.05", "--by", "doc", "--export-slices", "--export", "t.yaml"], "--export-slices needs --by"),
])
def test_cli_errors_are_one_line_and_exit_2(extra, message, capsys, no_work, tmp_path, monkeypatch):
    from ragdiag.cli.parser import main

    monkeypatch.chdir(tmp_path)
    try:
        code = main(["threshold", "E/dense", *extra])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err


# ----- the real model ---------------------------------------------------------------------------------------

@pytest.mark.model
def test_a_second_language_on_another_distance_scale_needs_its_own_cut(tmp_path, capsys, monkeypatch):
    """``data/de-haushalt`` (German documents, each question asked in German and English) plus eight English
    off-topic queries: all-MiniLM-L6-v2 puts English questions about 0.3 farther from the German passages, so
    the English slice is found, said to need its own cut, and given one with a guarantee; exported."""
    from ragdiag.cli.parser import main

    truth = json.loads((DATA / "de-haushalt.truth.json").read_text(encoding="utf-8"))
    truth["ood"] += [{"id": f"e{i}", "kind": "far", "query": q} for i, q in enumerate(ENGLISH_OOD, 1)]
    path = tmp_path / "de-en.truth.json"
    path.write_text(json.dumps(truth), encoding="utf-8")
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "thresholds.yaml"
    argv = ["threshold", "E/dense", "--max-bluff", "0.2", "--corpus", str(DATA / "de-haushalt"), "--truth", str(path),
            "--by", "language"]
    assert main([*argv, "--json", "--export", str(out), "--export-slices"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["slice"]: r for r in doc["slices"]}
    en = rows["en"]
    assert doc["verdict"]["one_cut_serves_all"] is False and doc["verdict"]["needs_own_cut"][0] == "en"
    assert doc["verdict"]["sentence"].startswith("Slice `en` needs its own cut")
    assert en["against_the_rest"]["high"] < 0 and en["answered"]["rate"] < rows["de"]["answered"]["rate"]
    assert en["out_of_domain"] == 9 and en["own_cut"] > doc["cut"]  # a farther scale, a larger own cut
    assert en["answered_at_own_cut"]["count"] >= en["answered"]["count"]
    exported = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert exported["slices"]["cuts"]["en"]["cosine_distance"] == en["own_cut"]
    assert set(exported["slices"]["without_own_cut"]) == {r for r in rows if rows[r]["own_cut"] is None}
    assert main(argv) == 0  # the words: the verdict, then the table
    text = capsys.readouterr().out
    assert "Per language, at the proposed cut" in text and doc["verdict"]["sentence"] in text


@pytest.mark.model
def test_course_and_ticket_tags_on_the_bundled_corpus(tmp_path, capsys, monkeypatch):
    """The bundled ground truth with each phrasing as its own question tagged ``course`` or ``ticket`` (off-topic
    queries tagged ``ticket`` when they speak of "my"/"our"): the verdict is computed and agrees with its
    simultaneous interval; ``--by phrasing`` on the untouched truth reaches the same verdict."""
    import re

    from ragdiag.cli.parser import main

    truth = json.loads((DATA / "sklearn-user-guide.truth.json").read_text(encoding="utf-8"))
    questions = [{**{k: v for k, v in q.items() if k not in ("id", "queries", "tags")}, "id": f"{q['id']}{p[0]}",
                  "queries": {p: text}, "tags": [p]} for q in truth["questions"] for p, text in q["queries"].items()]
    ood = [{**o, "tags": ["ticket" if re.search(r"\b([Mm]y|I'm|Our)\b", o["query"]) else "course"]}
           for o in truth["ood"]]
    path = tmp_path / "tagged.truth.json"
    path.write_text(json.dumps({"questions": questions, "ood": ood}), encoding="utf-8")
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    base = ["threshold", "E/hybrid", "--max-bluff", "0.05", "--json"]
    assert main([*base, "--truth", str(path), "--by", "tag"]) == 0
    doc = json.loads(capsys.readouterr().out)
    verdict = doc["verdict"]
    assert {r["slice"] for r in doc["slices"]} == {"course", "ticket"} and verdict["judged_slices"] == 2
    excludes = [r["slice"] for r in doc["slices"]
                if r["against_the_rest"]["high"] < 0 or r["against_the_rest"]["low"] > 0]
    assert verdict["one_cut_serves_all"] == (not excludes) and set(verdict["needs_own_cut"]) == set(excludes)
    assert sum(r["out_of_domain"] for r in doc["slices"]) == 30
    assert main([*base, "--by", "phrasing"]) == 0
    by_phrasing = json.loads(capsys.readouterr().out)
    assert by_phrasing["verdict"]["one_cut_serves_all"] == verdict["one_cut_serves_all"]
    assert {r["slice"]: r["answered"]["count"] for r in by_phrasing["slices"]} == \
        {r["slice"]: r["answered"]["count"] for r in doc["slices"]}
