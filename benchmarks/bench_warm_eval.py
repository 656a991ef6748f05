"""Warm full ``eval``: today's lazy path against the old eager one, side by side in one run.

Run: ``python benchmarks/bench_warm_eval.py [--repeats 3] [--cache DIR]``

Both are ``python -m ragdiag eval`` (all strategies, all retrievers) against
the same filled store, in separate processes, alternated (old, new, old,
new...) so a busy machine slows both alike. "eager" is the behaviour before
the encoder became lazy: torch, transformers and the model are loaded before
the evaluation starts (here: forced by loading ``Encoder().model`` first).
"lazy" is today's: a run whose every vector and score is stored loads none
of them. Each run's stdout tables are compared: they must be identical.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EAGER = ("import sys\nfrom ragdiag.index.encoder import Encoder, offline\noffline()\nEncoder().model\n"
         "from ragdiag.cli.parser import main\nsys.exit(main(sys.argv[1:]))\n")
LAZY = "import sys\nfrom ragdiag.cli.parser import main\nsys.exit(main(sys.argv[1:]))\n"


def run(code: str, cache: str) -> tuple[float, str, str]:
    cmd = [sys.executable, "-c", code, "eval", "--cache", cache, "--no-snapshot"]
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"eval failed:\n{proc.stderr[-2000:]}")
    note = next((x for x in proc.stderr.splitlines() if x.startswith("embedded ")), "")
    return seconds, proc.stdout, note


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cache", default=os.environ.get("RAGDIAG_CACHE") or str(ROOT / ".ragdiag-cache"))
    args = ap.parse_args()
    run(LAZY, args.cache)  # fill what is missing (and warm the OS file cache) before timing
    times: dict[str, list[float]] = {"eager": [], "lazy": []}
    outputs: dict[str, set[str]] = {"eager": set(), "lazy": set()}
    notes = {}
    for _ in range(args.repeats):
        for name, code in (("eager", EAGER), ("lazy", LAZY)):
            seconds, out, note = run(code, args.cache)
            times[name].append(seconds)
            outputs[name].add(out)
            notes[name] = note
    same = len(outputs["eager"] | outputs["lazy"]) == 1
    e, z = statistics.median(times["eager"]), statistics.median(times["lazy"])
    print(f"# Warm full eval (6 strategies x all retrievers, bundled corpus), median of {args.repeats}, alternated\n")
    print("| path | median s | runs (s) | note |\n|---|---:|---|---|")
    for name, med in (("eager (old: torch + model loaded first)", e), ("lazy (today)", z)):
        key = name.split()[0]
        print(f"| {name} | {med:.1f} | {', '.join(f'{t:.1f}' for t in times[key])} | {notes[key]} |")
    print(f"\nlazy / eager = {z / e:.2f}; identical stdout tables in every run: {same}")


if __name__ == "__main__":
    main()
