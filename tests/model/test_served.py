"""The dashboard served to others (AppTest): a visitor opens the operator's data and nothing else.

Default roots (no ``RAGDIAG_ROOTS``): only the configured corpus folder and ground-truth file.
Locked mode (``RAGDIAG_LOCKED=1``): no path field at all. Bad input ends in an error box, never a
traceback; small corpora work on every page. The same in a real browser: ``test_browser.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from apptest import APP, ENV, TRUTH, app, serve_tiny, texts

pytestmark = pytest.mark.model

REFUSED = "is not one this dashboard serves"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """The tiny corpus as the operator's data; no extra roots."""
    root, truth = serve_tiny(tmp_path, monkeypatch, "RAGDIAG_ROOTS", "RAGDIAG_LOCKED")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "passwords.md").write_text("# Secret\n\nTOPSECRET-4711 is the admin password.\n", encoding="utf-8")
    return {"root": root, "truth": truth, "secret": secret, "base": tmp_path}


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_paths_outside_the_roots_are_refused_on_every_page(served):
    for page in ("app_pages/overview.py", "app_pages/documents.py", "app_pages/chunking.py"):
        at = app(page)
        for path in (served["secret"], "/etc", served["base"] / "missing", "/dev/zero"):
            at.text_input(key="corpus_path").set_value(str(path)).run()
            assert not at.exception, [e.value for e in at.exception]
            assert any(REFUSED in e for e in _errors(at)), (page, path, _errors(at))
            assert "TOPSECRET" not in texts(at) and "passwd" not in texts(at)
            assert not at.dataframe
        at.text_input(key="corpus_path").set_value(str(served["root"]))
        at.text_input(key="truth_path").set_value("/etc/passwd").run()
        assert any(REFUSED in e for e in _errors(at)) and "root:" not in texts(at)


def test_refusal_is_the_same_whether_or_not_the_path_exists(served):
    """No file-existence oracle: the answer for a refused path says nothing about it."""
    answers = set()
    at = app("app_pages/overview.py")
    for path in ("/etc/hostname", "/etc/no-such-file", served["secret"] / "passwords.md", served["base"] / "nope.md"):
        at.text_input(key="truth_path").set_value(str(path)).run()
        answers.add(tuple(_errors(at)))
    assert len(answers) == 1


