"""A writer process for the store's crash and concurrency tests (spawned by tests/test_store.py).

Also home of :class:`FakeEncoder`, shared by the tests and this script.

Usage::

    python tests/_store_writer.py ROOT --start 0 --stop 3000 [--dim 32] [--commit-every 200]
        [--out vectors.npy] [--die-after-inserts K]

Prints ``ready`` once the store is open, then embeds ``text 000000`` ..., and
prints ``done <computed> <reused>`` at the end. ``--die-after-inserts K``
SIGKILLs this process right after its K-th vector INSERT statement, that is
inside a write transaction.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragdiag.index.encoder.protocols import EncoderStamp  # noqa: E402


class FakeEncoder:
    """A FAKE encoder for plumbing tests only: no model, no meaning.

    Each text's vector is SHAKE-256 of (weights tag, precision, text) read as
    uniform numbers, centred and normalised: deterministic across processes,
    and different for a different "model" or precision. ``encoded`` counts
    texts encoded, ``calls`` counts ``encode`` calls.
    """

    def __init__(self, dim: int = 16, *, precision: str = "fp32", weights: str = "fake-weights-1",
                 model: str = "fake/hash-encoder", max_seq_length: int = 64):
        self.stamp = EncoderStamp(model=model, weights_sha256=hashlib.sha256(weights.encode()).hexdigest(), dim=dim,
                                  max_seq_length=max_seq_length, pooling="mean", normalize=True, precision=precision)
        self.encoded = 0
        self.calls = 0

    def vector(self, text: str) -> np.ndarray:
        key = f"{self.stamp.weights_sha256}\0{self.stamp.precision}\0{text}".encode()
        raw = np.frombuffer(hashlib.shake_256(key).digest(4 * self.stamp.dim), dtype="<u4")
        v = raw / 2.0**32 - 0.5
        return (v / np.linalg.norm(v)).astype(np.float32)

    def encode(self, texts: Sequence[str], *, progress=None) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.stamp.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = self.vector(t)
            if progress is not None and ((i + 1) % 64 == 0 or i + 1 == len(texts)):
                progress(i + 1, len(texts))
        self.encoded += len(texts)
        return out


def texts_range(start: int, stop: int) -> list[str]:
    return [f"text {i:06d}" for i in range(start, stop)]


def main(argv: Sequence[str] | None = None) -> int:
    from ragdiag.index.store import Store

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root")
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--stop", type=int, required=True)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--commit-every", type=int, default=200)
    p.add_argument("--out")
    p.add_argument("--die-after-inserts", type=int)
    p.add_argument("--print-progress", action="store_true", help="print 'encoded N' as texts are encoded")
    args = p.parse_args(argv)

    store = Store(args.root)
    if args.die_after_inserts is not None:
        seen = 0

        def trace(sql: str) -> None:
            nonlocal seen
            if sql.startswith("INSERT OR REPLACE INTO vectors"):
                seen += 1
                if seen >= args.die_after_inserts:
                    os.kill(os.getpid(), signal.SIGKILL)

        store._conn.set_trace_callback(trace)
    print("ready", flush=True)
    report = (lambda done, total: print(f"encoded {done}", flush=True)) if args.print_progress else None
    result = store.embed(FakeEncoder(args.dim), texts_range(args.start, args.stop), commit_every=args.commit_every,
                         progress=report)
    if args.out:
        np.save(args.out, result.vectors)
    store.close()
    print(f"done {result.computed} {result.reused}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
