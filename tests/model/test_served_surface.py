"""The served surface: no outside request (a local page icon), data text escaped where Streamlit renders Markdown,
bounded problem lists for uploads, the clear-cache message refused, no server path told to clients."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "![x](http://tracker.example/p.png)"


def test_the_page_icon_is_a_file_this_server_serves():
    """A ``:material/...:`` page icon makes every browser fetch it from fonts.gstatic.com."""
    tree = ast.parse((ROOT / "app.py").read_text())
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "set_page_config")
    icon = next(k.value for k in call.keywords if k.arg == "page_icon")
    assert isinstance(icon, ast.Name), ast.dump(icon)  # not a literal :material/ or emoji string
    import ui.state

    path = getattr(ui.state, icon.id)
    assert Path(path).is_file() and Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_clients_clear_cache_message_keeps_the_shared_caches(monkeypatch):
    import streamlit as st
    from streamlit.runtime.app_session import AppSession

    import ui.state  # noqa: F401 - installs the served protocol

    monkeypatch.delenv("RAGDIAG_ALLOW_CLEAR_CACHE", raising=False)

    @st.cache_resource
    def shared():
        return object()

    first = shared()
    cleared = []
    visitor = SimpleNamespace(_session_state=SimpleNamespace(clear=lambda: cleared.append(True)))
    AppSession._handle_clear_cache_request(visitor)
    assert shared() is first and cleared == [True]  # only the sender's session state went


def test_clients_are_not_told_the_server_path_of_the_app(monkeypatch):
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.app_session import AppSession

    import ui.serving

    ui.serving.install()  # as the launcher does before the server starts (ui.serve.main)
    msg = ForwardMsg()  # what Streamlit's builder puts in a new session message (a real one needs a server)
    msg.new_session.main_script_path = str(ROOT / "app.py")
    monkeypatch.setitem(ui.serving._ORIGINAL, "new_session", lambda self, *a, **k: msg)
    sent = AppSession._create_new_session_message(object(), "page-hash", None)
    assert sent.new_session.main_script_path == "app.py"


def test_an_upload_of_millions_of_bad_lines_keeps_a_bounded_list(tiny_truth):
    from ragdiag.evaluation.external import MAX_PROBLEMS, RunError, parse_run

    read = []

    def lines():  # counts what the parser reads: the cap is on work, not only on messages
        for n in range(200_000):
            read.append(n)
            yield "{}"

    with pytest.raises(RunError) as exc:
        parse_run(lines(), tiny_truth)
    assert len(exc.value.problems) == exc.value.count == MAX_PROBLEMS
    assert len(read) == MAX_PROBLEMS + 1 and exc.value.stopped_at == MAX_PROBLEMS + 1
    assert str(exc.value).startswith(f"run <run> has at least {MAX_PROBLEMS:,} problem(s); reading stopped at line "
                                     f"{MAX_PROBLEMS + 1:,}")


# ----- data text escaped where Streamlit renders Markdown (AppTest) -------------------------------------------

@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """The tiny corpus with Markdown images in a truth query, a failed file's name and a section heading."""
    from apptest import ENV, write_tiny_corpus

    root, truth = write_tiny_corpus(tmp_path)
    data = json.loads(truth.read_text())
    data["questions"][0]["queries"]["ticket"] = f"{IMAGE} bitter green tea"
    truth.write_text(json.dumps(data))
    (root / "[a](http:tracker.example).pdf").write_bytes(b"not a pdf")
    (root / "espresso.md").write_text(f"# Espresso\n\n## {IMAGE} Grinding\n\nEspresso needs a fine grind of "
                                      "coffee beans and water pushed through at nine bar of pressure.\n")
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(tmp_path / "cache")}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for k in ("RAGDIAG_ROOTS", "RAGDIAG_LOCKED"):
        monkeypatch.delenv(k, raising=False)
    return root


def _markdown_bodies(at) -> list[str]:
    """Every text Streamlit renders as Markdown: markdown, captions, alerts, expander labels, table cells."""
    out = [e.value for e in (*at.markdown, *at.caption, *at.info, *at.warning, *at.error, *at.success)]
    out += [e.label for e in at.expander]
    for t in at.table:
        out += [str(v) for v in t.value.to_numpy().ravel()]
    return out


def _unescaped(bodies) -> list[str]:
    return [b for b in bodies if "](http" in b and "\\]\\(http" not in b and "\\](http" not in b]


@pytest.mark.model
def test_truth_queries_and_failed_file_names_are_escaped(hostile):
    from apptest import app

    at = app("app_pages/inspector.py", q="q1:course")
    assert not _unescaped(_markdown_bodies(at)), _unescaped(_markdown_bodies(at))
    assert any("tracker.example/p.png" in b for b in _markdown_bodies(at))  # shown, as text
    at = app("app_pages/overview.py")
    assert not _unescaped(_markdown_bodies(at)), _unescaped(_markdown_bodies(at))
    assert any("tracker.example" in b for b in _markdown_bodies(at))


def test_corpus_headings_are_escaped_on_the_ground_truth_page(hostile):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app_pages" / "ground_truth.py"), default_timeout=60)
    at.run()
    at.text_area(key="gt_ood_text").input("How fine should the grind be for espresso coffee?").run()
    at.number_input(key="gt_sugg_n").set_value(30).run()
    at.button(key="gt_suggest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    bodies = _markdown_bodies(at)
    assert any("tracker.example" in b for b in bodies)
    assert not _unescaped(bodies), _unescaped(bodies)
