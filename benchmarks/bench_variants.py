"""Dense variants side by side: recall, ms per query and bytes per vector, in one run.

Run: ``python benchmarks/bench_variants.py [--strategy E] [--models minilm,use] [--repeats 5] [--scale 20] [--embed-chunks 50]``

Part 1, the bundled corpus: every variant (model x precision x index) of one
strategy evaluated like any retriever (:func:`ragdiag.evaluation.evaluate.evaluate`, vectors
from the store when ``$RAGDIAG_CACHE`` holds them) and tabled by
:func:`ragdiag.analyses.variants.variant_rows`, as ``ragdiag variants`` does: recall@4 with its
interval, the paired verdict against exact MiniLM, bytes per vector, the ranking's ms per query,
neighbour overlap@4.

Part 2, the same vectors scaled up: the chunk vectors repeated ``--scale``
times with small Gaussian noise (renormalised), so search cost is measured on
a bigger index; no ground truth there, so the quality column is the neighbour
overlap@10 against exact search on the same scaled vectors.

Part 3, the models' embedding cost: ms per chunk for ``--embed-chunks`` chunks of the strategy.
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
from ragdiag.index.chunking import STRATEGIES, chunk_corpus  # noqa: E402
from ragdiag.documents.corpus import load_corpus  # noqa: E402
from ragdiag.core.defaults import TOP  # noqa: E402
from ragdiag.retrieval.base import QueryBatch, Unavailable  # noqa: E402
from ragdiag.retrieval.ann import HNSWParams, neighbour_overlap  # noqa: E402
from ragdiag.documents.truth import default_truth_path, load_truth  # noqa: E402
from ragdiag.retrieval.variant_kinds import VARIANT_KINDS, Variant, build_variant
from ragdiag.analyses.variants import format_variant_rows, variant_names, variant_rows  # noqa: E402
from ragdiag.evaluation.evaluate import evaluate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strategy", default="E")
    ap.add_argument("--models", default="minilm,use")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", type=int, default=20, help="scale-up factor of part 2 (0: skip)")
    ap.add_argument("--embed-chunks", type=int, default=50, help="chunks embedded per model in part 3 (0: skip)")
    args = ap.parse_args()
    from ragdiag.index.encoder.model import Encoder
    from ragdiag.index.store import Store

    corpus = load_corpus()
    truth = load_truth(default_truth_path(corpus.root), corpus)
    encoder = Encoder()
    store = Store(os.environ.get("RAGDIAG_CACHE"))
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    names = list(dict.fromkeys(["dense", *variant_names(models, list(VARIANT_KINDS))]))
    ev = evaluate(corpus, truth, encoder=encoder, strategies=[args.strategy], retrievers=names, store=store,
                  retriever_options={"hnsw": HNSWParams()})
    strategy = next(iter(ev.indexes))
    rows = variant_rows(ev, strategy)
    n_q = len(truth.queries)
    n_chunks = len(ev.indexes[strategy].chunks)
    print(f"# Dense variants, strategy {strategy} ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, {n_chunks} chunks, {n_q} queries; ms per query from the evaluation's ranking)\n")
    print(format_variant_rows(rows))
    for name, reason in ev.unavailable.items():
        print(f"\nunavailable: {name}: {reason}")

    if args.scale > 0:
        rng = np.random.default_rng(20261130)
        base = ev.indexes[strategy].vectors
        big = np.concatenate([base + rng.normal(0, 0.02, base.shape).astype(np.float32) for _ in range(args.scale)])
        big /= np.linalg.norm(big, axis=1, keepdims=True)
        qv = store.embed(encoder, [q.text for q in truth.queries]).vectors
        batch = QueryBatch(tuple(q.text for q in truth.queries), qv)
        exact_dist = 1 - qv @ big.T
        print(f"\n## Scaled: {len(big):,} MiniLM vectors (x{args.scale} with noise), {n_q} queries, "
              f"median of {args.repeats}\n")
        print("| variant | bytes/vector | build s | ms/query | ms/query vs exact | overlap@10 |")
        print("|---|---:|---:|---:|---:|---:|")
        exact_ms = None
        for base_name in VARIANT_KINDS:
            v = Variant(base_name)
            t = time.perf_counter()
            try:
                retr = build_variant(v, big, hnsw=HNSWParams())
            except Unavailable as exc:
                print(f"| {base_name} | unavailable: {exc.reason} | | | | |")
                continue
            build = time.perf_counter() - t if base_name != "dense" else 0.0
            rankings = retr.rank(batch, depth=TOP)
            ms = 1000 * median_time(lambda: retr.rank(batch, depth=TOP), args.repeats) / n_q
            exact_ms = ms if base_name == "dense" else exact_ms
            overlap = neighbour_overlap(np.stack([r.order for r in rankings]), exact_dist, 10).mean()
            bpv = retr.bytes_per_vector
            print(f"| {base_name} | {bpv:.0f} | {build:.2f} | {ms:.2f} | {ms / exact_ms:.2f}x | {overlap:.3f} |")

    if args.embed_chunks <= 0:
        return
    chunks = chunk_corpus(corpus, STRATEGIES[strategy])[: args.embed_chunks]
    texts = [c.embed_text for c in chunks]
    print(f"\n## Embedding cost: {len(texts)} chunks of strategy {strategy}, median of {max(1, args.repeats // 2)}\n")
    print("| model | dims | ms per chunk |")
    print("|---|---:|---:|")
    from ragdiag.index.models import load_encoder

    for m in models:
        try:
            enc = load_encoder(m, default=encoder)
        except Exception as exc:  # noqa: BLE001 - a missing model is reported, not fatal
            print(f"| {m} | unavailable: {exc} | |")
            continue
        enc.encode(texts[:8])  # warm up
        ms = 1000 * median_time(lambda: enc.encode(texts), max(1, args.repeats // 2)) / len(texts)
        print(f"| {m} | {enc.stamp.dim} | {ms:.2f} |")


if __name__ == "__main__":
    main()