def test_external_run_server_path_is_no_oracle_and_reads_nothing_outside(served):
    at = app("app_pages/external.py")
    answers = set()
    for path in ("/etc/hostname", "/etc/nope", "/dev/zero", served["secret"] / "passwords.md"):
        at.text_input(key="run_path").set_value(str(path)).run()
        assert not at.exception
        answers.add(tuple(_errors(at)))
        assert "lines" not in " ".join(_errors(at)) and "TOPSECRET" not in texts(at)
    assert len(answers) == 1 and REFUSED in answers.pop()[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_inside_the_roots_is_refused_not_blocking(served, monkeypatch):
    monkeypatch.setenv("RAGDIAG_ROOTS", str(served["base"]))
    fifo = served["base"] / "run.jsonl"
    os.mkfifo(fifo)
    at = app("app_pages/external.py")
    at.text_input(key="run_path").set_value(str(fifo)).run()
    assert not at.exception
    assert "named pipe (FIFO), not a regular file" in texts(at)


def test_locked_mode_has_no_path_fields_and_ignores_url_parameters(served, monkeypatch):
    monkeypatch.setenv("RAGDIAG_LOCKED", "1")
    for page in ("app_pages/overview.py", "app_pages/documents.py", "app_pages/external.py"):
        at = app(page, corpus_path=str(served["secret"]), truth_path="/etc/passwd", run_path="/etc/hostname")
        assert not at.text_input, [t.key for t in at.text_input]
        assert "TOPSECRET" not in texts(at) and not _errors(at)
    at = app("app_pages/ground_truth.py")
    assert not at.button and "served read-only" in texts(at)  # nothing on the server can be written
    at = app("app_pages/documents.py", corpus_path=str(served["secret"]))
    assert set(at.dataframe[0].value["document"]) == {"tea", "bike", "bread"}
    assert "corpus **tiny**" in " ".join(c.value for c in at.sidebar.caption)


def test_uploaded_file_name_is_never_markdown(served):
    at = app("app_pages/external.py")
    lines = "\n".join(json.dumps({"query_id": q, "hits": [{"text": "nothing"}]}) for q in ("q1:course", "o1"))
    name = "![x](http://tracker.example/p.png) *big*.jsonl"
    at.file_uploader(key="run_file").set_value((name, lines.encode(), "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = texts(at)
    assert "Recall of ext/p.png\\_big" in shown  # the stem after the last "/", reduced to safe characters
    assert "](http" not in shown and "![" not in shown


def test_run_file_doc_names_are_mapped_in_the_page(served, monkeypatch):
    monkeypatch.setenv("RAGDIAG_ROOTS", str(served["base"]))
    tea = (served["root"] / "tea.md").read_text(encoding="utf-8")
    needle = TRUTH["questions"][0]["needle"]
    start = tea.index(needle)
    run = served["base"] / "files.jsonl"
    run.write_text(json.dumps({"query_id": "q1:course", "hits": [
        {"text": needle, "doc": "tea.md", "start": start, "end": start + len(needle)}]}), encoding="utf-8")
    at = app("app_pages/external.py")
    at.text_input(key="run_path").set_value(str(run)).run()
    assert "mapped to corpus ids" in texts(at) and "'tea.md' -\\> 'tea'" in texts(at)
    per_query = next(d.value for d in at.dataframe if "needle rank (position)" in d.value.columns)
    assert str(per_query.set_index("query").loc["q1:course", "needle rank (position)"]) == "1"  # counted, not missed
    bad = served["base"] / "bad.jsonl"
    bad.write_text(json.dumps({"query_id": "q1:course", "hits": [{"text": "x", "doc": "teaa.md"}]}), encoding="utf-8")
    at.text_input(key="run_path").set_value(str(bad)).run()
    assert "closest corpus ids: tea" in texts(at)


def test_long_documents_are_sent_in_parts(served, monkeypatch):
    long = served["root"] / "long.md"
    long.write_text("# Long\n\n" + ("word " * 20 + "\n") * 1500, encoding="utf-8")  # ~150,000 characters
    at = app("app_pages/documents.py", doc="long")
    assert not at.exception
    part = at.number_input(key="part")
    assert part.max == 4 and part.value == 1
    body = at.html[-1].proto.body
    assert 50_000 <= len(body) < 60_000
    part.set_value(4).run()
    assert "characters 150,000 to" in texts(at)
    at = app("app_pages/chunking.py", doc="long", strategy="E")
    assert not at.exception
    assert at.number_input(key="part").max == 4
    body = next(h.proto.body for h in at.html if "chunk-map" in h.proto.body)
    assert 9_000 <= body.count("word") <= 10_100  # one part of 50,000 characters: not the 30,000 words of the whole


def test_small_corpus_works_on_every_page(tmp_path, monkeypatch):
    """A corpus of two chunks: fewer than the default keep of 4."""
    root = tmp_path / "small"
    root.mkdir()
    needle = "The only answer in this corpus is that the kettle must be descaled every month."
    (root / "k.md").write_text(f"# Kettle\n\n{needle}\n", encoding="utf-8")
    truth = tmp_path / "small.truth.json"
    truth.write_text(json.dumps({"questions": [{"id": "q1", "needle": needle, "queries": {"course": "kettle?"}}],
                                 "ood": [{"id": "o1", "kind": "far", "query": "passport renewal"}]}))
    for k, v in {**ENV, "RAGDIAG_STRATEGIES": "E", "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth),
                 "RAGDIAG_CACHE": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("RAGDIAG_LOCKED", raising=False)
    import ast

    # the navigation's pages, as app.py lists them (collection.py is served only when the operator opens one)
    tree = ast.parse(Path(APP).read_text(encoding="utf-8"))
    navigation = next(ast.literal_eval(n.value) for n in tree.body
                      if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "NAVIGATION")
    pages = [f"app_pages/{file}.py" for section in navigation.values() for file, _, _ in section]
    assert len(pages) >= 8
    for page in pages:
        at = app(page, keep=4)
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not _errors(at), (page, _errors(at))


def test_corpus_limits_show_in_an_error_box(served, monkeypatch):
    monkeypatch.setenv("RAGDIAG_MAX_FILES", "2")
    at = app("app_pages/documents.py")
    assert any("more than 2 files" in e and "RAGDIAG\\_MAX\\_FILES" in e for e in _errors(at)), _errors(at)
    monkeypatch.setenv("RAGDIAG_MAX_FILES", "many")
    at = app("app_pages/documents.py")
    assert any("must be a positive integer" in e for e in _errors(at)), _errors(at)
