"""``docs/ground-truth.md`` runs: each ``console`` block's command prints what the page shows (up to its "…")."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ground-truth.md"


def _blocks() -> list[tuple[list[str], list[str]]]:
    out = []
    for block in re.findall(r"```console\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S):
        first, *lines = block.rstrip("\n").split("\n")
        assert first.startswith("$ python -m ragdiag "), first
        shown = lines[: lines.index("…")] if "…" in lines else lines
        out.append((shlex.split(first[len("$ python -m ragdiag "):]), shown))
    return out


BLOCKS = _blocks()


def _run(argv, capsys, monkeypatch):
    from ragdiag.cli.parser import main

    monkeypatch.chdir(ROOT)
    assert main(argv) == 0
    return capsys.readouterr().out.split("\n")


def test_the_page_has_its_commands():
    assert [b[0][:2] for b in BLOCKS] == [["truth", "plan"], ["truth", "draft"], ["truth", "near-miss"]]


@pytest.mark.parametrize("argv, shown", [b for b in BLOCKS if b[0][1] != "plan"], ids=lambda x: " ".join(x[:2])
                         if isinstance(x, list) and x and x[0] == "truth" else None)
def test_commands_without_a_model(argv, shown, capsys, monkeypatch):
    assert _run(argv, capsys, monkeypatch)[: len(shown)] == shown


@pytest.mark.model
def test_the_plan_command(tmp_path, capsys, monkeypatch):
    argv, shown = next(b for b in BLOCKS if b[0][1] == "plan")
    assert _run(argv + ["--cache", str(tmp_path)], capsys, monkeypatch)[: len(shown)] == shown
