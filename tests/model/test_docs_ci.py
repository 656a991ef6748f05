"""``docs/ci.md`` runs as written: every ``console`` block, in one empty folder, with the real model.

Blocks fenced as ``toml`` or ``python`` whose first line is ``# PATH`` are
written to PATH first (the page's ``pyproject.toml`` and test file). Each
``$ command`` runs in bash in that folder (``export`` lines carry over to the
next commands); its standard output must be the lines shown under it, times
and durations aside. ``ragdiag`` and ``pytest`` are the installed commands a
reader has: here, small scripts that run ``python -m ragdiag`` and ``python -m
pytest -p ragdiag.pytest_plugin`` (the plugin's entry point is not installed in
a checkout; ``test_wheel.py`` checks the wheel registers it).

After a change that moves the outputs, regenerate the page's outputs with
``python tests/model/test_docs_ci.py --write`` (then read the diff).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "ci.md"
_FENCE = re.compile(r"^```(\w*)\s*$")
_VOLATILE = [(re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\dZ"), "<time>"),
             (re.compile(r"\b\d+(?:\.\d+)? ?s\b"), "<n> s")]


def blocks(text: str) -> list[tuple[str, int, int]]:
    """``(language, first line, end line)`` of every fenced block (line indexes of the body)."""
    lines, out, open_at, lang = text.splitlines(), [], None, ""
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m and open_at is None:
            open_at, lang = i + 1, m.group(1)
        elif line.strip() == "```" and open_at is not None:
            out.append((lang, open_at, i))
            open_at = None
    return out


def normal(text: str) -> str:
    for pattern, word in _VOLATILE:
        text = pattern.sub(word, text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def _shims(folder: Path) -> dict[str, str]:
    """``ragdiag`` and ``pytest`` commands on PATH, as an installed ragdiag provides them."""
    bin_dir = folder / ".bin"
    bin_dir.mkdir()
    for name, line in (("ragdiag", f'exec {shlex.quote(sys.executable)} -m ragdiag "$@"'),
                       ("pytest", f'exec {shlex.quote(sys.executable)} -m pytest -p ragdiag.pytest_plugin "$@"')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{line}\n")
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGDIAG_", "GITHUB_", "PYTEST_"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(REPO), COLUMNS="120")
    return env


def run_page(folder: Path) -> list[tuple[int, int, str]]:
    """Run the page in ``folder``; return ``(first output line, end line, actual output)`` per command."""
    text = DOC.read_text(encoding="utf-8")
    lines = text.splitlines()
    env = _shims(folder)
    results = []
    for lang, start, end in blocks(text):
        body = lines[start:end]
        name = body[0][2:].strip() if body and body[0].startswith("# ") else ""
        if lang in ("toml", "python") and name and " " not in name:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text("\n".join(body) + "\n", encoding="utf-8")
            continue
        if lang != "console":
            continue
        starts = [i for i in range(start, end) if lines[i].startswith("$ ")]
        for n, i in enumerate(starts):
            command = lines[i][2:]
            stop = starts[n + 1] if n + 1 < len(starts) else end
            if command.startswith("export "):
                for pair in shlex.split(command[len("export "):]):
                    key, _, value = pair.partition("=")
                    env[key] = str(folder / value)
                continue
            proc = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=900)
            results.append((i + 1, stop, proc.stdout))
    return results


@pytest.mark.model
@pytest.mark.slow  # evaluates the bundled corpus (A and E) and gates twice: about a minute
def test_every_command_of_the_page_prints_what_it_shows(tmp_path):
    lines = DOC.read_text(encoding="utf-8").splitlines()
    for first, stop, actual in run_page(tmp_path):
        shown = "\n".join(lines[first:stop])
        assert normal(actual) == normal(shown), f"docs/ci.md line {first}: {lines[first - 1]}"


def write() -> None:
    """Rewrite the page's outputs with what the commands print now."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        results = run_page(Path(tmp))
    for first, stop, actual in reversed(results):
        lines[first:stop] = actual.rstrip("\n").splitlines()
    DOC.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        print(__doc__)
