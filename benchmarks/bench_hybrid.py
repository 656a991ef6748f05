"""Hybrid (RRF over top pools) against the cost of its inputs, dense and BM25 search, side by side in one run.

Run: ``python benchmarks/bench_hybrid.py [--sizes 100000,1000000] [--queries 100] [--old-up-to 100000]``

The synthetic corpus of ``synthetic.py`` (random unit vectors on disk, Zipf
texts; the needle chunks planted). For each size: BM25 index, then the
bounded search of dense, BM25 and hybrid for every query (top 20 and the
needle's rank), timed in this one process; the ratio is hybrid / (dense + BM25).
Up to ``--old-up-to`` chunks the fusion of full rankings (what hybrid ran before)
is timed too and its results checked identical (order, scores, needle ranks).
Never run in CI.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def one(n: int, n_queries: int, old: bool, workdir: str) -> dict:
    from synthetic import make_kb, write_vectors

    from ragdiag.core.defaults import TOP
    from ragdiag.retrieval.base import QueryBatch
    from ragdiag.retrieval.bm25 import BM25Retriever
    from ragdiag.retrieval.dense import DenseRetriever
    from ragdiag.retrieval.hybrid import HybridRetriever
    from ragdiag.retrieval.vectors import VectorFile

    kb = make_kb(n, n_queries)
    path = os.path.join(workdir, f"v{n}.npy")
    qv = write_vectors(path, kb)
    dense = DenseRetriever(VectorFile(path))
    t = time.perf_counter()
    bm25 = BM25Retriever(kb.texts)
    build = time.perf_counter() - t
    batch = QueryBatch(tuple(t for _, t, _ in kb.queries), qv)
    targets = [kb.holders[qid] for _, _, qid in kb.queries]
    hybrid = HybridRetriever([dense, bm25])
    out = {"chunks": n, "queries": len(batch), "bm25_build_s": build}
    found = {}
    for name, r in (("dense", dense), ("bm25", bm25), ("hybrid", hybrid)):
        t = time.perf_counter()
        found[name] = r.bounded_search(batch, depth=TOP, targets=targets)
        out[f"{name}_s"] = time.perf_counter() - t
    out["ratio"] = out["hybrid_s"] / (out["dense_s"] + out["bm25_s"])
    if old:
        t = time.perf_counter()
        before = hybrid._bounded_full(batch, depth=TOP, targets=targets, budget=1 << 22)
        out["old_hybrid_s"] = time.perf_counter() - t
        h = found["hybrid"]
        out["identical"] = bool(np.array_equal(h.order, before.order) and np.array_equal(h.scores, before.scores)
                                and np.array_equal(h.target_rank, before.target_rank))
    else:
        out["old_hybrid_s"], out["identical"] = float("nan"), None
    out["needle_in_top20"] = float(np.mean((found["hybrid"].target_rank > 0) & (found["hybrid"].target_rank <= TOP)))
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--old-up-to", type=int, default=100_000, help="time the full-ranking fusion up to this size")
    args = ap.parse_args()
    print(f"# Hybrid vs its inputs ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})\n")
    print("| chunks | queries | dense s | BM25 s | hybrid s | hybrid / (dense + BM25) | before: full fusion s | "
          "identical to before | hybrid needle in top 20 | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as d:
        for n in (int(s) for s in args.sizes.split(",")):
            r = one(n, args.queries, n <= args.old_up_to, d)
            print(f"| {r['chunks']:,} | {r['queries']} | {r['dense_s']:.2f} | {r['bm25_s']:.2f} | {r['hybrid_s']:.2f} | "
                  f"{r['ratio']:.2f}x | {r['old_hybrid_s']:.2f} | {r['identical']} | {r['needle_in_top20']:.2f} | "
                  f"{r['peak_rss_mb']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
