"""``ragdiag dashboard``: the command line and environment it serves the app with, and a real start from elsewhere."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from processes import child_pythonpath

from ragdiag.cli.dashboard import dashboard_command, streamlit_flags
from ragdiag.cli.parser import main

REPO = Path(__file__).resolve().parents[2]


def _args(**kw):
    base = dict(corpus=None, truth=None, roots=None, baseline=None, history=None, cache=None, locked=False,
                no_warm=False, address=None, port=None)
    return argparse.Namespace(**{**base, **kw})


def test_options_become_the_apps_variables_and_the_shipped_settings_flags(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    command, env = dashboard_command(_args(corpus="kb", history="h.sqlite", locked=True, no_warm=True, port=8600),
                                     REPO)
    assert command[:3] == [sys.executable, "-m", "ui.serve"]
    assert env["RAGDIAG_CORPUS"] == str(tmp_path / "kb") and env["RAGDIAG_HISTORY"] == str(tmp_path / "h.sqlite")
    assert env["RAGDIAG_LOCKED"] == "1" and env["RAGDIAG_WARM"] == "0" and env["PYTHONPATH"] == str(REPO)
    # every setting of the app's .streamlit/config.toml, then the port: the same server from any folder
    assert command[3:-1] == streamlit_flags(REPO / ".streamlit" / "config.toml")
    assert "--server.headless=true" in command and "--client.toolbarMode=viewer" in command
    assert command[-1] == "--server.port=8600"


@pytest.mark.parametrize("argv, message", [(["--port", "70000"], "--port must be between 1 and 65535"),
                                           (["--corpus", "no/such/folder"], "does not exist")])
def test_bad_options_exit_2(capsys, argv, message):
    assert main(["dashboard", *argv]) == 2
    assert message in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # starts Streamlit: about 10 s
def test_serves_from_another_folder_answers_the_health_check_and_stops_on_sigterm(tmp_path):
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAGDIAG_ENCODER": "fakes:fake_encoder"}
    env["PYTHONPATH"] = child_pythonpath()
    proc = subprocess.Popen([sys.executable, "-m", "ragdiag", "dashboard", "--no-warm", "--port", str(port)],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, body = time.monotonic() + 90, ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    body = r.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert body == "ok"
    finally:
        proc.send_signal(signal.SIGTERM)  # the server itself (exec): it stops, nothing is left behind
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
            raise AssertionError("the server did not stop on SIGTERM")
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
