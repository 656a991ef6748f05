"""Full evaluation, cold (empty store) and warm, with peak memory.

Run: ``python benchmarks/bench_eval.py [--warm-repeats 3] [--retrievers dense,bm25,hybrid,rerank-maxsim]``

Each run is a separate ``python -m ragdiag eval`` process (so "warm" includes
starting Python and loading the model), timed from outside; peak RSS is the
child's ``ru_maxrss``. The cold run uses a fresh temporary store; the warm runs
reuse it.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_eval(cache: str, retrievers: str, out: str) -> tuple[float, float, str]:
    cmd = [sys.executable, "-m", "ragdiag", "eval", "--cache", cache, "--retrievers", retrievers, "--out", out]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate()
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"eval failed:\n{err[-2000:]}")
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    note = next((line for line in err.splitlines() if line.startswith("embedded ")), "")
    return seconds, rss_mb, note


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--warm-repeats", type=int, default=3)
    ap.add_argument("--retrievers", default="dense,bm25,hybrid,rerank-maxsim,rerank-ce")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cache, out = str(Path(tmp) / "store"), str(Path(tmp) / "out")
        cold, rss, note_cold = run_eval(cache, args.retrievers, out)
        warm_runs = [run_eval(cache, args.retrievers, out) for _ in range(args.warm_repeats)]
    warm = statistics.median(w[0] for w in warm_runs)
    print(f"# Full evaluation, 6 strategies x {args.retrievers} (bundled corpus)\n")
    print("| run | seconds | note |\n|---|---:|---|")
    print(f"| cold (empty store) | {cold:.1f} | {note_cold} |")
    print(f"| warm (median of {len(warm_runs)}) | {warm:.1f} | {warm_runs[0][2]} |")
    print(f"\nwarm / cold = {warm / cold:.3f}; peak RSS of any run: {rss:.0f} MB")


if __name__ == "__main__":
    main()
