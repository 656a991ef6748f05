"""The docs cannot drift: every command they show runs, every link resolves, the CLI reference is current.

A fenced ``bash``/``console`` block in a page of ``PAGES`` carries a marker on
the line before it:

* ``<!-- run -->``: each command line is run in process by
  :func:`ragdiag.cli.parser.main`, in a sandbox folder that holds the tiny test
  corpus as ``kb/`` (with ``kb.truth.json``) and as the bundled corpus, the
  repository's ``data/``, a run file ``their-run.jsonl``, and the FAKE encoder
  (plumbing: the commands and options exist and run through; the numbers are
  the real model's in the tests of each command);
* ``<!-- run: setup -->``: ``./run.sh`` lines, checked against ``run.sh``'s
  commands and the dashboard's options;
* ``<!-- not run: why -->``: what a test cannot run (a server, a cluster, an
  install), with the test that covers it instead.
"""

from __future__ import annotations

import os

import json
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The pages whose commands are run (a new page adds itself here).
PAGES = ("README.md", "docs/concepts.md", "docs/dashboard.md", "docs/cli.md", "docs/ci-gate.md",
         "docs/statistics.md", "docs/serving.md", "docs/scale.md", "docs/extending.md", "docs/architecture.md",
         "docs/CONTRIBUTING.md", "docs/cut.md", "docs/chunking.md")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
MARKER = re.compile(r"<!-- (run|run: setup|run: model|not run: .+?) -->\s*$")
#: Exit statuses that are a command's verdict, not an error.
VERDICTS = {"gate": {0, 1, 3}, "truth": {0, 1}}


def _blocks():
    """``(page, line, marker, text)`` of every bash/console block of ``PAGES``."""
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m.group(1) not in ("bash", "console", "sh", "shell"):
                continue
            before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = MARKER.search(before)
            yield page, text[: m.start()].count("\n") + 1, marker.group(1) if marker else None, m.group(2)


BLOCKS = list(_blocks())


def _commands(block: str) -> list[list[str]]:
    """The block's command lines as argument lists (``\\`` continues a line; ``#`` starts a comment)."""
    out = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words:
            out.append(words)
    return out


def test_readme_is_short_and_every_page_exists():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "./run.sh dashboard" in readme and "./run.sh test" in readme
    for page in PAGES:
        assert (ROOT / page).is_file(), page


@pytest.mark.parametrize("page", PAGES)
def test_every_local_link_resolves(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert ((ROOT / page).parent / target).exists(), f"{page}: {target} does not exist"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", PAGES)
def test_every_anchor_names_a_heading(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([^)#\s]*\.md)?#([^)\s]+)\)", text):
        heading_page = (ROOT / page).parent / target if target else ROOT / page
        body = FENCE.sub("", heading_page.read_text(encoding="utf-8"))
        slugs = {_slug(h) for h in re.findall(r"^#+ (.+)$", body, re.M)}
        assert anchor in slugs, f"{page}: #{anchor} is no heading of {target or page}"


def test_every_command_block_is_marked():
    unmarked = [f"{page}:{line}" for page, line, marker, _ in BLOCKS if marker is None]
    assert not unmarked, f"mark these blocks <!-- run -->, <!-- run: setup --> or <!-- not run: why -->: {unmarked}"
    assert sum(marker == "run" for _, _, marker, _ in BLOCKS) >= 6


def test_the_cli_reference_is_current():
    import subprocess
    import sys

    # in a fresh process: a test that imported tests/helpers/plugin_example.py registered strategy P in this one
    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('cli_docs', 'scripts/cli_docs.py'); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
            "sys.stdout.write(m.render(open('docs/cli.md', encoding='utf-8').read()))")
    rendered = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                              env={k: v for k, v in os.environ.items() if not k.startswith("RAGDIAG_")}).stdout
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert rendered == page, "docs/cli.md is not current: run python scripts/cli_docs.py"
    assert "### `truth stats`" in page and "--family-size" in page


def _run_sh() -> tuple[set[str], set[str]]:
    """``run.sh``'s commands and the dashboard's own options."""
    text = (ROOT / "run.sh").read_text(encoding="utf-8")
    commands = set(re.findall(r"^  (\w+)\)$", text, re.M))
    dashboard = text[text.index("  dashboard)"): text.index("  test)")]
    return commands, set(re.findall(r"^\s+(--[\w-]+)\)", dashboard, re.M))


@pytest.mark.parametrize(("page", "line", "block"), [(p, n, b) for p, n, m, b in BLOCKS if m == "run: setup"])
def test_setup_commands_are_run_sh_commands(page, line, block):
    commands, options = _run_sh()
    assert {"dashboard", "test", "cli"} <= commands
    for words in _commands(block):
        assert words[0] == "./run.sh" and words[1] in commands, f"{page}:{line}: {words}"
        if words[1] == "dashboard":
            flags = {w for w in words[2:] if w.startswith("--")}
            assert flags <= options, f"{page}:{line}: run.sh dashboard has no {flags - options}"


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A folder where the docs' commands run: ``kb/`` (the tiny corpus, also the bundled one), FAKE encoder."""
    from tiny import TINY_DOCS, TINY_TRUTH
    from ragdiag.documents import corpus

    kb = tmp_path / "kb"
    kb.mkdir()
    for doc_id, text in TINY_DOCS.items():
        (kb / f"{doc_id}.md").write_text(text, encoding="utf-8")
    # 24 far off-topic queries: enough for a conformal cut at a 5% bluff goal (it takes at least 19)
    truth = {**TINY_TRUTH, "ood": [*TINY_TRUTH["ood"], *({"id": f"far{i}", "kind": "far",
                                                          "query": f"orbital mechanics of comet {i}"}
                                                         for i in range(24))]}
    (tmp_path / "kb.truth.json").write_text(json.dumps(truth, indent=1), encoding="utf-8")
    run = [{"query_id": f"{q['id']}:{p}", "hits": [{"text": q["needle"]}]}
           for q in TINY_TRUTH["questions"] for p in q["queries"]]
    (tmp_path / "their-run.jsonl").write_text("\n".join(map(json.dumps, run)) + "\n", encoding="utf-8")
    (tmp_path / "data").symlink_to(ROOT / "data")
    monkeypatch.setattr(corpus, "DEFAULT_CORPUS", kb)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    for name in ("RAGDIAG_PLUGINS", "RAGDIAG_BASELINE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _run_param(page, line, block):
    """A block that measures costs or writes a report takes ~10 s on the FAKE encoder: marked slow."""
    slow = re.search(r"ragdiag (report|cost)\b|cli (report|cost)\b", block)
    return pytest.param(page, line, block, marks=[pytest.mark.slow] if slow else [], id=f"{page}:{line}")


@pytest.mark.parametrize(("page", "line", "block"), [_run_param(p, n, b) for p, n, m, b in BLOCKS if m == "run"])
def test_documented_commands_run(page, line, block, sandbox, capsys):
    from ragdiag.cli.parser import main

    for words in _commands(block):
        if words[:2] == ["./run.sh", "cli"]:
            argv = words[2:]
        elif words[:3] == ["python", "-m", "ragdiag"]:
            argv = words[3:]
        else:
            pytest.fail(f"{page}:{line}: {' '.join(words)} is not a ragdiag command: mark the block <!-- not run: why -->")
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        assert code in VERDICTS.get(argv[0], {0}), f"{page}:{line}: {' '.join(words)} -> {code}\n{err[-2000:]}"
