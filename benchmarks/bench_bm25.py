"""BM25 per-query latency: ragdiag's sparse matrix product vs rank_bm25's BM25Okapi.

Run: ``python benchmarks/bench_bm25.py [--repeats 5] [--scale 100]``

Both sides score the same chunks (strategy C's embedded texts of the bundled
corpus, and a synthetic scale-up that repeats them ``--scale`` times) for the
ground-truth queries. The rank_bm25 side is a subclass with Lucene's idf, so
the scores are the same (checked here to 1e-9 relative before timing).
Figures are medians of ``--repeats`` runs, all measured in this one process.
"before" is the code the evaluation ran before blocks (the dense (queries x
chunks) score matrix, written out here verbatim); "all scores" is
``BM25Index.scores`` today (the same kernel through the block scorer, one
block; bit-identical, checked); "top 20 by blocks" is what the
evaluation runs now (``BM25Retriever.search``: blocks of chunks, top 20 and
their scores, checked equal to the first 20 of the full stable sort).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rank_bm25 import BM25Okapi  # noqa: E402

from ragdiag.index.chunking import STRATEGIES, chunk_corpus  # noqa: E402
from ragdiag.documents.corpus import load_corpus  # noqa: E402
from ragdiag.core.defaults import TOP  # noqa: E402
from ragdiag.retrieval.bm25 import BM25Retriever
from ragdiag.retrieval.base import QueryBatch, top_k_desc  # noqa: E402
from ragdiag.retrieval.bm25 import tokenize  # noqa: E402
from ragdiag.documents.truth import default_truth_path, load_truth  # noqa: E402


class LuceneBM25Okapi(BM25Okapi):
    """rank_bm25 with idf = ln(1 + (N - n + 0.5) / (n + 0.5)) (no epsilon floor needed: always > 0)."""

    def _calc_idf(self, nd):
        for word, freq in nd.items():
            self.idf[word] = float(np.log1p((self.corpus_size - freq + 0.5) / (freq + 0.5)))


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run(texts: list[str], queries: list[str], repeats: int, ref_queries: int) -> dict:
    retriever = BM25Retriever(texts)
    ours = retriever.index
    ref = LuceneBM25Okapi([tokenize(t) for t in texts], k1=1.2, b=0.75)
    sample = queries[:ref_queries]
    mine = ours.scores(sample)
    theirs = np.stack([ref.get_scores(tokenize(q)) for q in sample])
    rel = float(np.max(np.abs(mine - theirs) / np.maximum(np.abs(theirs), 1e-12)))
    batch = QueryBatch(tuple(queries))
    full = ours.scores(queries)
    found = retriever.bounded_search(batch, depth=TOP)
    top = top_k_desc(full, TOP)
    assert np.array_equal(found.order, top) and np.array_equal(found.scores, np.take_along_axis(full, top, axis=1))
    def dense_product():  # the kernel before blocks: (documents x used terms) @ dense (used terms x queries)
        qm = ours.query_matrix(queries).tocsc()
        used = np.flatnonzero(np.diff(qm.indptr))
        return (ours.weights[used].T.tocsr() @ qm[:, used].toarray().T).T

    assert np.array_equal(dense_product(), full)
    t_before = median_time(dense_product, repeats) / len(queries)
    t_ours = median_time(lambda: ours.scores(queries), repeats) / len(queries)
    t_blocks = median_time(lambda: retriever.bounded_search(batch, depth=TOP), repeats) / len(queries)
    t_ref = median_time(lambda: [ref.get_scores(tokenize(q)) for q in sample], max(1, repeats // 2)) / len(sample)
    return {"chunks": len(texts), "before_ms": t_before * 1e3, "speedup_before": t_ref / t_before, "ours_ms": t_ours * 1e3, "blocks_ms": t_blocks * 1e3, "rank_bm25_ms": t_ref * 1e3,
            "speedup": t_ref / t_ours, "speedup_blocks": t_ref / t_blocks, "max_rel_diff": rel}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", type=int, default=100, help="synthetic scale-up factor (940 -> ~94,000 chunks)")
    args = ap.parse_args()
    corpus = load_corpus()
    truth = load_truth(default_truth_path(corpus.root), corpus)
    texts = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES["C"])]
    queries = [q.text for q in truth.queries]
    print(f"# BM25 per query ({platform.processor() or platform.machine()}, {len(queries)} queries, "
          f"median of {args.repeats})\n")
    print(f"| chunks | before: all scores ms/query | now: all scores ms/query | "
          f"now: top {TOP} by blocks ms/query | rank_bm25 ms/query | speed-up before | speed-up (all scores) | "
          "speed-up (blocks) | max rel. score diff |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, ts, n_ref in (("base", texts, len(queries)), ("scaled", texts * args.scale, 10)):
        r = run(ts, queries, args.repeats, n_ref)
        print(f"| {r['chunks']:,} | {r['before_ms']:.3f} | {r['ours_ms']:.3f} | {r['blocks_ms']:.3f} | "
              f"{r['rank_bm25_ms']:.2f} | {r['speedup_before']:,.0f}x | {r['speedup']:,.0f}x | "
              f"{r['speedup_blocks']:,.0f}x | {r['max_rel_diff']:.1e} |")


if __name__ == "__main__":
    main()
