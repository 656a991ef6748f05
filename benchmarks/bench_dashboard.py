"""Time to the first recall table and to the full Overview, in a real browser, from an empty cache.

Run: ``python benchmarks/bench_dashboard.py [--modes snapshot,no-snapshot] [--cold-eval] [--before DIR]``

For each mode: a fresh empty cache folder, ``python -m ui.serve`` (what
``./run.sh dashboard`` runs: Streamlit on ``app.py``, the configured data's
evaluation started with the server; ``streamlit run app.py`` in trees from
before it) on the bundled corpus, and Debian's headless Chromium (the
browser of the tests, driven by Playwright) opening the Overview as soon as
the server answers its health check. Recorded, from that moment: first
paint (the Overview heading), first recall table (the grid shows
``E/hybrid``), and the full table (every strategy's rows, nothing left
computing); also the server's start-up (launch to health check), so the full
table's time from launch is there too, and the CPU seconds the server (from
its launch) and the browser used (CPU seconds suffer less from a busy
machine than wall-clock ones).
``no-snapshot`` sets ``RAGDIAG_NO_SNAPSHOT=1``: what a user's own corpus goes
through. A mode ending in ``-late`` (``no-snapshot-late``) opens the page
only once the server's console says every strategy is done, and times the
page from then: a visitor who comes after the operator started the server.

Mode ``summary`` times the Summary, the first page a visitor gets, on an unseen corpus
(``--corpus DIR --truth FILE``, default the bundled one copied to a temporary folder; no shipped
index, an empty store): from the server's launch until the page shows the recommendation ("Ship
...") with its three cards, while other strategies may still be computing; it records what the page
says is still computing at that moment, and the server's CPU seconds until then. With
``--cold-eval`` a cold ``eval`` of the same corpus runs right after it in every repeat (alternated),
for the ratio "first Summary / cold eval" (goal: at most 1/3).

``--cold-eval`` also times a cold full ``python -m ragdiag eval --no-snapshot``
(empty cache) of every tree in every repeat, beside that repeat's dashboard
runs, for the side-by-side ratio "all six strategies in the dashboard / its
tree's cold eval" (the machine's speed drifts between repeats; the ratio is
taken within one). ``--before DIR`` measures another
checkout (e.g. a ``git worktree`` of the previous commit) the same way,
alternated with this one (before, after, before, after...), so a before/after
comparison shares the machine's load; ``--repeats`` repeats each pair.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from processes import stop_process  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STRATEGIES = "ABCDEF"
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a live process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def cpu_seconds(root_pid: int, exclude: int | None = None) -> float:
    """CPU seconds used so far by ``root_pid`` and its live descendants (``exclude``'s tree left out)."""
    stats = {int(p.name): s for p in Path("/proc").iterdir() if p.name.isdigit() and (s := _stat(int(p.name)))}
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root_pid]
    while todo:
        pid = todo.pop()
        if pid == exclude or pid not in stats:
            continue
        total += stats[pid][1]
        todo.extend(children.get(pid, ()))
    return total


def warms(root: Path) -> bool:
    """Whether ``root``'s dashboard starts its evaluation with the server (``ui/serve.py``; trees before it do not)."""
    return (root / "ui" / "serve.py").exists()


def serve(root: Path, env: dict, log: Path) -> tuple[subprocess.Popen, str, float, float]:
    """What ``./run.sh dashboard`` runs in ``root`` (``ui.serve``, or ``streamlit run app.py`` in trees before
    it), on a free port: (process, base url, launch time, time it answered its health check)."""
    port = free_port()
    launcher = ["-m", "ui.serve"] if warms(root) else ["-m", "streamlit", "run", "app.py"]
    cmd = [sys.executable, *launcher, "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    launched = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, env={**os.environ, **env}, stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, base, launched, time.perf_counter()
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"streamlit did not start: {log.read_text(errors='replace')[-2000:]}")


def poll(page, strategies, timeout_s: float, poll_s: float, t0: float, *, settled: bool) -> float | None:
    """Seconds from ``t0`` until the grid shows ``S/hybrid`` for every strategy (``settled``: and nothing is
    left computing); None on timeout. Checked every ``poll_s`` with cheap element counts, so the harness
    adds little work to the browser (a ``wait_for`` re-checks the page on every frame)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not settled or not page.get_by_text("still computing").count():
            grid = page.locator('[data-testid="stDataFrame"]:visible').first
            if all(grid.get_by_text(f"{s}/hybrid", exact=True).count() for s in strategies):
                return time.perf_counter() - t0
        time.sleep(poll_s)
    return None


def wait_for_line(log: Path, text: str, timeout_s: float) -> float | None:
    """``time.perf_counter()`` when ``text`` appears in ``log`` (checked every 0.5 s); None on timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return time.perf_counter()
        time.sleep(0.5)
    return None


