"""``--engine ray``: chunks embedded by Ray Data actors give exactly the in-process vectors.

Each test starts a local Ray instance (2 CPUs) and shuts it down; marked ``ray``
(left out of the fast selection) and skipped, with the reason, when Ray is not
installed (``pip install -r requirements-ray.txt``).
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="ray is not installed (optional: pip install -r requirements-ray.txt)"),
]

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


@pytest.fixture
def local_ray():
    import ray

    yield {"env_vars": {"PYTHONPATH": os.pathsep.join([str(TESTS), str(REPO)])}}
    ray.shutdown()


@pytest.mark.model
def test_ray_vectors_are_the_in_process_vectors(corpus, encoder, local_ray, tmp_path):
    """A subset of the bundled corpus (60 chunks of strategy C), the real model, through the store both ways."""
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus
    from ragdiag.index.ray_engine import RayEncoder
    from ragdiag.index.store import Store

    texts = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES["C"])[:60]]
    ray_encoder = RayEncoder(encoder, actors=2, runtime_env=local_ray)
    assert ray_encoder.stamp == encoder.stamp  # the store keys both by the same stamp
    with Store(tmp_path / "ray") as a, Store(tmp_path / "local") as b:
        on_ray = a.embed(ray_encoder, texts, commit_every=25)
        in_process = b.embed(encoder, texts, commit_every=25)
        assert on_ray.computed == in_process.computed == len(set(texts))
        np.testing.assert_array_equal(on_ray.vectors, in_process.vectors)
        # Resumes from what is stored: nothing is recomputed.
        assert a.embed(ray_encoder, texts, commit_every=25).computed == 0


def _per_query(folder: Path) -> list[dict]:
    with open(folder / "per_query.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_eval_engine_ray_gives_the_default_engine_results(tiny_folder, tmp_path):
    """``eval --engine ray`` end to end on the tiny corpus (FAKE encoder: plumbing), against the default engine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDIAG_")}
    env.update(PYTHONPATH=os.pathsep.join([str(TESTS), str(REPO)]), RAGDIAG_ENCODER="fakes:fake_encoder")
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
