"""Served safely, round three (headless AppTest, FAKE encoder): hostile question ids and model names reach no
Markdown unescaped, ``/export?cut=0`` is a sentence, a deletion conflict is said as it is, frames are Arrow-safe.

"Unescaped" is checked on every label and body Streamlit renders as Markdown, whatever the element: the tree
of each page is walked and every ``body``, ``label`` and ``help`` field of every element is collected (plain
text and code elements, whose bodies are not Markdown, aside). A Markdown image ``![x](http://...)`` in a
question id is accepted by ``truth check``; rendered, it would make every visitor's browser fetch it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from apptest import open_page

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
HOSTILE_ID = "![x](http://tracker.example/p.png)"
PLAIN_ELEMENTS = {"text", "code", "json", "exception"}  # bodies shown as typed, never as Markdown


def _markdown_fields(at) -> list[tuple[str, str]]:
    """(element type, text) of every Markdown-rendered body, label and help in the page's element tree."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        kind = getattr(node, "type", "")
        if proto is not None and kind not in PLAIN_ELEMENTS:
            for field in ("body", "label", "help"):
                try:
                    value = getattr(proto, field)
                except AttributeError:
                    continue
                if isinstance(value, str) and value:
                    out.append((kind, value))
        for child in getattr(node, "children", {}).values() if isinstance(getattr(node, "children", None), dict) \
                else getattr(node, "children", ()) or ():
            walk(child)

    walk(at._tree)
    return out


def _unescaped(fields) -> list[tuple[str, str]]:
    """Markdown bodies holding the link unescaped; HTML bodies (``st.html``, escaped by ``ui.html``) holding a tag
    that would fetch it."""
    return [(k, t) for k, t in fields
            if (k == "html" and re.search(r"<(img|a|script|iframe|link|source)\b[^>]*tracker", t))
            or (k != "html" and "](http" in t and "\\](http" not in t)]


@pytest.fixture
def hostile_app(tmp_path, monkeypatch):
    """The tiny corpus whose first question's id is a Markdown image of an outside host."""
    from apptest import ENV, write_tiny_corpus

    root, truth = write_tiny_corpus(tmp_path)
    data = json.loads(truth.read_text())
    for i, q in enumerate(data["questions"]):  # every question: whichever is displaced on Hubs carries one
        q["id"] = HOSTILE_ID if i == 0 else HOSTILE_ID.replace("p.png", f"p{i}.png")
    truth.write_text(json.dumps(data, indent=2))
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(tmp_path / "cache"),
           "RAGDIAG_ENCODER": "fakes:fake_encoder", "RAGDIAG_ROOTS": str(tmp_path)}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("RAGDIAG_LOCKED", raising=False)
    return {"root": root, "truth": truth, "tmp": tmp_path}


def test_the_hostile_id_is_accepted_by_truth_check(hostile_app):
    """The premise: such an id is a valid ground truth (so the pages must escape it, not the loader refuse it)."""
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth

    truth = load_truth(hostile_app["truth"], load_corpus(hostile_app["root"]))
    assert HOSTILE_ID in {q.id for q in truth.questions}


def _open(page: str, **params):
    return open_page(page, timeout=60, **params)


def test_hubs_links_show_the_hostile_id_as_text(hostile_app):
    at = _open("app_pages/hubs.py", k="1", top="200")  # at k = 1 some answerable query is displaced
    fields = _markdown_fields(at)
    links = [t for k, t in fields if "crowded by" in t]
    assert links, "no displaced query listed: the fixture no longer exercises the links"
    assert not _unescaped(fields), _unescaped(fields)


def test_ground_truth_labels_show_the_hostile_id_as_text(hostile_app):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app_pages" / "ground_truth.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    fields = _markdown_fields(at)
    assert any("phrasing" in t and "tracker.example" in t for _, t in fields)  # the edit box's label, as text
    assert not _unescaped(fields), _unescaped(fields)


def test_a_typed_model_name_is_escaped_in_the_variants_warning(hostile_app):
    from streamlit.testing.v1 import AppTest

    folder = hostile_app["tmp"] / "[m](http:tracker.example)"  # under the allowed roots; not a model
    folder.mkdir()
    at = AppTest.from_file(APP, default_timeout=60)
    from apptest import run

    run(at)
    at.switch_page("app_pages/variants.py")
    run(at)
    at.text_input(key="vextra").input(str(folder))
    run(at)
    fields = _markdown_fields(at)
    assert any("tracker.example" in t for _, t in fields), fields  # the name is shown (in the warning), as text
    assert not _unescaped(fields), _unescaped(fields)


