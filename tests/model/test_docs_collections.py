"""The commands of docs/collections.md and docs/slices.md, run: the pages cannot drift.

The fast test runs every command with the FAKE encoder and checks the lines that do not depend on the
model (headlines, notes, files written, table headers); the ``model`` test runs them with all-MiniLM-L6-v2
and checks every line of the shown output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from processes import child_pythonpath

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "collections.md", ROOT / "docs" / "slices.md"]
BLOCK = re.compile(r"```console\n\$ (python -m [^\n]+)\n(.*?)```", re.S)
STABLE = ("collection ", "The judgments", "This collection", "wrote ", "evaluate it with", "ranked ", "config ",
          "slice ", "slices of ", "(95% intervals", "(each slice")


def _commands():
    """``(command, shown output lines)`` of every console block, in page order (collections first)."""
    out = []
    for page in PAGES:
        for cmd, shown in BLOCK.findall(page.read_text(encoding="utf-8")):
            if " gate " in cmd:  # gate needs two kept runs; tests/slow/test_slices.py runs its --by tag
                continue
            out.append((cmd, [line for line in shown.splitlines() if line.strip()]))
    return out


def _run(tmp_path, cmd: str, env: dict) -> str:
    proc = subprocess.run([sys.executable, *cmd.split()[1:]], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, f"{cmd}\n{proc.stderr[-2000:]}"
    return proc.stdout


def _env(tmp_path, fake: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": child_pythonpath(),
           "RAGDIAG_CACHE": str(tmp_path / "cache")}
    if fake:
        env["RAGDIAG_ENCODER"] = "fakes:fake_encoder"
        env["RAGDIAG_NO_SNAPSHOT"] = "1"  # the shipped index belongs to MiniLM
    else:
        env.pop("RAGDIAG_ENCODER", None)
    return env


def test_the_pages_show_commands():
    cmds = [c for c, _ in _commands()]
    assert cmds[0] == "python -m ragdiag.documents.collections.examples examples"
    assert any("--collection beir:" in c for c in cmds) and any(c.startswith("python -m ragdiag convert") for c in cmds)
    assert sum("slices" in c for c in cmds) == 3


@pytest.mark.slow  # about a minute: every command of both pages
def test_every_command_runs_and_prints_the_stable_lines(tmp_path):
    env = _env(tmp_path, fake=True)
    for cmd, shown in _commands():
        printed = {" ".join(line.split()) for line in _run(tmp_path, cmd, env).splitlines()}
        for line in shown:
            if line.startswith(STABLE):
                stable = " ".join(line.split("; all:")[0].split())  # the overall rate after it is the model's
                assert any(p.startswith(stable) for p in printed), f"{cmd}: {stable!r} not printed"


@pytest.mark.model
@pytest.mark.slow
def test_every_command_prints_what_the_page_shows(tmp_path):
    env = _env(tmp_path, fake=False)
    for cmd, shown in _commands():
        if not shown:  # a block that shows only the command: the FAKE run above runs it
            continue
        printed = _run(tmp_path, cmd, env).splitlines()
        assert [line for line in printed if line.strip()] == shown, cmd
