"""Warm ``eval`` of the bundled corpus: wall and CPU seconds, before and after, alternated in one run; import time.

Run: ``python benchmarks/bench_warm_cpu.py [--repeats 5] [--before DIR]``

Both sides run ``python -m ragdiag eval`` (all strategies, all retrievers, every
vector and score in the store) against this checkout's ``.ragdiag-cache``;
``--before DIR`` is another copy of the repository (e.g. ``git archive`` of an
older commit) whose code runs the same command, alternated with this one so
that a busy machine slows both alike. CPU seconds (user + system, from the
children's rusage) are the figure that load does not inflate; wall seconds are
reported with the load average. Each run's stdout tables must be identical.
``-X importtime`` of one warm run gives the import time (the sum over modules
imported at top level) and its largest entries. Never run in CI.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(code_dir: Path, cache: Path) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "eval", "--cache", str(cache)], cwd=code_dir,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"eval failed in {code_dir}:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def imports(code_dir: Path, cache: Path) -> tuple[float, list[tuple[float, str]]]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "ragdiag", "eval", "--cache", str(cache)],
                          cwd=code_dir, capture_output=True, text=True)
    top = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if not name.startswith("  ") and cumulative.strip().isdigit():
                top.append((int(cumulative) / 1e6, name.strip()))
    return sum(s for s, _ in top), sorted(top, reverse=True)[:6]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--before", type=Path, default=None, help="a copy of the repository at the commit to compare")
    args = ap.parse_args()
    cache = ROOT / ".ragdiag-cache"
    sides = {"after": ROOT} | ({"before": args.before} if args.before else {})
    run(ROOT, cache)  # warm: the store, the memo and the OS file cache
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
    outputs: dict[str, str] = {}
    loads = []
    for _ in range(args.repeats):
        for name, code_dir in sides.items():
            loads.append(os.getloadavg()[0])
            wall, cpu, out = run(code_dir, cache)
            times[name].append((wall, cpu))
            outputs.setdefault(name, out)
            if outputs[name] != out:
                raise SystemExit(f"{name}: the tables differ between runs")
    if len(outputs) == 2 and len(set(outputs.values())) != 1:
        print("note: the tables printed before and after differ (see each side's stdout)")
    print(f"# Warm eval of the bundled corpus ({os.cpu_count()} CPUs; load average during the runs: median "
          f"{statistics.median(loads):.1f}, max {max(loads):.1f}; medians of {args.repeats})\n")
    print("| code | wall s | CPU s (user + sys) | import time s (-X importtime) | largest imports |")
    print("|---|---:|---:|---:|---|")
    for name, code_dir in sides.items():
        total, top = imports(code_dir, cache)
        wall = statistics.median(w for w, _ in times[name])
        cpu = statistics.median(c for _, c in times[name])
        biggest = ", ".join(f"{n} {s:.2f}" for s, n in top[:4])
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {total:.2f} | {biggest} |", flush=True)


if __name__ == "__main__":
    main()
