"""Regenerate the shipped index of the bundled corpus (``data/sklearn-user-guide.index.npz``).

Run: ``python scripts/make_snapshot.py [--cache DIR] [--out FILE]``, or
``python scripts/make_snapshot.py --restamp [--out FILE]`` to stamp the existing file with the libraries
installed here after re-embedding a sample of its chunks (the vectors are not recomputed).

Evaluates all six strategies with dense, BM25, hybrid and MaxSim reranking
into the store (vectors and pair scores already there are reused), then
writes every chunk and query vector (float32) and the MaxSim scores of the
truth's rerank candidates with their stamp. Fails when the file would exceed
10 MB.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragdiag.documents.corpus import DEFAULT_CORPUS, load_corpus  # noqa: E402
from ragdiag.index.encoder.model import Encoder
from ragdiag.index.encoder.resolve import offline  # noqa: E402
from ragdiag.evaluation.evaluate import evaluate  # noqa: E402
from ragdiag.index.snapshot import SNAPSHOT_PATH, describe, restamp_snapshot, write_snapshot  # noqa: E402
from ragdiag.index.store import Store
from ragdiag.index.store.glue import record_evaluation  # noqa: E402
from ragdiag.documents.truth import default_truth_path, load_truth  # noqa: E402

LIMIT = 10_000_000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", help="store folder (default: $RAGDIAG_CACHE or ./.ragdiag-cache)")
    ap.add_argument("--out", default=str(SNAPSHOT_PATH), help="snapshot file to write")
    ap.add_argument("--restamp", action="store_true",
                    help="stamp the existing file with this installation's libraries (a sample re-embedded)")
    args = ap.parse_args()
    offline()
    corpus = load_corpus(DEFAULT_CORPUS)
    truth = load_truth(default_truth_path(corpus.root), corpus)
    encoder = Encoder()
    if args.restamp:
        meta = restamp_snapshot(args.out, corpus, truth, encoder, log=print)
        print(f"restamped {args.out}; {describe(meta)}")
        return 0
    with Store(args.cache) as store:
        ev = evaluate(corpus, truth, encoder=encoder, store=store, retrievers="dense,bm25,hybrid,rerank-maxsim")
        record_evaluation(store, ev)
        meta = write_snapshot(args.out, store, corpus, truth, encoder, log=print)
    size = Path(args.out).stat().st_size
    print(f"wrote {args.out}: {size / 1e6:.2f} MB; {describe(meta)}")
    if size > LIMIT:
        print(f"error: {size} bytes is over the {LIMIT} byte limit", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
