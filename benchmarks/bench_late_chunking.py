"""Late chunking against plain embedding of strategy E's chunks on the bundled corpus, side by side in one run.

Run: ``python benchmarks/bench_late_chunking.py [--docs 4] [--repeats 3] [--device cpu]``

Both paths embed the same chunks (strategy E of the first ``--docs`` documents of
the bundled scikit-learn user guide; 0: all 14) with the same
``ragdiag.index.encoder.Encoder``, no store:

* plain: :meth:`Encoder.encode` of each chunk's embedded text (what E does);
* late: :func:`ragdiag.index.late.late_embed`, each document's chunks packed into
  windows of up to 254 wordpieces, one forward pass per window, each chunk
  pooled from its own wordpieces (what E+LATE does).

Rounds alternate the two (plain, then late), so a change of the machine's load
moves both; the table gives each path's median over ``--repeats`` rounds (wall
and this process's CPU seconds, which a busy machine moves less), its chunks/s
and wordpieces read, and the ratio late / plain, of the medians and per round
(the issue asks for at most 1.5). One warm-up round of each is not counted. Never fails: it measures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
warnings.filterwarnings("ignore")

from _common import cpu_name  # noqa: E402
from ragdiag.documents.corpus import Corpus, load_corpus  # noqa: E402
from ragdiag.index.chunking import STRATEGIES, chunk_corpus  # noqa: E402
from ragdiag.index.encoder.model import Encoder  # noqa: E402
from ragdiag.index.late import late_embed, pack_windows  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--docs", type=int, default=4, help="the first N documents of the bundled corpus (0: all)")
    ap.add_argument("--repeats", type=int, default=3, help="timed rounds (each: plain, then late)")
    ap.add_argument("--device", default=None, help="cpu, cuda (default: CUDA when torch sees it)")
    args = ap.parse_args(argv)
    corpus = load_corpus(Path(__file__).resolve().parent.parent / "data" / "sklearn-user-guide")
    docs = corpus.documents[: args.docs] if args.docs > 0 else corpus.documents
    corpus = Corpus(root=corpus.root, documents=tuple(docs), name=corpus.name)
    chunks = chunk_corpus(corpus, STRATEGIES["E"])
    texts = [c.embed_text for c in chunks]
    enc = Encoder(device=args.device)
    specials = int(enc.count_tokens([""])[0])
    pieces = np.asarray(enc.count_tokens(texts))
    windows = pack_windows(chunks, pieces - specials, enc.max_seq_length - specials)
    window_pieces = np.minimum(np.asarray(enc.count_tokens([w.text for w in windows])), enc.max_seq_length)

    def plain():
        return enc.encode(texts)

    def late():
        return late_embed(enc, chunks)[0]

    plain(), late()  # warm: the model loaded, the passes' threads started
    times: dict[str, list[float]] = {"plain": [], "late": []}
    cpu: dict[str, list[float]] = {"plain": [], "late": []}
    for _ in range(args.repeats):
        for name, fn in (("plain", plain), ("late", late)):
            t, c = time.perf_counter(), time.process_time()
            fn()
            times[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    load = os.getloadavg()
    import torch

    print(f"# Late chunking vs plain embedding, strategy E, bundled corpus: {len(docs)} of 14 documents, "
          f"{len(chunks)} chunks in {len(windows)} windows\n")
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs; encoder {enc.name} on {enc.layout}; torch "
          f"{torch.__version__}; {args.repeats} rounds after one warm-up; load {load[0]:.1f} at the end\n")
    print("| path | median s | rounds (s) | median CPU s | chunks/s | forward passes' sequences | wordpieces read |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rows = {"plain": (len(texts), int(np.minimum(pieces, enc.max_seq_length).sum())),
            "late": (len(windows), int(window_pieces.sum()))}
    for name in ("plain", "late"):
        seqs, read = rows[name]
        print(f"| {name} | {med[name]:.2f} | {', '.join(f'{t:.2f}' for t in times[name])} | {med_cpu[name]:.2f} | "
              f"{len(chunks) / med[name]:.0f} | {seqs} | {read:,} |")
    rounds = ", ".join(f"{b / a:.2f}" for a, b in zip(times["plain"], times["late"]))
    print(f"\nratio late / plain (medians): {med['late'] / med['plain']:.2f} wall, "
          f"{med_cpu['late'] / med_cpu['plain']:.2f} CPU; per round (wall): {rounds} (the issue asks for at most 1.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
