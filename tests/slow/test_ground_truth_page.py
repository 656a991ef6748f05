"""The Ground truth page, headless (AppTest) on the tiny corpus of ``test_app.py``: no model is loaded.

The page runs on its own (``AppTest.from_file`` of the page file) with the
corpus and truth file from the environment, as the app's sidebar defaults are;
one test goes through ``app.py`` to switch pages.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from apptest import TEA_NEEDLE, ok, write_tiny_corpus

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "app_pages" / "ground_truth.py")
NEW_NEEDLE = "Feed the starter equal weights of flour and water once a day."


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    root, truth = write_tiny_corpus(tmp_path)
    data = json.loads(truth.read_text())
    data["maintainer"] = "kept as is"  # a key ragdiag does not know
    data["questions"][0]["note"] = "also kept"
    truth.write_text(json.dumps(data, indent=2), encoding="utf-8")
    monkeypatch.setenv("RAGDIAG_CORPUS", str(root))
    monkeypatch.setenv("RAGDIAG_TRUTH", str(truth))
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    return root, truth


def page():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(PAGE, default_timeout=60)
    return ok(at.run())


def pick(at, doc: str, section: str, sentence_text: str, span: str = "this sentence"):
    at.selectbox(key="gt_doc").set_value(doc).run()
    at.selectbox(key="gt_sec").set_value(section).run()
    sb = at.selectbox(key="gt_sent")
    labels = list(sb.options)  # as shown: "n. sentence text"
    idx = next(i for i, label in enumerate(labels) if sentence_text[:60] in label)
    sb.set_value(idx).run()
    at.radio(key="gt_span").set_value(span).run()
    return ok(at)


def add_ood(at, query: str, kind: str | None = None):
    """Type an off-topic query, set its kind (None: the page's default) and add it."""
    at.text_area(key="gt_ood_text").input(query).run()
    if kind is not None:
        at.radio(key="gt_ood_kind").set_value(kind).run()
    return ok(at.button(key="gt_add_ood").click().run())


def test_pick_a_needle_write_phrasings_save(tiny):
    root, truth = tiny
    before = truth.read_bytes()
    at = pick(page(), "bread", "Starter", NEW_NEEDLE)
    assert NEW_NEEDLE in [c.value for c in at.code]
    assert any("Occurs exactly once (bread" in s.value for s in at.success)
    assert at.button(key="gt_add").disabled  # no phrasings yet
    at.text_input(key="gt_new_course").input("How often should a sourdough starter be fed, and with what?").run()
    at.text_input(key="gt_new_ticket").input("my starter looks sad, what do I give it and how often").run()
    assert not at.button(key="gt_add").disabled
    ok(at.button(key="gt_add").click().run())
    assert any("Added q05" in s.value for s in at.success)
    assert at.text_input(key="gt_new_course").value == ""  # cleared for the next question
    ok(at.button(key="gt_save").click().run())
    assert any("Saved tiny.truth.json" in s.value for s in at.success)
    data = json.loads(truth.read_text())
    assert [q["id"] for q in data["questions"]] == ["q1", "q2", "q3", "q4", "q05"]
    assert data["questions"][-1]["needle"] == NEW_NEEDLE
    assert data["maintainer"] == "kept as is" and data["questions"][0]["note"] == "also kept"
    assert (truth.parent / "tiny.truth.prev.json").read_bytes() == before
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth

    assert len(load_truth(truth, load_corpus(root)).questions) == 5


def test_live_checks_show_where_chunking_cuts_and_leakage(tiny):
    at = pick(page(), "tea", "Brewing", TEA_NEEDLE)
    table = at.dataframe[0].value
    row_a = table[table["strategy"] == "A"].iloc[0]
    assert row_a["needle"] == "DESTROYED" and "|" in row_a["cut falls"]
    assert table[table["strategy"] == "E"].iloc[0]["needle"] == "whole"
    assert any("already question q1" in w.value for w in at.warning)
    at.text_input(key="gt_new_course").input("Green tea should be brewed with water at about what degrees Celsius?").run()
    assert any("Leakage" in w.value and "rewrite" in w.value for w in at.warning)
    pick(at, "tea", "Brewing", TEA_NEEDLE, span="this and the next sentence")
    two = [c.value for c in at.code][0]
    assert two.startswith(TEA_NEEDLE) and two.endswith("bitter and astringent.")


def test_refuses_to_overwrite_a_file_changed_on_disk_and_merges(tiny):
    _, truth = tiny
    at = page()
    add_ood(at, "Which espresso machine has the best steam wand?", "far")
    # someone else saves the file meanwhile
    other = json.loads(truth.read_text())
    other["ood"].append({"id": "o9", "kind": "near", "query": "How long does a black tea steep?"})
    truth.write_text(json.dumps(other), encoding="utf-8")
    ok(at.button(key="gt_save").click().run())
    assert any("changed on disk" in e.value for e in at.error)
    assert json.loads(truth.read_text()) == other  # nothing overwritten
    ok(at.button(key="gt_merge").click().run())
    ok(at.button(key="gt_save").click().run())
    ids = [o["id"] for o in json.loads(truth.read_text())["ood"]]
    assert ids == ["o1", "o2", "o9", "o03"]


def test_new_file_next_to_the_corpus(tmp_path, monkeypatch):
    root, truth = write_tiny_corpus(tmp_path)
    truth.unlink()
    monkeypatch.setenv("RAGDIAG_CORPUS", str(root))
    monkeypatch.delenv("RAGDIAG_TRUTH", raising=False)
    at = page()
    assert any("There is no tiny.truth.json yet" in i.value for i in at.info)
    pick(at, "bike", "Chain", "Measure chain stretch every thousand kilometres")
    at.text_input(key="gt_new_course").input("How often should chain wear be checked?").run()
    at.text_input(key="gt_new_ticket").input("when do i need a new bike chain").run()
    ok(at.button(key="gt_add").click().run())
    add_ood(at, "What is the capital of Mongolia?", "far")
    ok(at.button(key="gt_save").click().run())
    data = json.loads((tmp_path / "tiny.truth.json").read_text())
    assert [q["id"] for q in data["questions"]] == ["q01"] and [o["id"] for o in data["ood"]] == ["o01"]


def test_suggestion_loads_into_the_picker_and_coverage_speaks(tiny):
    at = page()
    at.number_input(key="gt_sugg_n").set_value(3).run()
    ok(at.button(key="gt_suggest").click().run())
    use = [b for b in at.button if b.key and b.key.startswith("gt_use_") and not b.key.startswith("gt_use_ood")]
    assert len(use) == 3 and any(b.disabled for b in use)  # a candidate already in the truth cannot be used twice
    use = [b for b in use if not b.disabled]
    ok(use[0].click().run())
    assert any("Draft from the suggestion" in i.value for i in at.info)
    assert any("Occurs exactly once" in s.value for s in at.success)
    assert any("no difference in R@4 can be told apart" in m.value for m in at.markdown)


def test_nothing_typed_is_lost_on_a_page_switch(tiny):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("app_pages/ground_truth.py")
    ok(at.run())
    pick(at, "bread", "Starter", NEW_NEEDLE)
    at.text_input(key="gt_new_course").input("half-written question").run()
    at.text_area(key="gt_ood_text").input("half-written ood").run()
    at.switch_page("app_pages/documents.py")
    ok(at.run())
    at.switch_page("app_pages/ground_truth.py")
    ok(at.run())
    assert at.text_input(key="gt_new_course").value == "half-written question"
    assert at.text_area(key="gt_ood_text").value == "half-written ood"
    assert at.selectbox(key="gt_doc").value == "bread"
    assert NEW_NEEDLE in [c.value for c in at.code]


def test_a_typed_path_outside_the_allowed_roots_is_refused(tiny, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "typed.json"
    elsewhere.parent.mkdir()
    at = page()
    at.session_state["truth_path"] = str(elsewhere)  # what a visitor could type in the sidebar
    ok(at.run())
    assert any("not one this dashboard serves" in e.value for e in at.error)
    assert not [b for b in at.button if b.key == "gt_save"] and not elsewhere.exists()


def test_writes_only_the_configured_file(tiny, tmp_path, monkeypatch):
    _, truth = tiny
    elsewhere = tmp_path / "elsewhere" / "typed.json"
    elsewhere.parent.mkdir()
    # Even a path the operator allows (under RAGDIAG_ROOTS) is read, never written, by this page.
    monkeypatch.setenv("RAGDIAG_ROOTS", os.pathsep.join([os.environ.get("RAGDIAG_ROOTS", ""), str(tmp_path)]))
    elsewhere.write_text(truth.read_text(), encoding="utf-8")
    at = page()
    at.session_state["truth_path"] = str(elsewhere)  # what a visitor could type in the sidebar
    ok(at.run())
    assert any("writes only the configured ground-truth file" in w.value for w in at.warning)
    add_ood(at, "What is the capital of Mongolia?")
    before = elsewhere.read_bytes()
    ok(at.button(key="gt_save").click().run())
    assert elsewhere.read_bytes() == before  # the typed file is untouched
    assert [o["id"] for o in json.loads(truth.read_text())["ood"]] == ["o1", "o2", "o03"]


@pytest.mark.slow
def test_twenty_questions_and_ten_ood_on_an_unseen_corpus(tmp_path, monkeypatch, fake_encoder, kb_corpus):
    """From an empty file to 20 questions x 2 phrasings and 10 ood queries on the page alone, then evaluated.

    The corpus is the HTML/PDF/Markdown fixture folder (it was never used to tune the suggestions); the
    evaluation uses BM25 and the FAKE bag-of-words encoder (plumbing: the file is a usable ground truth).
    """
    import shutil

    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.documents.truth import load_truth

    root = tmp_path / "kb"
    shutil.copytree(ROOT / "tests" / "fixtures" / "kb", root)
    monkeypatch.setenv("RAGDIAG_CORPUS", str(root))
    monkeypatch.delenv("RAGDIAG_TRUTH", raising=False)
    at = page()
    at.number_input(key="gt_sugg_n").set_value(22).run()
    ok(at.button(key="gt_suggest").click().run())
    for i in range(20):
        use = next(b for b in at.button if b.key and b.key.startswith("gt_use_") and not b.key.startswith("gt_use_ood")
                   and not b.disabled)
        ok(use.click().run())
        at.text_input(key="gt_new_course").input(f"documentation question number {i}")
        at.text_input(key="gt_new_ticket").input(f"support ticket number {i}, please help").run()
        ok(at.button(key="gt_add").click().run())
    for i in range(10):
        at.text_area(key="gt_ood_text").input(f"How do I bake bread number {i}?")
        at.radio(key="gt_ood_kind").set_value("near" if i % 2 else "far").run()
        ok(at.button(key="gt_add_ood").click().run())
    ok(at.button(key="gt_save").click().run())
    corpus = kb_corpus  # the same files as the copy the page wrote the ground truth for, already loaded
    truth = load_truth(tmp_path / "kb.truth.json", corpus)
    assert (len(truth.questions), len(truth.ood), truth.phrasings) == (20, 10, ("course", "ticket"))
    ev = evaluate(corpus, truth, encoder=fake_encoder, strategies="C", retrievers="bm25")
    assert len(ev.queries) == 50


def test_edit_and_delete_questions(tiny):
    _, truth = tiny
    at = page()
    at.selectbox(key="gt_edit").set_value("q2").run()
    at.text_input(key="gt_ed_q2_course").input("How is chain oil put on?").run()
    ok(at.button(key="gt_apply").click().run())
    at.selectbox(key="gt_edit").set_value("q3").run()
    ok(at.button(key="gt_delete").click().run())
    ok(at.button(key="gt_save").click().run())
    data = json.loads(truth.read_text())
    assert [q["id"] for q in data["questions"]] == ["q1", "q2", "q4"]
    assert data["questions"][1]["queries"] == {"course": "How is chain oil put on?",
                                               "ticket": "bike chain squeaks, how do I oil it properly"}
    # a discarded edit does not linger in the edit box
    at.selectbox(key="gt_edit").set_value("q2").run()
    at.text_input(key="gt_ed_q2_course").input("typed, then discarded").run()
    ok(at.button(key="gt_reload").click().run())
    assert at.text_input(key="gt_ed_q2_course").value == "How is chain oil put on?"
