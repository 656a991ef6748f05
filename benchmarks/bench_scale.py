"""Scale: the evaluation's retrieval stages at 10k-1M chunks, time and peak memory per stage.

Run: ``python benchmarks/bench_scale.py --chunks 10000,100000 [--queries 100]``;
``--dense-bound 1000000,2000000 [--before DIR]`` measures instead exact dense search against the read
bandwidth and the GEMM peak of the same run (10M projected), each side in its own process (``DIR``: a copy of
the repository at the commit to compare, e.g. ``git archive main | tar -x -C DIR``; its ranks and scores are
compared bit for bit); ``--engine ray`` also searches on Ray (a local instance, ``--ray-shards`` search actors,
2 by default), checks that every rank and score is the single process's, and reports
each actor's memory.

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


def one(n_chunks: int, n_queries: int, workdir: str, *, engine: str = "local", shards: int = 2,
        dim: int = 384) -> dict:
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
        state["qv"] = write_vectors(path, state["kb"], dim=dim)
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

    on_ray, ray_out = {}, {}

    def start_ray():
        import ray

        from ragdiag.retrieval.ray_search import ray_search

        ray.init(num_cpus=shards, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
        state["engine"] = ray_search(shards)

    def ray_search_of(name):
        def go():
            on_ray[name] = state["engine"].search(state[name], state["batch"], depth=TOP, targets=state["targets"])
        return go

    def compare():
        for name, f in on_ray.items():
            one_ = found[name]
            same = (np.array_equal(f.order, one_.order) and np.array_equal(f.scores, one_.scores)
                    and np.array_equal(f.target_rank, one_.target_rank))
            ray_out[name] = {"identical": bool(same),
                             "max_score_diff": float(np.abs(f.scores.astype(np.float64) - one_.scores).max())}
        ray_out["actors"] = [m.__dict__ for m in state["engine"].memory()]

    ok = stage("synthetic corpus", corpus) and stage("random vectors to disk", vectors)
    ok = ok and stage("BM25 index", bm25_index) and stage("queries", prepare)
    if ok:
        for name in ("dense", "bm25", "hybrid"):
            ok = stage(f"search {name}", search(name)) and ok
        ok = stage("per-query results", assemble) and ok
    if ok and engine == "ray":
        ok = stage(f"ray: start {shards} search actors", start_ray)
        ok = ok and stage("ray: ship the shards (vectors, BM25 postings)", lambda: state["engine"].load(state["hybrid"]))
        for name in ("dense", "bm25", "hybrid"):
            ok = ok and stage(f"ray search {name}", ray_search_of(name))
        ok = ok and stage("ray: compare with one process", compare)
        ok = ok and all(v["identical"] for k, v in ray_out.items() if k != "actors")
    sampler.stop()
    recall = {name: float(np.mean((r.needle_rank > 0) & (r.needle_rank <= 20))) for name, r in results.items()}
    try:
        os.remove(path)
    except OSError:
        pass
    return {"chunks": n_chunks, "queries": n_queries, "stages": stages, "ok": ok,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "recall@20": recall,
            "engine": engine, "dim": dim, "ray": ray_out}


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


def dense_data(n: int, n_queries: int, dim: int, folder: Path) -> None:
    """``n`` random unit vectors, ``n_queries`` queries near some of them and one random target each, as ``.npy``."""
    rng = np.random.default_rng(0)
    m = np.empty((n, dim), dtype=np.float32)
    for a in range(0, n, 1 << 16):
        part = rng.standard_normal((min(n, a + (1 << 16)) - a, dim), dtype=np.float32)
        m[a : a + len(part)] = part / np.linalg.norm(part, axis=1, keepdims=True)
    q = m[rng.integers(0, n, n_queries)] + 0.05 * rng.standard_normal((n_queries, dim), dtype=np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    np.save(folder / "m.npy", m)
    np.save(folder / "q.npy", q)
    np.save(folder / "targets.npy", rng.integers(0, n, n_queries))


def dense_child(folder: Path, tree: Path, n_queries: int, out: Path) -> dict:
    """One side's exact dense search (``tree``'s ragdiag) of 1 and ``n_queries`` queries, then the bounds.

    Wall and CPU seconds of each search (top 20 and the target's rank), its results written to ``out``; the
    read bandwidth (one query's product over the whole matrix: the BLAS streaming it, the search's least
    possible read) and the fp32 GEMM peak (2048^3), each the best of two, in this process after the searches.
    """
    sys.path.insert(0, str(tree))
    for name in [k for k in sys.modules if k == "ragdiag" or k.startswith("ragdiag.")]:
        del sys.modules[name]
    import ragdiag
    from ragdiag.retrieval.base import QueryBatch
    from ragdiag.retrieval.dense import DenseRetriever

    if not Path(ragdiag.__file__).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"ragdiag imported from {ragdiag.__file__}, not from {tree}")
    m, q, t = (np.load(folder / f) for f in ("m.npy", "q.npy", "targets.npy"))
    dense = DenseRetriever(m)
    DenseRetriever(m[: 1 << 16]).bounded_search(QueryBatch(("warm", "up"), q[:2]), depth=20)  # BLAS threads up
    got, saved = {}, {}
    for nq in sorted({1, n_queries}):
        batch = QueryBatch(tuple(f"q{i}" for i in range(nq)), q[:nq])
        targets = [t[i : i + 1] for i in range(nq)]
        c, w = time.process_time(), time.perf_counter()
        found = dense.bounded_search(batch, depth=20, targets=targets)
        got[str(nq)] = {"wall": time.perf_counter() - w, "cpu": time.process_time() - c, "load": os.getloadavg()[0]}
        for f in ("order", "scores", "target_rank", "target_score"):
            saved[f"{nq}_{f}"] = getattr(found, f)
    np.savez(out, **saved)
    one_q, a2, read, gemm = q[:1].copy(), np.random.default_rng(1).standard_normal((2048, 2048), dtype=np.float32), [], []
    for _ in range(2):
        w = time.perf_counter()
        one_q @ m.T
        read.append(time.perf_counter() - w)
        w = time.perf_counter()
        a2 @ a2
        gemm.append(time.perf_counter() - w)
    return {"searches": got, "read_s": min(read), "gemm_s": min(gemm), "bytes": int(m.nbytes)}


def dense_bound(n: int, n_queries: int, dim: int, repeats: int, before: Path | None, workdir: str | None) -> list[dict]:
    """Exact dense search of 1 and ``n_queries`` queries over ``n`` in-memory unit vectors against the bounds.

    Each side (this tree; ``before``, another copy of the repository) runs in its own process per round, the
    sides alternated; the bounds are measured in every process (:func:`dense_child`), medians over all. The
    bound is the larger of bytes read / bandwidth and FLOPs / peak. "same ranks": every top 20, score,
    target rank and target score of the two sides equal, bit for bit.
    """
    import statistics

    sides = {"now": ROOT} | ({"before": before} if before else {})
    runs: dict[str, list[dict]] = {k: [] for k in sides}
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        folder = Path(tmp)
        dense_data(n, n_queries, dim, folder)
        for r in range(repeats):
            for side in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
                out = folder / f"{side}-{r}.npz"
                proc = subprocess.run([sys.executable, __file__, "--dense-child", str(folder), "--tree", str(sides[side]),
                                       "--queries", str(n_queries), "--child-out", str(out)], capture_output=True, text=True)
                if proc.returncode:
                    raise SystemExit(f"{side} at {n:,} chunks failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
                runs[side].append(json.loads(proc.stdout.strip().splitlines()[-1]) | {"out": out})
                print(f"{n:,} chunks, round {r + 1}, {side} done", file=sys.stderr, flush=True)
        same = {}
        for key in np.load(runs["now"][0]["out"]).files:
            ref = np.load(runs["now"][0]["out"])[key]
            others = [np.load(x["out"])[key] for x in runs["now"][1:] + runs.get("before", [])]
            same[key] = all(np.array_equal(ref, o, equal_nan=True) for o in others)
    everyone = [x for side in runs.values() for x in side]
    read_s = statistics.median(x["read_s"] for x in everyone)
    gemm_s = statistics.median(x["gemm_s"] for x in everyone)
    bytes_read = everyone[0]["bytes"]
    rows = []
    for nq in sorted({1, n_queries}):
        med = {side: {k: statistics.median(x["searches"][str(nq)][k] for x in xs) for k in ("wall", "cpu")}
               for side, xs in runs.items()}
        rows.append({"chunks": n, "queries": nq, "now_s": med["now"]["wall"], "now_cpu_s": med["now"]["cpu"],
                     "before_s": med["before"]["wall"] if before else None,
                     "before_cpu_s": med["before"]["cpu"] if before else None,
                     "identical": all(v for k, v in same.items() if k.startswith(f"{nq}_")),
                     "compared": len(everyone) - 1,
                     "bandwidth_gbs": bytes_read / read_s / 1e9, "peak_gflops": 2.0 * 2048**3 / gemm_s / 1e9,
                     "read_bound_s": read_s, "flop_bound_s": 2.0 * nq * n * dim * gemm_s / (2.0 * 2048**3),
                     "load": statistics.median(x["searches"][str(nq)]["load"] for x in everyone)})
    return rows


def dense_bound_table(rows: list[dict]) -> str:
    out = ["| chunks | queries | before (s) | now (s) | before / now | CPU s: before | now | "
           "read bound: bytes / bandwidth (s) | compute bound: FLOPs / GEMM peak (s) | now / max(bounds) | same ranks | "
           "bandwidth GB/s | peak GFLOP/s | load |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        bound = max(r["read_bound_s"], r["flop_bound_s"])
        if r["before_s"] is None:
            before, ratio, before_cpu = "n/a", "n/a", "n/a"
            same = "n/a (no --before)" if r["compared"] == 0 else ("rounds identical" if r["identical"] else "DIFFERENT")
        else:
            before, ratio = f"{r['before_s']:.3f}", f"{r['before_s'] / r['now_s']:.2f}"
            before_cpu, same = f"{r['before_cpu_s']:.3f}", "identical" if r["identical"] else "DIFFERENT"
        out.append(f"| {r['chunks']:,} | {r['queries']} | {before} | {r['now_s']:.3f} | {ratio} | {before_cpu} | "
                   f"{r['now_cpu_s']:.3f} | {r['read_bound_s']:.3f} | {r['flop_bound_s']:.3f} | {r['now_s'] / bound:.2f} | "
                   f"{same} | {r['bandwidth_gbs']:.1f} | {r['peak_gflops']:.0f} | {r['load']:.1f} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", default="10000,100000", help="comma-separated sizes, each in its own process")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--workdir", default=None, help="where the vectors file is written (default: a temp folder)")
    ap.add_argument("--json", default=None, help="also write the measurements here")
    ap.add_argument("--engine", choices=["local", "ray"], default="local",
                    help="ray: also search on Ray search actors and compare every rank and score")
    ap.add_argument("--ray-shards", type=int, default=2, help="search actors with --engine ray (default 2)")
    ap.add_argument("--dim", type=int, default=384, help="vector dimensions (default 384, MiniLM's)")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--dense-bound", default=None,
                    help="instead: exact dense search at these sizes (comma-separated, e.g. 1000000,2000000) against "
                         "the read bandwidth and GEMM peak measured in the same run, 10M projected linearly")
    ap.add_argument("--repeats", type=int, default=3, help="rounds of --dense-bound (medians)")
    ap.add_argument("--before", type=Path, default=None,
                    help="with --dense-bound: a copy of the repository at the commit to compare (e.g. a git archive), "
                         "searched in its own processes, rounds alternated; its ranks and scores compared bit for bit")
    ap.add_argument("--dense-child", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--tree", type=Path, default=ROOT, help=argparse.SUPPRESS)
    ap.add_argument("--child-out", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dense_child:
        print(json.dumps(dense_child(args.dense_child, args.tree, args.queries, args.child_out)))
        return 0
    if args.before and not (args.before / "ragdiag" / "retrieval" / "dense.py").is_file():
        ap.error(f"--before {args.before}: not a copy of the repository (no ragdiag/retrieval/dense.py)")
    if args.dense_bound:
        load = os.getloadavg()
        print(f"# Exact dense search against its bounds ({machine()}; `uptime` load {load[0]:.2f} {load[1]:.2f} "
              f"{load[2]:.2f} at the start; {args.repeats} rounds, each side in its own process, alternated; medians; "
              f"top 20 and the target's rank; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n")
        rows = []
        for n in [int(x.replace("_", "")) for x in args.dense_bound.split(",") if x.strip()]:
            rows += dense_bound(n, args.queries, args.dim, args.repeats, args.before, args.workdir)
        print(dense_bound_table(rows))
        big = [r for r in rows if r["queries"] == args.queries]
        if len(big) >= 2:
            (a, b) = big[-2], big[-1]
            per = (b["now_s"] - a["now_s"]) / (b["chunks"] - a["chunks"])
            proj = b["now_s"] + per * (10_000_000 - b["chunks"])
            print(f"\n10M chunks x {args.queries} queries, projected linearly from {a['chunks']:,} and {b['chunks']:,}: "
                  f"{proj:.1f} s now (read bound {b['read_bound_s'] * 1e7 / b['chunks']:.1f} s, compute bound "
                  f"{b['flop_bound_s'] * 1e7 / b['chunks']:.1f} s)")
        load = os.getloadavg()
        print(f"\n`uptime` load at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        return 1 if any(not r["identical"] for r in rows) else 0
    if args.one is not None:
        print(json.dumps(one(args.one, args.queries, args.workdir, engine=args.engine, shards=args.ray_shards,
                             dim=args.dim)))
        return 0
    sizes = [int(s.replace("_", "")) for s in args.chunks.split(",") if s.strip()]
    runs, failed = [], False
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for n in sizes:
            proc = subprocess.run([sys.executable, __file__, "--one", str(n), "--queries", str(args.queries),
                                   "--workdir", tmp, "--engine", args.engine, "--ray-shards", str(args.ray_shards),
                                   "--dim", str(args.dim)], capture_output=True, text=True)
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
    print(f"# Scale: {args.queries} queries x dense + BM25 + hybrid, {args.dim}-d vectors ({machine()})\n")
    print(table(runs))
    if runs:
        print("\nrecall@20 on the synthetic needles (a sanity check, not a quality figure): " +
              "; ".join(f"{r['chunks']:,}: " + ", ".join(f"{k} {v:.2f}" for k, v in r["recall@20"].items()) for r in runs))
    for r in runs:
        if r.get("ray"):
            same = ", ".join(f"{k} {'identical' if v['identical'] else 'DIFFERENT'} (max |score diff| "
                             f"{v['max_score_diff']:.1e})" for k, v in r["ray"].items() if k != "actors")
            print(f"\n{r['chunks']:,} chunks on {len(r['ray']['actors'])} Ray search actors: {same}")
            for a in r["ray"]["actors"]:
                print(f"- actor (pid {a['pid']}) chunks [{a['start']:,}, {a['stop']:,}): vectors "
                      f"{a['vector_bytes'] / 2**20:,.0f} MB, BM25 postings {a['posting_bytes'] / 2**20:,.0f} MB, "
                      f"hybrid score rows {a['row_bytes'] / 2**20:,.0f} MB, resident {a['rss_bytes'] / 2**20:,.0f} MB")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine(), "runs": runs}, indent=1))
    return 1 if failed or not runs else 0


if __name__ == "__main__":
    sys.exit(main())
