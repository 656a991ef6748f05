"""Sharded search on Ray: 80,000 synthetic chunks on 2 search actors give the single process's ranks and scores.

Starts a local Ray instance (2 CPUs) and shuts it down; marked ``ray`` and skipped, with the reason, when Ray is not
installed (``pip install -r requirements-ray.txt``).
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from ray_local import REPO, local_ray  # noqa: F401 - fixture

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="ray is not installed (optional: pip install -r requirements-ray.txt)"),
]


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
