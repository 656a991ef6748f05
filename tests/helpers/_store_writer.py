"""A writer process for the store's crash and concurrency tests (spawned by tests/unit/test_store.py).

It embeds with :class:`fakes.HashEncoder`, the FAKE the store's tests use.

Usage::

    python tests/helpers/_store_writer.py ROOT --start 0 --stop 3000 [--dim 32] [--commit-every 200]
        [--out vectors.npy] [--die-after-inserts K]

Prints ``ready`` once the store is open, then embeds ``text 000000`` ..., and
prints ``done <computed> <reused>`` at the end. ``--die-after-inserts K``
SIGKILLs this process right after its K-th vector INSERT statement, that is
inside a write transaction.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakes import HashEncoder  # noqa: E402


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
    result = store.embed(HashEncoder(args.dim), texts_range(args.start, args.stop), commit_every=args.commit_every,
                         progress=report)
    if args.out:
        np.save(args.out, result.vectors)
    store.close()
    print(f"done {result.computed} {result.reused}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