def test_export_at_cut_0_is_a_report_not_an_error(hostile_app):
    # a cut of 0 is in the gate's one range [0, 2]: it keeps nothing, and the report says so rather than failing
    at = _open("app_pages/export.py", cut="0")
    assert not at.exception
    labels = [b.label for b in at.get("download_button")]
    assert any(re.fullmatch(r"Download report at cut \d\.\d{3} \(HTML\)", lab) for lab in labels) and "per_query.csv" in labels


# --- the deletion conflict ------------------------------------------------------------------------------------------
def test_a_deleted_question_edited_elsewhere_is_said_to_be_kept_not_deleted(tmp_path):
    """Visitor A deletes q2, visitor B edits q2 and saves; A reloads keeping A's edits: q2 stays (B's edit wins
    over a deletion) and the message says the deletion was dropped."""
    from ragdiag.authoring.edit import remove_entry, update_queries
    from ragdiag.authoring.save import merge, open_truth, save_truth
    from ui.truth_editor import conflict_note

    from apptest import TRUTH

    path = tmp_path / "kb.truth.json"
    path.write_text(json.dumps(TRUTH))
    base = open_truth(path)
    mine = remove_entry(base.data, "questions", "q2")
    theirs = update_queries(base.data, "q2", {"course": "How do I oil a bike chain?"})
    save_truth(path, theirs, expected_sha256=base.sha256)
    merged, conflicts = merge(base.data, mine, open_truth(path).data)
    assert conflicts == ["q2"] and "q2" in {q["id"] for q in merged["questions"]}
    note = conflict_note(conflicts, mine)
    assert "deletion was dropped" in note and "your version is kept" not in note


# --- Arrow-safe frames ------------------------------------------------------------------------------------------------
def test_every_dashed_table_is_arrow_safe():
    import pandas as pd
    import pyarrow as pa

    from ui.fmt import DASH, dash_missing, drop_constant

    frame = pd.DataFrame({"rank": [3, None, 1], "chunk": ["a", "b", "c"], "ratio": [1.5, None, 2.0],
                          "same": [7, 7, 7]})
    for shown in (dash_missing(frame), drop_constant(dash_missing(frame))[0],
                  drop_constant(pd.DataFrame({"r": [1, DASH], "q": ["a", "b"]}))[0]):
        pa.Table.from_pandas(shown)  # raises ArrowTypeError on a column mixing integers and dashes
    from ui.tables import ranks_view

    shown, _ = ranks_view(["q1:course", "q2:course", "q3:course"], ["course"] * 3, [2, 0, 1], ["ok", "lost", "ok"])
    pa.Table.from_pandas(shown)  # the Inspector's ranks: integers and a dash for the query not retrieved
    assert shown["needle rank (position)"].tolist() == ["1", "2", DASH]
    assert dash_missing(frame)["rank"].tolist() == ["3", DASH, "1"]  # text (Arrow-safe), a whole rank without ".0"
    assert dash_missing(frame)["chunk"].tolist() == ["a", "b", "c"]  # a column of one type is left alone


PAGES = ["summary", "overview", "compare", "threshold", "inspector", "chunking", "hubs", "cost", "variants",
         "documents", "ground_truth", "external", "export"]


@pytest.mark.slow
def test_no_page_renders_a_hostile_id_as_markdown(hostile_app, monkeypatch):
    """Every page of the app, opened as a visitor opens it (and the Inspector at a hostile query): no label or
    body of any element holds the image unescaped; the id is shown somewhere, as text; no table needs Streamlit's
    Arrow fallback (which logs a full traceback each time: a column mixing integers and dashes)."""
    from streamlit import dataframe_util
    from apptest import run
    from streamlit.testing.v1 import AppTest

    fallbacks = []
    monkeypatch.setattr(dataframe_util._LOGGER, "info",
                        lambda msg, *a, **k: fallbacks.append(msg) if "Arrow" in str(msg) else None)

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"q": f"{HOSTILE_ID}:course", "k": "1"})
    run(at)
    shown = False
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py")
        run(at)
        fields = _markdown_fields(at)
        assert not _unescaped(fields), (page, _unescaped(fields))
        shown |= any("tracker.example" in t for _, t in fields)
        assert not fallbacks, (page, fallbacks)
    assert shown
