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

HELPERS = Path(__file__).resolve().parents[1] / "helpers"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def local_ray():
    import ray

    yield {"env_vars": {"PYTHONPATH": os.pathsep.join([str(HELPERS), str(REPO)])}}
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
    # One commit for the 60: every encode call is a Ray Data run whose actors each load the model anew (one call
    # instead of three: 53 CPU seconds instead of 62); the same batches both ways, so the same padding and vectors
    every = len(texts)
    with Store(tmp_path / "ray") as a, Store(tmp_path / "local") as b:
        on_ray = a.embed(ray_encoder, texts, commit_every=every)
        in_process = b.embed(encoder, texts, commit_every=every)
        assert on_ray.computed == in_process.computed == len(set(texts))
        np.testing.assert_array_equal(on_ray.vectors, in_process.vectors)
        # Resumes from what is stored: nothing is recomputed.
        assert a.embed(ray_encoder, texts, commit_every=every).computed == 0


def test_an_encoder_actor_that_dies_on_every_batch_fails_the_encode_instead_of_hanging(local_ray):
    """Ray Data restarts a dead actor forever by default: an actor that dies on every batch (FAKE encoder that
    exits: plumbing) would hang the run. ragdiag restarts it ACTOR_RESTARTS times, then the encode raises."""
    from fakes import DyingEncoder

    from ragdiag.index.ray_engine import ACTOR_RESTARTS, RayEncoder

    assert 0 < ACTOR_RESTARTS < 10
    encoder = RayEncoder(DyingEncoder(), actors=1, runtime_env=local_ray)
    with pytest.raises(RuntimeError, match=f"kept dying \\(started again {ACTOR_RESTARTS} times\\)"):
        encoder.encode([f"text {i}" for i in range(8)])


def _per_query(folder: Path) -> list[dict]:
    with open(folder / "per_query.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_eval_engine_ray_gives_the_default_engine_results(tiny_folder, tmp_path):
    """``eval --engine ray`` end to end on the tiny corpus (FAKE encoder: plumbing), against the default engine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDIAG_")}
    env.update(PYTHONPATH=os.pathsep.join([str(HELPERS), str(REPO)]), RAGDIAG_ENCODER="fakes:fake_encoder")
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
    env.update(PYTHONPATH=str(REPO))
    outs = {}
    for engine in ("local", "ray"):
        out = tmp_path / engine
        cmd = [sys.executable, "-m", "ragdiag", "eval", "--retrievers", "dense,bm25,hybrid", "--cache",
               str(tmp_path / "store"), "--engine", engine, "--ray-actors", "2", "--out", str(out)]
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        outs[engine] = _per_query(out)
    assert outs["ray"] == outs["local"] and len(outs["ray"]) > 0


def test_ray_search_80k_synthetic_chunks(local_ray, tmp_path):
    """80,000 synthetic chunks (16-d vectors), 200 queries, 2 search actors: every rank and score of dense,
    BM25 and hybrid is the single process's (bit for bit, so within 1e-6); each actor holds its shard.

    80,000 is the smallest size at which each of the two shards (40,000) is larger than the halo (HALO, 32,768
    chunks) and searched in more than one block: the regime of a large corpus. The one-million-chunk run is a
    benchmark (benchmarks/bench_scale.py), not a test."""
    import ray

    sys.path.insert(0, str(REPO / "benchmarks"))
    from synthetic import make_kb, write_vectors

    from ragdiag.retrieval.base import QueryBatch
    from ragdiag.retrieval.bm25 import BM25Retriever
    from ragdiag.retrieval.dense import DenseRetriever
    from ragdiag.retrieval.hybrid import HybridRetriever
    from ragdiag.retrieval.ray_search import ray_search
    from ragdiag.retrieval.search import search
    from ragdiag.retrieval.sharded import HALO
    from searchworld import assert_same

    n = 80_000
    assert n // 2 > HALO  # each shard longer than its halo: the halo is exercised, not the whole corpus
    kb = make_kb(n, 200)
    qv = write_vectors(tmp_path / "v.npy", kb, dim=16)
    dense, bm25 = DenseRetriever(np.load(tmp_path / "v.npy")), BM25Retriever(kb.texts)
    batch = QueryBatch(tuple(text for _, text, _ in kb.queries), qv)
    targets = [kb.holders[qid] for _, _, qid in kb.queries]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env=local_ray)
    engine = ray_search(2)
    for retriever in (dense, bm25, HybridRetriever([dense, bm25])):
        one, sharded = search(retriever, batch, depth=20, targets=targets), engine.search(retriever, batch, depth=20,
                                                                                           targets=targets)
        assert_same(one, sharded)
        assert (one.target_rank > 0).all()  # every query has its needle ranked: the counts were exercised
    memory = engine.memory()
    for m in memory:
        print(f"search actor pid {m.pid}: chunks [{m.start}, {m.stop}), vectors {m.vector_bytes / 2**20:.1f} MB, "
              f"postings {m.posting_bytes / 2**20:.1f} MB, rows {m.row_bytes / 2**20:.1f} MB, "
              f"resident {m.rss_bytes / 2**20:.0f} MB")
    assert len({m.pid for m in memory}) == 2  # two worker processes
    assert [m.vector_bytes for m in memory] == [(min(n, m.stop + HALO) - m.start) * 16 * 4 for m in memory]
    assert sum(m.posting_bytes for m in memory) < 1.01 * (bm25.index.weights.data.nbytes + bm25.index.weights.indices.nbytes
                                                          + 2 * bm25.index.weights.indptr.nbytes)
