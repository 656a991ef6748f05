"""BM25's tokenizing of a corpus: ``tokenize_corpus`` against the former text-by-text pass, side by side.

Run: ``python benchmarks/bench_tokenize.py [--chunks 1000000] [--repeats 2]``

The synthetic corpus of :mod:`synthetic` (about 75 tokens, 500 ASCII characters per chunk),
and the bundled corpus's strategy E chunks (English with some non-ASCII). Each round
times :func:`ragdiag.retrieval.bm25._tokenize_corpus_per_text` (:func:`~ragdiag.retrieval.bm25.tokenize`
text by text, ids through one dict: the tokenizer before this change) and then
:func:`~ragdiag.retrieval.bm25.tokenize_corpus` on the same texts; medians of wall and CPU
seconds, their ratio, and whether the tokens, offsets and vocabulary are identical.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_kb  # noqa: E402
from ragdiag.retrieval.bm25 import _tokenize_corpus_per_text, tokenize_corpus  # noqa: E402


def clocked(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def compare(label: str, texts: list[str], repeats: int) -> None:
    tokenize_corpus(texts[:100])  # imports (pyarrow) outside the timing
    runs = {"text by text (before)": _tokenize_corpus_per_text, "tokenize_corpus (now)": tokenize_corpus}
    wall = {k: [] for k in runs}
    cpu = {k: [] for k in runs}
    outs = {}
    for _ in range(repeats):
        for name, fn in runs.items():
            w, c, outs[name] = clocked(lambda: fn(texts))
            wall[name].append(w)
            cpu[name].append(c)
    a, b = outs.values()
    same = (np.array_equal(a.ids, b.ids) and np.array_equal(a.indptr, b.indptr)
            and list(a.vocab.items()) == list(b.vocab.items()))
    before, now = runs
    mw = {k: statistics.median(v) for k, v in wall.items()}
    mc = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"| {label} | {len(texts):,} | {len(a.ids):,} | {mw[before]:.2f} / {mc[before]:.2f} | "
          f"{mw[now]:.2f} / {mc[now]:.2f} | {mw[before] / mw[now]:.2f} / {mc[before] / mc[now]:.2f} | "
          f"{'identical' if same else 'DIFFERENT'} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chunks", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args()
    load = os.getloadavg()
    print(f"# BM25 tokenizing ({os.cpu_count()} CPUs; `uptime` load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"at the start; {args.repeats} rounds, alternated, medians)\n")
    print("| corpus | chunks | tokens | before: wall / CPU s | now: wall / CPU s | before / now (wall / CPU) | tokens |")
    print("|---|---:|---:|---:|---:|---:|---|")
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus

    bundled = [c.embed_text for c in chunk_corpus(load_corpus(ROOT / "data" / "sklearn-user-guide"), STRATEGIES["E"])]
    compare("bundled, strategy E", bundled, max(args.repeats, 3))
    compare("synthetic", make_kb(args.chunks, seed=0).texts, args.repeats)
    print(f"\n`uptime` load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
