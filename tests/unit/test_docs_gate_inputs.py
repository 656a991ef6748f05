"""``docs/gate-inputs-and-writes.md`` cannot drift: every ``$ python -m ragdiag ...`` line of its console block
is run (in a folder laid out as the page says; FAKE encoder) and its stderr line and exit code compared, and the
Python example is run too."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path

import pytest

from heldout import make_heldout, run

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "gate-inputs-and-writes.md"


def _commands() -> list[tuple[list[str], list[str], int]]:
    block = PAGE.read_text(encoding="utf-8").split("```console", 1)[1].split("```", 1)[0]
    out, current = [], None
    for line in block.strip().splitlines():
        if line.startswith("$ python -m ragdiag "):
            argv = line.removeprefix("$ python -m ragdiag ").split("; echo")[0].split()
            current = (argv, [])
        elif line.startswith("exit "):
            out.append((current[0], current[1], int(line.split()[1])))
        else:
            current[1].append(line)
    return out


@pytest.fixture
def laid_out(tmp_path, monkeypatch, capsys):
    """``run`` (an `eval --out` folder), ``nan-cut``, ``fifo`` and ``notes.md``, as the page describes them."""
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    folder, truth = make_heldout(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "eval", "--corpus", folder, "--truth", truth, "--no-cache", "--strategies", "A,C",
                       "--retrievers", "dense", "--out", "run")
    assert code == 0, err
    shutil.copytree("run", "nan-cut")
    doc = json.loads(Path("nan-cut/summary.json").read_text())
    doc["gate"]["cut"] = math.nan
    Path("nan-cut/summary.json").write_text(json.dumps(doc))
    shutil.copytree("run", "fifo")
    os.unlink("fifo/summary.json")
    os.mkfifo("fifo/summary.json")
    Path("notes.md").write_text("my notes\n")
    return tmp_path


def test_the_page_shows_six_commands():
    assert len(_commands()) == 6


def test_every_command_of_the_page_prints_what_it_shows(laid_out, capsys):
    for argv, lines, code in _commands():
        got, out, err = run(capsys, *argv)
        shown = [ln for ln in re.split(r"[\r\n]", err) if ln.startswith(("error:", "wrote "))]
        assert (got, shown) == (code, lines), argv


def test_the_python_example_raises_as_shown(laid_out):
    from ragdiag.testing import assert_no_regression

    text = PAGE.read_text(encoding="utf-8")
    shown = text.split("```python", 1)[1].split("```", 1)[0].strip().splitlines()[-1]
    with pytest.raises(ValueError) as exc:
        assert_no_regression("run", "run", config="C/dense", cut=float("nan"))
    assert f"{type(exc.value).__module__}.{type(exc.value).__name__}: {exc.value}" == shown