def measure(browser, root: Path, mode: str, timeout_s: float, poll_s: float) -> dict:
    """One dashboard run. ``mode``: ``snapshot`` or ``no-snapshot``; with ``-late`` (e.g. ``no-snapshot-late``)
    the browser opens the page only when the server's console says every strategy is done, and the page's
    times count from that moment (a visitor who comes after the operator started the server)."""
    late = mode.endswith("-late")
    with tempfile.TemporaryDirectory() as tmp:
        env = {"RAGDIAG_CACHE": str(Path(tmp) / "cache"), "PYTHONUNBUFFERED": "1"}
        env.update(RAGDIAG_STRATEGIES="", RAGDIAG_RETRIEVERS="", RAGDIAG_CORPUS="", RAGDIAG_TRUTH="")
        env["RAGDIAG_NO_SNAPSHOT"] = "1" if mode.startswith("no-snapshot") else ""
        log = Path(tmp) / "streamlit.log"
        proc, base, launched, t0 = serve(root, env, log)
        boot = t0 - launched
        me = os.getpid()
        others0 = cpu_seconds(me, exclude=proc.pid)  # the server's CPU counts from its launch: it may start early
        waited = None
        try:
            if late:
                done = wait_for_line(log, "ragdiag: all strategies done", timeout_s)
                if done is None:
                    raise SystemExit(f"{root.name} {mode}: the console never said all strategies were done")
                waited, t0 = done - t0, time.perf_counter()
            ctx, page = open_page(browser, base, 2400, timeout_s, "Overview")
            paint = time.perf_counter() - t0
            first = poll(page, ["E"], timeout_s, poll_s, t0, settled=False)
            if first is None:
                raise SystemExit(f"{root.name} {mode}: no recall table within {timeout_s} s")
            print(f"{root.name} {mode}: first paint {paint:.1f} s, first recall table {first:.1f} s", flush=True)
            full = poll(page, STRATEGIES, timeout_s, poll_s, t0, settled=True)
            server_cpu = cpu_seconds(proc.pid)
            others_cpu = cpu_seconds(me, exclude=proc.pid) - others0  # browser, its driver and this script
            notes = [line for line in page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
                     if "shipped index" in line]
            if waited is not None:
                notes.insert(0, f"page opened {waited:.1f} s after serving, when the console said all were done")
            ctx.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return {"tree": root, "mode": mode, "boot": boot, "paint": paint, "first": first, "full": full,
            "server_cpu": server_cpu, "browser_cpu": others_cpu, "note": notes[0] if notes else ""}


