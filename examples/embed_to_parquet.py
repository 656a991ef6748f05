"""A separate embedding job, as a team's pipeline would run it: chunk vectors to a Parquet file for ``eval --vectors``.

Run: ``python examples/embed_to_parquet.py OUT.parquet [--strategies C] [--key chunk_id|span|text] [--queries Q.parquet]``

It chunks the bundled corpus (or ``--corpus``) with ragdiag's strategies, embeds
the chunk texts with sentence-transformers' all-MiniLM-L6-v2 as loaded by
ragdiag (``--fake`` uses the test suite's FAKE bag-of-words encoder instead,
for plumbing tests), and writes one row per chunk: its key, its ``vector``,
and the schema metadata ``model`` and ``dim`` that ``eval --vectors`` reads.
A Spark or Ray job writes the same columns from wherever it embeds.
``--queries`` writes the ground truth's query vectors too (keyed by ``text``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import default_truth_path, load_truth
    from ragdiag.index.chunking import chunk_corpus, parse_strategies

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--strategies", default="C")
    ap.add_argument("--key", choices=["chunk_id", "span", "text"], default="chunk_id")
    ap.add_argument("--queries", default=None, help="also write the queries' vectors to this Parquet file")
    ap.add_argument("--fake", action="store_true", help="the FAKE test encoder (tests/helpers/fakes.py), not the model")
    args = ap.parse_args(argv)
    if args.fake:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "helpers"))
        from fakes import fake_encoder

        encoder, model = fake_encoder(), "FAKE-bag-of-words"
    else:
        from ragdiag.index.models import load_encoder

        encoder, model = load_encoder(None), "all-MiniLM-L6-v2"
    corpus = load_corpus(args.corpus)
    chunks = [c for s in parse_strategies(args.strategies) for c in chunk_corpus(corpus, s)]
    vectors = np.asarray(encoder.encode([c.embed_text for c in chunks]), dtype=np.float32)
    columns = {"chunk_id": [c.id for c in chunks]} if args.key == "chunk_id" else (
        {"doc_id": [c.doc_id for c in chunks], "start": [c.start for c in chunks], "end": [c.end for c in chunks]}
        if args.key == "span" else {"text": [c.embed_text for c in chunks]})
    meta = {"model": model, "dim": str(vectors.shape[1])}

    def write(path, cols, vecs):
        vec = pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel(), type=pa.float32()), vecs.shape[1])
        table = pa.table({**cols, "vector": vec}).replace_schema_metadata(meta)
        pq.write_table(table, path)
        print(f"wrote {path}: {len(vecs)} vectors of {vecs.shape[1]} dimensions ({model})")

    write(args.out, columns, vectors)
    if args.queries:
        truth = load_truth(default_truth_path(corpus.root), corpus)
        texts = [q.text for q in truth.queries]
        write(args.queries, {"text": texts}, np.asarray(encoder.encode(texts), dtype=np.float32))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
