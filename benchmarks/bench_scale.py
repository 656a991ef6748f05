"""Scale: the evaluation's retrieval stages at 10k-1M chunks, time and peak memory per stage.

Run: ``python benchmarks/bench_scale.py --chunks 10000,100000 [--queries 100]``

Each size runs in its own process (``--one N`` is that child), on the synthetic
knowledge base of ``benchmarks/synthetic.py`` (Zipf-distributed pseudo-words,
planted needles and queries) and precomputed random unit vectors written to a
``.npy`` file and read by blocks (``VectorFile``). The stages are the ones
``evaluate()`` runs per strategy after chunking and embedding: build the BM25
index, search dense, BM25 and hybrid (top 20 and the needle holder's rank), and
assemble the per-query results (distances of the top 20 and the holders). Peak RSS per stage is sampled every 10 ms by a thread reading
``/proc/self/statm``; the process peak is ``ru_maxrss``. Exits non-zero if a
stage fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class Sampler(threading.Thread):
    """The highest resident set seen since the last ``reset``."""

    def __init__(self, every: float = 0.01):
        super().__init__(daemon=True)
        self.every, self.peak, self._stop = every, rss_bytes(), threading.Event()

    def run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes())
            time.sleep(self.every)

    def reset(self) -> None:
        self.peak = rss_bytes()

    def stop(self) -> None:
        self._stop.set()


def one(n_chunks: int, n_queries: int, workdir: str) -> dict:
    from synthetic import make_kb, write_vectors

    from ragdiag.core.defaults import TOP
    from ragdiag.evaluation.records import Config
    from ragdiag.evaluation.evaluate import _config_result
    from ragdiag.retrieval.bm25 import BM25Retriever
    from ragdiag.retrieval.dense import DenseRetriever
    from ragdiag.retrieval.hybrid import HybridRetriever
    from ragdiag.retrieval.base import QueryBatch
    from ragdiag.retrieval.vectors import VectorFile
    from ragdiag.documents.truth import Query

    sampler = Sampler()
    sampler.start()
    stages, state = [], {}

    def stage(name, fn):
        sampler.reset()
        t = time.perf_counter()
        try:
            fn()
            ok, error = True, ""
        except Exception as exc:  # noqa: BLE001 - reported in the table, and the exit code
            ok, error = False, f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        stages.append({"stage": name, "seconds": time.perf_counter() - t, "peak_mb": max(sampler.peak, rss_bytes()) / 2**20,
                       "ok": ok, "error": error})
        return ok

    path = os.path.join(workdir, f"vectors-{n_chunks}.npy")

    def corpus():
        state["kb"] = make_kb(n_chunks, n_queries)

    def vectors():
        state["qv"] = write_vectors(path, state["kb"])
        state["vf"] = VectorFile(path)

    def bm25_index():
        state["bm25"] = BM25Retriever(state["kb"].texts)

    def prepare():
        kb = state["kb"]
        state["queries"] = tuple(Query(qid, text, qid.split(":")[1], question_id) for qid, text, question_id in kb.queries)
        state["batch"] = QueryBatch(tuple(q.text for q in state["queries"]), state["qv"])
        state["targets"] = [kb.holders[q.question_id] for q in state["queries"]]
        state["dense"] = DenseRetriever(state["vf"])
        state["hybrid"] = HybridRetriever([state["dense"], state["bm25"]])

    found = {}

    def search(name):
        def go():
            found[name] = state[name].bounded_search(state["batch"], depth=TOP, targets=state["targets"])
        return go

    results = {}

    def assemble():
        kb = state["kb"]
        index = SimpleNamespace(holders=kb.holders, vectors=state["vf"], truncated_before_needle=lambda qid, end: False)
        truth = SimpleNamespace(question=lambda qid: SimpleNamespace(end=0))
        for name, f in found.items():
            results[name] = _config_result(Config("S", name), index, truth, state["queries"], f, state["qv"],
                                           seconds=0.0)

    ok = stage("synthetic corpus", corpus) and stage("random vectors to disk", vectors)
    ok = ok and stage("BM25 index", bm25_index) and stage("queries", prepare)
    if ok:
        for name in ("dense", "bm25", "hybrid"):
            ok = stage(f"search {name}", search(name)) and ok
        ok = stage("per-query results", assemble) and ok
    sampler.stop()
    recall = {name: float(np.mean((r.needle_rank > 0) & (r.needle_rank <= 20))) for name, r in results.items()}
    try:
        os.remove(path)
    except OSError:
        pass
    return {"chunks": n_chunks, "queries": n_queries, "stages": stages, "ok": ok,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "recall@20": recall}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        model = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
        cpu = model
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} CPU ({cpu}), {mem:.0f} GB RAM, Python {platform.python_version()}, numpy {np.__version__}"


def table(runs: list[dict]) -> str:
    names = [s["stage"] for s in runs[0]["stages"]] if runs else []
    for r in runs[1:]:
        names += [s["stage"] for s in r["stages"] if s["stage"] not in names]
    head = "| stage | " + " | ".join(f"{r['chunks']:,} chunks: s | peak MB" for r in runs)
    grow = [f"x{runs[i]['chunks'] // runs[i - 1]['chunks']}: time, memory" for i in range(1, len(runs))]
    lines = [head + "".join(f" | growth {g}" for g in grow) + " |",
             "|---|" + "---:|---:|" * len(runs) + "---:|" * len(grow)]
    for name in names:
        cells, by = [], []
        for r in runs:
            s = next((s for s in r["stages"] if s["stage"] == name), None)
            by.append(s)
            cells.append("n/a | n/a" if s is None else
                         (f"{s['seconds']:.2f} | {s['peak_mb']:,.0f}" if s["ok"] else f"FAILED | {s['peak_mb']:,.0f}"))
        for i in range(1, len(runs)):
            a, b = by[i - 1], by[i]
            cells.append("" if not (a and b and a["ok"] and b["ok"]) else
                         f"{b['seconds'] / max(a['seconds'], 1e-9):.1f}x, {b['peak_mb'] / a['peak_mb']:.2f}x")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    total = [f"{sum(s['seconds'] for s in r['stages']):.1f} | {r['peak_mb']:,.0f}" for r in runs]
    lines.append("| **whole run (process peak RSS)** | " + " | ".join(total) + " |" + " |" * len(grow))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", default="10000,100000", help="comma-separated sizes, each in its own process")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--workdir", default=None, help="where the vectors file is written (default: a temp folder)")
    ap.add_argument("--json", default=None, help="also write the measurements here")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.queries, args.workdir)))
        return 0
    sizes = [int(s.replace("_", "")) for s in args.chunks.split(",") if s.strip()]
    runs, failed = [], False
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for n in sizes:
            proc = subprocess.run([sys.executable, __file__, "--one", str(n), "--queries", str(args.queries),
                                   "--workdir", tmp], capture_output=True, text=True)
            try:
                run = json.loads(proc.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                print(f"{n:,} chunks: the process failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}", file=sys.stderr)
                failed = True
                continue
            if proc.stderr.strip():
                print(proc.stderr[-3000:], file=sys.stderr)
            failed = failed or not run["ok"]
            runs.append(run)
            print(f"{n:,} chunks done: {sum(s['seconds'] for s in run['stages']):.1f} s, peak {run['peak_mb']:,.0f} MB",
                  file=sys.stderr, flush=True)
    print(f"# Scale: {args.queries} queries x dense + BM25 + hybrid ({machine()})\n")
    print(table(runs))
    if runs:
        print("\nrecall@20 on the synthetic needles (a sanity check, not a quality figure): " +
              "; ".join(f"{r['chunks']:,}: " + ", ".join(f"{k} {v:.2f}" for k, v in r["recall@20"].items()) for r in runs))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine(), "runs": runs}, indent=1))
    return 1 if failed or not runs else 0


if __name__ == "__main__":
    sys.exit(main())
