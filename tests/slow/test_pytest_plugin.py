"""The pytest plugin, used as a team would: a temp project whose tests know only the plugin's fixture.

The project holds its documents, its ground truth, a baseline ``eval --out``
folder and ``[tool.ragdiag]`` in its ``pyproject.toml``; its one test is
``def test_retrieval(ragdiag_check): ragdiag_check.verify()`` and imports
nothing of ragdiag. pytest runs in a child process with ``-p
ragdiag.pytest_plugin`` (an installed wheel registers it through the
``pytest11`` entry point instead, checked by ``test_wheel.py``), the FAKE
encoder, and ``--junitxml``. The regression is the blind chunker of
``_blind.py``: the same configuration, C/dense, with 512-character cuts.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from _blind import BLIND, child_env, evaluate
from heldout import make_heldout

TEST_FILE = '''
def test_retrieval(ragdiag_check):
    ragdiag_check.verify()
'''
PYPROJECT = '''
[tool.ragdiag]
corpus = "heldout"
truth = "heldout.truth.json"
config = "C/dense"
baseline = "ragdiag-baseline"
margin = 0.05
cache = "store"
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    make_heldout(root)
    evaluate(root, root / "ragdiag-baseline")
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_retrieval.py").write_text(TEST_FILE, encoding="utf-8")
    (root / "blind_chunker.py").write_text(BLIND, encoding="utf-8")
    return root


def _pytest(project: Path, name: str, *extra: str, **env: str):
    junit = project / f"{name}.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "ragdiag.pytest_plugin", "-p", "no:cacheprovider",
                           f"--junitxml={junit}", "-q", "tests", *extra], cwd=project,
                          env=child_env(project, **env), capture_output=True, text=True, timeout=600)
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")} if junit.is_file() else {}
    return proc, cases


@pytest.mark.slow  # three pytest sessions in child processes: about 20 s
def test_one_case_per_check_a_warm_second_session_and_a_failing_blind_chunker(project):
    proc, cases = _pytest(project, "first")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    names = ["test_retrieval[destroyed_needles]", "test_retrieval[recall]", "test_retrieval[answered]",
             "test_retrieval[bluffs]"]
    assert list(cases) == names
    assert all(len(c) == 0 or c[0].tag == "system-out" for c in cases.values())  # no failure, no skip
    assert "4 passed" in proc.stdout
    # the second session finds every vector in the store: nothing embedded
    proc, _ = _pytest(project, "second")
    assert proc.returncode == 0
    line = next(x for x in proc.stdout.splitlines() if x.startswith("ragdiag: C/dense evaluated"))
    embedded, total = line.split("; ")[1].split(" chunk vectors")[0].split(" of ")
    assert embedded == "0" and int(total) > 0, line

    # a pull request made the chunker blind: destroyed needles fails, with the lost questions in the message
    proc, cases = _pytest(project, "blind", RAGDIAG_PLUGINS="blind_chunker")
    assert proc.returncode == 1, proc.stdout[-3000:]
    failure = cases["test_retrieval[destroyed_needles]"].find("failure")
    assert failure is not None
    # pytest shortens the message attribute; the element's text holds the whole Markdown
    assert failure.get("message").startswith("Failed: destroyed needles: 0 -> 3; 3 newly destroyed by the chunking")
    message = failure.text
    assert "## ragdiag gate: ❌ fail" in message and "| destroyed | 0 | 3 | ❌ fail |" in message
    for question in ("how many eggs does a queen bee lay", "how far do fresnel lenses bend beams",
                     "when does stoneware vitrify"):
        assert question in message
    assert "chunk boundary at 512" in message


def test_options_are_listed_in_pytest_help(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "ragdiag.pytest_plugin", "--help"], cwd=tmp_path,
                          env=child_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    for option in ("--ragdiag-baseline", "--ragdiag-config", "--ragdiag-corpus", "--ragdiag-truth",
                   "--ragdiag-candidate", "--ragdiag-margin", "--ragdiag-strict", "--ragdiag-cache"):
        assert option in proc.stdout, option


def test_settings_come_from_the_command_line_over_pyproject(tmp_path):
    from ragdiag.pytest_plugin import read_settings

    (tmp_path / "pyproject.toml").write_text(PYPROJECT + 'strict = true\n', encoding="utf-8")
    s = read_settings({"config": "E/hybrid", "margin": None}, tmp_path / "pyproject.toml", tmp_path / "elsewhere")
    assert s.config == "E/hybrid" and s.sources["config"] == "--ragdiag-config"
    assert s.baseline == tmp_path / "ragdiag-baseline" and s.corpus == tmp_path / "heldout"  # beside pyproject
    assert s.margin == 0.05 and s.strict is True and s.cache == tmp_path / "store"
    (tmp_path / "pyproject.toml").write_text('[tool.ragdiag]\nbasline = "x"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="unknown setting.*basline"):
        read_settings({}, tmp_path / "pyproject.toml", tmp_path)


def test_a_missing_baseline_fails_with_what_to_set(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_retrieval.py").write_text(TEST_FILE, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.ragdiag]\nconfig = "C/dense"\n', encoding="utf-8")
    proc, cases = _pytest(tmp_path, "missing", "--ragdiag-candidate", str(tmp_path))
    assert proc.returncode == 1 and len(cases) == 4
    error = cases["test_retrieval[recall]"].find("error")
    assert "ragdiag: no baseline: pass --ragdiag-baseline or set baseline in [tool.ragdiag]" in error.get("message")
