"""BM25 index build and query: ragdiag vs bm25s and rank_bm25 on the same tokens, side by side in one run.

Run: ``python benchmarks/bench_bm25.py [--sizes 918,91800,1000000] [--repeats 3]``

Every side is given the same tokens (ragdiag's :func:`~ragdiag.retrieval.bm25.tokenize_corpus`
of the texts, so tokenisation is timed once, apart): bm25s receives them as
(token-id lists, vocabulary), rank_bm25 as token lists. 918 chunks are strategy C
of the bundled corpus, 91,800 the same texts repeated 100 times, larger sizes
the synthetic corpus of ``synthetic.py`` (Zipf words, about 75 tokens a chunk).
bm25s uses ``method="lucene"`` in float64, whose scores are ours divided by
``k1 + 1`` (it drops that constant): checked on the queries to 1e-9 relative
before timing, and the top 20 checked equal. rank_bm25 is the subclass with
Lucene's idf (scores equal to ours). Query time is ``top 20`` for every query
(ours: :meth:`~ragdiag.retrieval.bm25.BM25Index.search` with the numpy scorer and with the
compiled one, ``scorer="numba"``, whose result is checked bit for bit equal; bm25s: ``retrieve(k=20)`` with its numpy backend, one thread, and its numba
backend when numba is installed); rank_bm25 scores only a sample (``get_scores``
then a sort). Build and query figures are medians of ``--repeats`` runs.
Never run in CI.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import median_time  # noqa: E402

K = 20


def corpus_of(n: int) -> tuple[list[str], list[str]]:
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import default_truth_path, load_truth
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus

    corpus = load_corpus()
    truth = load_truth(default_truth_path(corpus.root), corpus)
    queries = [q.text for q in truth.queries]
    base = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES["C"])]
    if n % len(base) == 0 and n <= 100 * len(base):
        return base * (n // len(base)), queries
    from synthetic import make_kb

    kb = make_kb(n, 100)
    return kb.texts, [t for _, t, _ in kb.queries]


def run(n: int, repeats: int, rank_sample: int, numba_up_to: int = 10**12) -> dict:
    import bm25s
    from rank_bm25 import BM25Okapi

    from ragdiag.retrieval.base import QueryBatch
    from ragdiag.retrieval.bm25 import BM25Retriever, tokenize, tokenize_corpus

    texts, queries = corpus_of(n)
    out: dict = {"chunks": len(texts), "queries": len(queries)}
    t = time.perf_counter()
    tokens = tokenize_corpus(texts)
    out["tokenize_s"] = time.perf_counter() - t
    del texts
    ids_lists = [a.tolist() for a in np.split(tokens.ids, tokens.indptr[1:-1])]
    vocab = dict(tokens.vocab)
    q_tokens = [[tok for tok in tokenize(q) if tok in vocab] for q in queries]

    def ours_build():
        return BM25Retriever(tokens)

    def bm25s_build():
        r = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64")
        r.index((ids_lists, vocab), show_progress=False)
        return r

    out["ours_build_s"] = median_time(ours_build, repeats)
    out["bm25s_build_s"] = median_time(bm25s_build, repeats)
    ours, theirs = ours_build(), bm25s_build()
    # Same scores (bm25s's lucene drops the constant k1 + 1) and the same top 20.
    q_ids = [[vocab[t] for t in qt] for qt in q_tokens]
    worst = 0.0
    for q, qi in zip(queries[:20], q_ids[:20]):
        a = ours.index.query_scores(q)
        b = theirs.get_scores_from_ids(qi) * 2.2 if qi else np.zeros(len(a))
        worst = max(worst, float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-12))))
    out["max_rel_diff_bm25s"] = worst
    batch = QueryBatch(tuple(queries))
    found = ours.index.search(batch.texts, depth=K, scorer="numpy")
    out["ours_query_ms"] = median_time(lambda: ours.index.search(batch.texts, depth=K, scorer="numpy"),
                                       repeats) / len(queries) * 1e3
    # The compiled scorer (numba; compiled, or loaded from numba's cache, before timing): the same result.
    compiled = ours.index.search(batch.texts, depth=K, scorer="numba")
    if ours.index.scorer_used == "numba":
        out["ours_numba_same"] = bool(np.array_equal(compiled.order, found.order)
                                      and compiled.scores.tobytes() == found.scores.tobytes())
        out["ours_numba_query_ms"] = median_time(lambda: ours.index.search(batch.texts, depth=K, scorer="numba"),
                                                 repeats) / len(queries) * 1e3
    else:
        out["ours_numba_same"], out["ours_numba_query_ms"] = None, float("nan")
    runnable = [qt for qt in q_tokens if qt]
    out["bm25s_query_ms"] = median_time(
        lambda: theirs.retrieve(runnable, k=K, n_threads=1, show_progress=False), repeats) / len(runnable) * 1e3
    docs, sc = theirs.retrieve(runnable, k=K, n_threads=1, show_progress=False)
    mine = found.scores[[i for i, qt in enumerate(q_tokens) if qt]]
    out["top_scores_equal_bm25s"] = bool(np.allclose(np.sort(sc, axis=1)[:, ::-1] * 2.2, mine, rtol=1e-9, atol=0))
    del theirs  # before bm25s's numba index: one bm25s index in memory at a time
    try:
        if n > numba_up_to:
            raise ImportError("skipped at this size (--numba-up-to)")
        import numba  # noqa: F401

        fast = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64", backend="numba")
        fast.index((ids_lists, vocab), show_progress=False)
        fast.retrieve(runnable[:2], k=K, n_threads=1, show_progress=False)  # compile outside the clock
        out["bm25s_numba_query_ms"] = median_time(
            lambda: fast.retrieve(runnable, k=K, n_threads=1, show_progress=False), repeats) / len(runnable) * 1e3
        del fast
    except ImportError:
        out["bm25s_numba_query_ms"] = float("nan")
    if n <= 100_000:
        class LuceneBM25Okapi(BM25Okapi):
            def _calc_idf(self, nd):
                for word, freq in nd.items():
                    self.idf[word] = float(np.log1p((self.corpus_size - freq + 0.5) / (freq + 0.5)))

        tok_lists = None
        inv = {v: k for k, v in vocab.items()}
        tok_lists = [[inv[i] for i in doc] for doc in ids_lists]
        t = time.perf_counter()
        ref = LuceneBM25Okapi(tok_lists, k1=1.2, b=0.75)
        out["rank_bm25_build_s"] = time.perf_counter() - t
        sample = q_tokens[:rank_sample]

        def rank_query():
            for qt in sample:
                s = ref.get_scores(qt)
                np.argsort(-s, kind="stable")[:K]

        out["rank_bm25_query_ms"] = median_time(rank_query, max(1, repeats // 2)) / len(sample) * 1e3
        a = ours.index.scores(queries[:rank_sample])
        b = np.stack([ref.get_scores(qt) for qt in sample])
        out["max_rel_diff_rank_bm25"] = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12)))
    else:
        out["rank_bm25_build_s"] = out["rank_bm25_query_ms"] = out["max_rel_diff_rank_bm25"] = float("nan")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="918,91800", help="comma-separated chunk counts (918 and multiples up to "
                    "91,800: the bundled texts; others: synthetic)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--repeats-large", type=int, default=1, help="repeats above 100,000 chunks")
    ap.add_argument("--rank-sample", type=int, default=10, help="queries rank_bm25 scores (it is slow)")
    ap.add_argument("--numba-up-to", type=int, default=10**12,
                    help="time bm25s's numba backend up to this size (it builds the index a second time)")
    args = ap.parse_args()
    print(f"# BM25 build and top {K} ({platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; "
          f"medians of {args.repeats}, {args.repeats_large} above 100,000 chunks)\n")
    print("| chunks | tokenise s | build s: ours | bm25s | rank_bm25 | build ratio bm25s/ours | "
          "query ms: ours numpy | ours numba | bm25s numpy | bm25s numba | rank_bm25 | "
          "query ratio bm25s numpy/ours numpy | bm25s numba/ours numba | bm25s numba/ours numpy | "
          "max rel. diff vs bm25s (x2.2) | vs rank_bm25 | top 20 equal | ours numba = numpy (bits) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        r = run(n, args.repeats if n <= 100_000 else args.repeats_large, args.rank_sample, args.numba_up_to)
        print(f"| {r['chunks']:,} | {r['tokenize_s']:.2f} | {r['ours_build_s']:.3f} | {r['bm25s_build_s']:.3f} | "
              f"{r['rank_bm25_build_s']:.2f} | {r['bm25s_build_s'] / r['ours_build_s']:.1f}x | "
              f"{r['ours_query_ms']:.3f} | {r['ours_numba_query_ms']:.3f} | {r['bm25s_query_ms']:.3f} | "
              f"{r['bm25s_numba_query_ms']:.3f} | {r['rank_bm25_query_ms']:.2f} | "
              f"{r['bm25s_query_ms'] / r['ours_query_ms']:.2f}x | "
              f"{r['bm25s_numba_query_ms'] / r['ours_numba_query_ms']:.2f}x | "
              f"{r['bm25s_numba_query_ms'] / r['ours_query_ms']:.2f}x | {r['max_rel_diff_bm25s']:.1e} | "
              f"{r['max_rel_diff_rank_bm25']:.1e} | {r['top_scores_equal_bm25s']} | {r['ours_numba_same']} |",
              flush=True)
    print(f"\nload at the end: {os.getloadavg()[0]:.1f}; peak RSS "
          f"{__import__('resource').getrusage(__import__('resource').RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
