"""``eval --engine ray`` end to end: ``per_query.csv`` row for row the default engine's, on the tiny corpus (FAKE
encoder) and on the bundled corpus (the real model). Each CLI run starts its own local Ray instance.

Marked ``ray`` and skipped, with the reason, when Ray is not installed (``pip install -r requirements-ray.txt``).
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ray_local import PYTHONPATH, RAY_ENV, REPO

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="ray is not installed (optional: pip install -r requirements-ray.txt)"),
]


def _per_query(folder: Path) -> list[dict]:
    with open(folder / "per_query.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_eval_engine_ray_gives_the_default_engine_results(tiny_folder, tmp_path):
    """``eval --engine ray`` end to end on the tiny corpus (FAKE encoder: plumbing), against the default engine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDIAG_")}
    env.update(PYTHONPATH=PYTHONPATH, RAGDIAG_ENCODER="fakes:fake_encoder", **RAY_ENV)
    outs = {}
    for engine in ("local", "ray"):
        out = tmp_path / engine
        cmd = [sys.executable, "-m", "ragdiag", "eval", "--corpus", str(tiny_folder), "--strategies", "C,E",
               "--retrievers", "dense,bm25,hybrid", "--cache", str(tmp_path / f"store-{engine}"), "--engine", engine,
               "--ray-actors", "2", "--out", str(out)]
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        outs[engine] = _per_query(out)
    assert outs["ray"] == outs["local"] and len(outs["ray"]) > 0


@pytest.mark.model
def test_eval_engine_ray_searches_the_bundled_corpus_as_one_process(tmp_path):
    """``eval --engine ray`` on the bundled corpus (every strategy; dense, bm25, hybrid on 2 search actors):
    per_query.csv row for row the default engine's. One store: the second run embeds nothing."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDIAG_")}
    env.update(PYTHONPATH=str(REPO), **RAY_ENV)
    outs = {}
    for engine in ("local", "ray"):
        out = tmp_path / engine
        cmd = [sys.executable, "-m", "ragdiag", "eval", "--retrievers", "dense,bm25,hybrid", "--cache",
               str(tmp_path / "store"), "--engine", engine, "--ray-actors", "2", "--out", str(out)]
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        outs[engine] = _per_query(out)
    assert outs["ray"] == outs["local"] and len(outs["ray"]) > 0
