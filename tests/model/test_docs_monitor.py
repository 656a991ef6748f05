"""``docs/monitor.md`` runs as written: its ``ragdiag monitor`` block prints what the page shows (real model).

The log is made as the page says (``tests/helpers/_monitor_log.py``, 3 broken lines);
the command runs in an empty folder (its store seeded from the shipped index),
and its standard output must be the lines under the ``$`` line. The JSON
excerpt's figures must be the ``--json`` run's, rounded as printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _monitor_log import write_synthetic_log

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "monitor.md"
TRUTH = REPO / "data" / "sklearn-user-guide.truth.json"
COMMAND = "ragdiag monitor E/hybrid --log live.jsonl --off-topic-share 0.32"

pytestmark = pytest.mark.model


def shown_output(text: str, command: str) -> str:
    """The lines under ``$ command`` in its console block."""
    lines = text.splitlines()
    start = lines.index(f"$ {command}") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    return "\n".join(lines[start:end])


def run(folder: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "ragdiag", *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_the_page_shows_what_the_command_prints(tmp_path):
    write_synthetic_log(tmp_path / "live.jsonl", TRUTH, bad_lines=3)
    text = DOC.read_text(encoding="utf-8")
    out = run(tmp_path, *COMMAND.split()[1:])
    assert out.rstrip("\n") == shown_output(text, COMMAND)
    doc = json.loads(run(tmp_path, *COMMAND.split()[1:], "--json"))
    week = doc["periods"][2]
    excerpt = text[text.index('{"period": "2026-W48"'):]
    assert f'"queries": {week["queries"]}' in excerpt
    assert f'"count": {week["refused"]["count"]}, "rate": {week["refused"]["rate"]:.3f}' in excerpt
    assert f'"low_count": {week["predicted"]["low_count"]}, "high_count": {week["predicted"]["high_count"]}' in excerpt
    assert f'"low": {week["predicted"]["low"]:.3f}, "high": {week["predicted"]["high"]:.3f}' in excerpt
    assert f'"direction": "{week["direction"]}"' in excerpt and week["flagged"]
    assert f'"distance": {week["farthest"][0]["distance"]:.3f}' in excerpt
    # the sentences quoted in the prose are the command's
    assert week["sentence"].split(" for ")[0] in text
    flat = " ".join(text.split())
    assert f'only to {doc["expected"]["words"].split("expects ")[1].removesuffix(" refused")}' in flat
    plain = run(tmp_path, *COMMAND.split()[1:-2]).splitlines()[0]
    assert f'the first line reads "{plain}"' in flat
