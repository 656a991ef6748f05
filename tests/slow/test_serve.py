"""``./run.sh dashboard`` starts the configured data's evaluation with the server (``ui/serve.py``).

The warm-up is the same shared job a first page view would start: a page
opened afterwards finds it done (no second job, no second pass). These tests
use the FAKE bag-of-words encoder (``tests/helpers/fakes.py``) through
``RAGDIAG_ENCODER``: they check the plumbing; the real model's path through
the same job is covered by ``test_app.py`` and ``test_browser.py``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from processes import child_pythonpath

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def configured(tiny_folder, tmp_path, monkeypatch):
    """The operator's configuration: the tiny corpus, strategies A and E, the FAKE encoder, an empty cache."""
    env = {"RAGDIAG_CORPUS": str(tiny_folder), "RAGDIAG_TRUTH": str(tiny_folder.parent / "tiny.truth.json"),
           "RAGDIAG_CACHE": str(tmp_path / "cache"), "RAGDIAG_STRATEGIES": "A,E",
           "RAGDIAG_RETRIEVERS": "dense,bm25,hybrid", "RAGDIAG_ENCODER": "fakes:fake_encoder",
           "RAGDIAG_NO_SNAPSHOT": "1"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for k in ("RAGDIAG_ROOTS", "RAGDIAG_LOCKED", "RAGDIAG_WARM"):
        monkeypatch.delenv(k, raising=False)
    return env


def test_warm_up_evaluates_the_configured_data_and_a_first_visit_finds_it_done(configured):
    from streamlit.testing.v1 import AppTest

    from ui.jobs import start_operator_job
    from ui.serve import warm

    lines: list[str] = []
    warm(say=lines.append)  # returns once every strategy is done
    assert lines[0].startswith("evaluating the configured data in the background (2 strategies)")
    assert [line.split(" after ")[0] for line in lines[1:3]] == ["strategy E ready", "strategy A ready"]
    assert lines[1].endswith("(1 of 2)") and lines[2].endswith("(2 of 2)")
    assert lines[-1].startswith("all strategies done after ")

    job = start_operator_job()
    assert start_operator_job() is job  # one job per input set, held for every session
    state = job.scheduler.state()
    assert state.finished and state.ready == ("A", "E") and job.scheduler.passes == 1

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    page = " ".join(str(getattr(e, "value", "")) for e in [*at.caption, *at.info, *at.markdown])
    assert "still computing" not in page  # the first view found every strategy ready
    at.switch_page("app_pages/overview.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    frames = [d.value.data if hasattr(d.value, "data") else d.value for d in at.dataframe]
    shown = set(next(f for f in frames if "configuration" in f.columns)["configuration"])
    assert {"A/dense", "A/hybrid", "E/dense", "E/bm25"} <= shown
    assert job.scheduler.passes == 1  # the page used the warm job: nothing was computed again


def test_warm_up_reports_what_a_visit_would_show_and_starts_nothing(configured, tmp_path, monkeypatch):
    from ui.serve import warm

    monkeypatch.setenv("RAGDIAG_CORPUS", str(tmp_path / "no-such-folder"))
    monkeypatch.delenv("RAGDIAG_TRUTH")
    lines: list[str] = []
    warm(say=lines.append)
    assert len(lines) == 1
    assert lines[0].startswith("the configured data is not evaluated before a visit (CorpusError: ")
    assert lines[0].endswith("the dashboard shows why when it is opened")


def test_main_runs_streamlit_on_the_app_with_the_given_options_and_warms_unless_told_not_to(monkeypatch):
    """Plumbing, with a FAKE streamlit CLI and a FAKE warm-up: what main() hands over, and when it warms."""
    import threading

    import streamlit.web.cli as cli

    import ui.serve as serve

    calls: list[list[str]] = []
    warmed = threading.Event()
    monkeypatch.setattr(cli, "main", lambda prog_name: calls.append(list(sys.argv)) or 0)
    monkeypatch.setattr(serve, "warm", warmed.set)
    monkeypatch.setattr(sys, "argv", ["serve"])
    monkeypatch.delenv("RAGDIAG_WARM", raising=False)

    assert serve.main(["--server.port", "8600"]) == 0
    assert calls == [["streamlit", "run", str(ROOT / "app.py"), "--server.port", "8600"]]
    assert warmed.wait(5)

    # Whether main() starts the warm-up thread at all: threads it creates are recorded, not run.
    created: list[str] = []

    class RecordingThread:
        def __init__(self, *, target, name, daemon):
            created.append(name)

        def start(self):
            pass

    monkeypatch.setattr(serve.threading, "Thread", RecordingThread)
    monkeypatch.setenv("RAGDIAG_WARM", "0")
    assert serve.main([]) == 0
    assert calls[-1] == ["streamlit", "run", str(ROOT / "app.py")]
    assert created == []  # told not to warm: no thread at all
    monkeypatch.delenv("RAGDIAG_WARM")
    assert serve.main([]) == 0
    assert created == ["ragdiag-warm"]  # the same call without the setting does start one


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_the_launcher_serves_the_app_and_says_when_each_strategy_is_ready(configured, tmp_path):
    """``python -m ui.serve`` (what ``./run.sh dashboard`` runs): the server answers while the job runs."""
    port = _free_port()
    env = {**os.environ, **configured, "PYTHONPATH": child_pythonpath(),
           "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port),
                                 "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 90
            while "all strategies done" not in log.read_text(errors="replace"):
                assert proc.poll() is None, log.read_text(errors="replace")
                assert time.monotonic() < deadline, log.read_text(errors="replace")
                time.sleep(0.3)
            # the warm-up job can finish before the server has bound its port (a fast corpus, a loaded
            # machine): wait for the server's own answer rather than a moment
            deadline = max(deadline, time.monotonic() + 60)
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as r:
                        assert r.status == 200
                        break
                except (ConnectionError, urllib.error.URLError):
                    assert proc.poll() is None, log.read_text(errors="replace")
                    assert time.monotonic() < deadline, log.read_text(errors="replace")
                    time.sleep(0.3)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    text = log.read_text(errors="replace")
    assert "ragdiag: strategy E ready after" in text and "ragdiag: strategy A ready after" in text
    assert "missing ScriptRunContext" not in text and "Traceback" not in text
