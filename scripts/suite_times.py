"""Sum a run's per-file times (``RAGDIAG_TEST_TIMES``, written by ``tests/helpers/timing.py``): where the CPU went.

    RAGDIAG_TEST_TIMES=times.tsv ./run.sh test
    python scripts/suite_times.py times.tsv            # the 25 files that cost the most CPU, by folder, failures
    python scripts/suite_times.py times.tsv --top 60
    python scripts/suite_times.py times.tsv --costs tests/file_costs.tsv   # the order the workers take files in

CPU is the worker's own plus that of the processes it started (servers, Chromium, the CLI; sampled, see
``tests/helpers/timing.py``): on a busy machine wall time stretches, CPU time hardly moves, so it is the figure to
cut.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path


def read(path: Path) -> tuple[list[tuple[str, float, float, float, int]], list[str], dict[str, float]]:
    """(file rows: (file, wall, own CPU, children's CPU, tests), failed node ids, the processes' CPU by command
    name) from a times file."""
    files, failed, names = [], [], defaultdict(float)
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split("\t")
        if parts[0] == "file" and len(parts) == 7:
            files.append((parts[1], float(parts[2]), float(parts[3]), float(parts[4]), int(parts[5])))
        elif parts[0] == "failed" and len(parts) == 3:
            failed.append(f"{parts[1]} ({parts[2]})")
        elif parts[0] == "processes" and len(parts) == 3:
            for item in parts[2].split():
                name, _, cpu = item.rpartition("=")
                names[name] += float(cpu)
        elif line.strip():
            raise ValueError(f"{path}:{n}: not a line of RAGDIAG_TEST_TIMES: {line[:80]!r}")
    return files, failed, dict(names)


def report(files, failed, names=None, top: int = 25) -> str:
    if not files:
        return "no test file has ended yet"
    cpu = lambda row: row[2] + row[3]  # noqa: E731
    total = sum(cpu(r) for r in files)
    out = [f"{len(files)} files, {sum(r[4] for r in files)} tests: {total / 60:.1f} CPU minutes "
           f"(tests {sum(r[2] for r in files) / 60:.1f}, their processes {sum(r[3] for r in files) / 60:.1f}), "
           f"{sum(r[1] for r in files) / 60:.1f} worker minutes of wall time", "", "by folder:"]
    folders = defaultdict(lambda: [0.0, 0.0, 0])
    for r in files:
        parts = r[0].split("/")  # tests/<folder>/<file>, or a doctest's package (ragdiag/..., ui/...)
        f = folders[parts[1] if parts[0] == "tests" and len(parts) > 2 else parts[0]]
        f[0] += cpu(r)
        f[1] += r[1]
        f[2] += 1
    for name, (c, w, n) in sorted(folders.items(), key=lambda kv: -kv[1][0]):
        out.append(f"  {name:10s} {c:7.0f} CPU s ({100 * c / total:4.1f}%)  {w:7.0f} wall s  {n:3d} files")
    if names:
        out += ["", "the processes the tests started, by command name (sampled):"]
        out += [f"  {name:12s} {cpu:7.0f} CPU s" for name, cpu in sorted(names.items(), key=lambda kv: -kv[1])]
    out += ["", f"the {min(top, len(files))} files that cost the most CPU (CPU s = tests + their processes, wall s):"]
    for r in sorted(files, key=cpu, reverse=True)[:top]:
        out.append(f"  {cpu(r):6.0f} = {r[2]:5.0f} + {r[3]:5.0f}   {r[1]:6.0f}   {r[0]}")
    out += ["", f"failed: {len(failed)}", *(f"  {f}" for f in failed)]
    return "\n".join(out)


def costs(files, top: int = 60) -> str:
    r"""The ``top`` files by wall time, costliest first, as ``tests/file_costs.tsv`` holds them: the order in which
    the suite's workers take files (``tests/conftest.py``), so that a long file starts first instead of last.

    Wall time, not CPU: it is what a worker spends on a file, and a file of several processes (Ray, a server and a
    browser) stretches more than its CPU on a busy machine.

    >>> costs([("tests/a.py", 5.0, 1.0, 0.0, 2), ("tests/b.py", 90.4, 3.0, 0.0, 1)], top=1).splitlines()[1:]
    ['tests/b.py\t90']
    """
    rows = sorted(files, key=lambda r: -r[1])[:top]
    return "".join(["# file\tworker seconds (scripts/suite_times.py --costs): the suite's workers take these files first\n",
                    *(f"{r[0]}\t{r[1]:.0f}\n" for r in rows)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("times", type=Path, help="the file RAGDIAG_TEST_TIMES named")
    ap.add_argument("--top", type=int, default=25, help="how many files to list (default 25)")
    ap.add_argument("--costs", type=Path, metavar="FILE",
                    help="also write the 60 longest files' wall times to FILE (tests/file_costs.tsv)")
    args = ap.parse_args(argv)
    if not args.times.is_file():
        print(f"{args.times}: no such file (run the tests with RAGDIAG_TEST_TIMES={args.times} first)",
              file=sys.stderr)
        return 2
    try:
        files, failed, names = read(args.times)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(report(files, failed, names, args.top))
    if args.costs is not None:
        args.costs.write_text(costs(files), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