def open_page(browser, base: str, height: int, timeout_s: float, heading: str):
    """A new browser context at 1440 x ``height`` on ``base``, once ``heading`` shows: (context, page)."""
    ctx = browser.new_context(viewport={"width": 1440, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(timeout_s * 1000)
    page.goto(base)
    page.get_by_role("heading", name=heading).wait_for()
    return ctx, page


def summary_ready(page) -> bool:
    """Whether the Summary shows its recommendation ("Ship ...") and its three cards."""
    return bool(page.get_by_role("heading", name="Ship", exact=False).count()
                and page.locator('[data-testid="stMetric"]').count() >= 3)


def measure_summary(browser, root: Path, corpus: Path, truth: Path, timeout_s: float, poll_s: float) -> dict:
    """One cold Summary: an unseen corpus (no shipped index), an empty store; seconds from the server's launch to
    the recommendation with its cards, what was still computing then, and the server's CPU seconds until then."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {"RAGDIAG_CACHE": str(Path(tmp) / "cache"), "PYTHONUNBUFFERED": "1", "RAGDIAG_NO_SNAPSHOT": "1",
               "RAGDIAG_CORPUS": str(corpus), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_STRATEGIES": "",
               "RAGDIAG_RETRIEVERS": ""}
        log = Path(tmp) / "streamlit.log"
        proc, base, launched, t0 = serve(root, env, log)
        try:
            ctx, page = open_page(browser, base, 1200, timeout_s, "Summary")
            paint = time.perf_counter() - launched
            deadline = time.monotonic() + timeout_s
            first = None
            while time.monotonic() < deadline:  # cheap element counts every poll_s: the page's own state
                if summary_ready(page):
                    first = time.perf_counter() - launched
                    break
                time.sleep(poll_s)
            server_cpu = cpu_seconds(proc.pid)
            if first is None:
                raise SystemExit(f"{root.name} summary: no recommendation within {timeout_s} s")
            status = [t for t in page.locator('[data-testid="stCaptionContainer"], [data-testid="stAlert"]')
                      .all_inner_texts() if "computing" in t or "rovisional" in t]
            ctx.close()
        finally:
            stop_process(proc, grace_s=20)  # SIGKILL when still busy (a strategy mid-embedding)
    return {"tree": root, "mode": "summary", "boot": t0 - launched, "paint": paint, "first": first,
            "server_cpu": server_cpu, "status": " / ".join(" ".join(s.split()) for s in status)}


def cold_eval(root: Path, corpus: Path | None = None, truth: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of a cold full eval (empty cache, no shipped index) of the bundled corpus, or of
    ``corpus`` with ``truth``."""
    with tempfile.TemporaryDirectory() as tmp:
        before = os.times()
        t = time.perf_counter()
        inputs = [] if corpus is None else ["--corpus", str(corpus), "--truth", str(truth)]
        subprocess.run([sys.executable, "-m", "ragdiag", "eval", "--no-snapshot", "--cache", str(Path(tmp) / "c"),
                        *inputs], cwd=root, check=True, capture_output=True)
        wall = time.perf_counter() - t
        after = os.times()
        return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def _fmt(x: float | None) -> str:
    return f"{x:.1f}" if x is not None else "timeout"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default="snapshot,no-snapshot")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--poll", type=float, default=0.5, help="seconds between checks for the tables")
    ap.add_argument("--cold-eval", action="store_true")
    ap.add_argument("--before", help="another checkout to measure alternately with this one (before a change)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--corpus", help="mode summary: the unseen corpus (default: a copy of the bundled one)")
    ap.add_argument("--truth", help="mode summary: its ground truth (default: the copy's)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    if args.modes == "summary":
        return summary_main(args, sync_playwright)
    trees = ([Path(args.before).resolve()] if args.before else []) + [ROOT]
    load = [os.getloadavg()[0]]
    results, colds = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        for rep in range(args.repeats):
            for mode in args.modes.split(","):
                for tree in trees:
                    if mode.endswith("-late") and not warms(tree):
                        continue  # that tree starts nothing before a visit
                    results.append({**measure(browser, tree, mode, args.timeout, args.poll), "repeat": rep})
                    load.append(os.getloadavg()[0])
                    print(results[-1], flush=True)
            if args.cold_eval:  # in every repeat, beside its dashboard runs: the machine's speed drifts
                for tree in trees:  # each tree's own eval: a change to the shared code moves both
                    colds.append((tree, rep, *cold_eval(tree)))
                    load.append(os.getloadavg()[0])
                    print(f"{tree.name} cold eval (repeat {rep + 1}): {colds[-1][2]:.1f} s "
                          f"({colds[-1][3]:.1f} CPU s)", flush=True)
        browser.close()
    print(f"\n# Dashboard from an empty cache (bundled corpus, all strategies and retrievers)\n\n"
          f"1-minute load average during the run: {min(load):.1f} to {max(load):.1f} on {os.cpu_count()} CPUs\n")
    print("Times count from the health check's answer (serving); \"from launch\" adds the server's start-up. "
          "Server CPU counts from its launch.\n")
    print("| tree | mode | start-up s | first paint s | first recall table s | full Overview s | full from launch s "
          "| server CPU s | browser CPU s | note |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        late = r["mode"].endswith("-late")  # its times count from opening the page
        since = "-" if late else _fmt(r["full"] + r["boot"] if r["full"] is not None else None)
        print(f"| {r['tree'].name} | {r['mode']} | {r['boot']:.1f} | {r['paint']:.1f} | {r['first']:.1f} "
              f"| {_fmt(r['full'])} | {since} | {r['server_cpu']:.1f} | {r['browser_cpu']:.1f} | {r['note']} |")
    if args.repeats > 1:
        print("\nmedians:")
        for mode in args.modes.split(","):
            for tree in trees:
                rs = [r for r in results if r["mode"] == mode and r["tree"] == tree]
                fulls = [r["full"] for r in rs if r["full"] is not None]
                print(f"{tree.name} {mode}: first {statistics.median(r['first'] for r in rs):.1f} s, full "
                      f"{_fmt(statistics.median(fulls) if fulls else None)} s")
    if colds:
        print("\ncold full `eval --no-snapshot` (empty cache), each tree in every repeat:")
        for tree in trees:
            walls = [(w, c) for t, _, w, c in colds if t == tree]
            print(f"{tree.name}: " + ", ".join(f"{w:.1f} s ({c:.1f} CPU s)" for w, c in walls)
                  + (f"; median {statistics.median(w for w, _ in walls):.1f} s" if len(walls) > 1 else ""))
        wall_of = {(t, rep): w for t, rep, w, _ in colds}
        ratios: dict[tuple, list[float]] = {}
        for r in results:
            if r["mode"].endswith("-late"):
                continue  # opened after the work was done: no ratio to the eval
            wall = wall_of[(r["tree"], r["repeat"])]
            line = f"{r['tree'].name} {r['mode']} (repeat {r['repeat'] + 1}): first table / its cold eval = " \
                   f"{r['first'] / wall:.2f}"
            if r["full"]:
                line += (f"; all six strategies in the dashboard / its cold eval = {r['full'] / wall:.2f} "
                         f"(from launch {(r['full'] + r['boot']) / wall:.2f})")
                ratios.setdefault((r["tree"].name, r["mode"]), []).append(r["full"] / wall)
                ratios.setdefault((r["tree"].name, r["mode"] + ", from launch"), []).append(
                    (r["full"] + r["boot"]) / wall)
            print(line)
        if args.repeats > 1:
            for (name, mode), rs in ratios.items():
                print(f"{name} {mode}: median of all six / its cold eval = {statistics.median(rs):.2f}")


def summary_main(args, sync_playwright) -> None:
    """Mode ``summary``: the cold Summary and a cold eval of the same unseen corpus, alternated in every repeat."""
    import shutil

    with tempfile.TemporaryDirectory() as data:
        if args.corpus:
            corpus, truth = Path(args.corpus).resolve(), Path(args.truth).resolve()
        else:  # a copy of the bundled corpus: the same texts, but nothing of it in any store or shipped index
            corpus = Path(data) / "unseen"
            shutil.copytree(ROOT / "data" / "sklearn-user-guide", corpus)
            truth = Path(data) / "unseen.truth.json"
            shutil.copy(ROOT / "data" / "sklearn-user-guide.truth.json", truth)
        load, rows = [os.getloadavg()[0]], []
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            for rep in range(args.repeats):
                r = measure_summary(browser, ROOT, corpus, truth, args.timeout, args.poll)
                load.append(os.getloadavg()[0])
                print(f"summary (repeat {rep + 1}): {r['first']:.1f} s from launch ({r['server_cpu']:.1f} server CPU "
                      f"s); {r['status']}", flush=True)
                wall, cpu = cold_eval(ROOT, corpus, truth) if args.cold_eval else (None, None)
                load.append(os.getloadavg()[0])
                if wall is not None:
                    print(f"cold eval (repeat {rep + 1}): {wall:.1f} s ({cpu:.1f} CPU s)", flush=True)
                rows.append({**r, "repeat": rep, "eval": wall, "eval_cpu": cpu})
            browser.close()
    print(f"\n# The first Summary on an unseen corpus ({corpus.name}, no shipped index, empty store)\n\n"
          f"1-minute load average during the run: {min(load):.1f} to {max(load):.1f} on {os.cpu_count()} CPUs\n")
    print("| repeat | start-up s | Summary painted s | recommendation and cards s | server CPU s | cold eval s "
          "(CPU s) | Summary / cold eval (wall) | (CPU) | still computing then |\n|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        ev = "-" if r["eval"] is None else f"{r['eval']:.1f} ({r['eval_cpu']:.1f})"
        ratio = "-" if r["eval"] is None else f"{r['first'] / r['eval']:.2f}"
        cpu_ratio = "-" if r["eval"] is None else f"{r['server_cpu'] / r['eval_cpu']:.2f}"
        print(f"| {r['repeat'] + 1} | {r['boot']:.1f} | {r['paint']:.1f} | {r['first']:.1f} | {r['server_cpu']:.1f} "
              f"| {ev} | {ratio} | {cpu_ratio} | {r['status']} |")
    if len(rows) > 1 and rows[0]["eval"] is not None:
        print(f"\nmedian Summary / cold eval: {statistics.median(r['first'] / r['eval'] for r in rows):.2f} (wall), "
              f"{statistics.median(r['server_cpu'] / r['eval_cpu'] for r in rows):.2f} (CPU)")


if __name__ == "__main__":
    main()
