"""Served cost per visitor: 10 visitors of a locked dashboard open "Grow the ground truth" and 4 cuts on Monitor.

Run: ``python benchmarks/bench_served_monitor.py [--visitors 10] [--size-mb 27] [--out FILE]``

What ``./run.sh dashboard --locked --monitor-log FILE`` serves (``python -m
ui.serve`` with ``RAGDIAG_LOCKED=1`` and ``RAGDIAG_MONITOR_LOG``), on the
bundled corpus with an empty cache folder (the store seeded from the shipped
index), and a generated JSON Lines query log of ``--size-mb`` MB: the ground
truth's own queries and 40 off-topic ones over 12 weeks, repeated (each
distinct text is embedded once, as in a real log that repeats its queries).
Each visitor is a fresh browser session (Debian's headless Chromium through
Playwright) that opens "Grow the ground truth", waits for the plan, then opens
the Monitor page at 4 cuts of its own (40 different cuts in all: no two
visitors share one, so only the log's one reading can be shared) and waits for
each cut's headline.

Recorded from ``/proc`` (Linux; the same counters psutil reads): the server
process's CPU seconds (user + system) and resident memory. The first visitor
pays for the shared work (the plan, the log's reading); the goal is that all
10 together cost at most 2x the first visitor's CPU, and that the server's
memory after the last visitor is back within 10% of where it stood after the
first. The server's log is searched for a traceback. Prints one table;
``--out`` writes the figures as JSON. Never fails CI: it is not collected by
pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRUTH = ROOT / "data" / "sklearn-user-guide.truth.json"
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from processes import stop_process  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TICK = os.sysconf("SC_CLK_TCK")
PAGE_S = 600  # the longest a visitor waits for one page
OFF_TOPIC = ("How long should I boil an egg for a runny yolk?", "What is the best time of year to visit Lisbon?",
             "How do I change a flat tyre on a mountain bike?", "Which wine goes with grilled salmon?",
             "How do I repot an orchid without killing it?", "What is the capital of Mongolia?")


def write_log(path: Path, size_mb: float, seed: int = 47) -> int:
    """A JSON Lines log of about ``size_mb`` MB (the truth's queries, 10% off-topic, over 12 weeks); its lines."""
    t = json.loads(TRUTH.read_text(encoding="utf-8"))
    answerable = [q for question in t["questions"] for q in question["queries"].values()]
    ood = [o["query"] for o in t.get("ood", [])] + list(OFF_TOPIC)
    rng = random.Random(seed)
    start = datetime(2026, 9, 7, tzinfo=timezone.utc)
    target, written, n = int(size_mb * 1_000_000), 0, 0
    with open(path, "w", encoding="utf-8") as f:
        while written < target:
            q = rng.choice(ood) if rng.random() < 0.1 else rng.choice(answerable)
            when = start + timedelta(seconds=n * 7)
            line = json.dumps({"query": q, "time": when.isoformat().replace("+00:00", "Z"), "tags": ["web"]}) + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
            n += 1
    return n


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of the process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(base: str, proc: subprocess.Popen, timeout_s: float = 300) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError("the server exited before it answered")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the server did not answer its health check")


IDLE_JS = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSpinner"]')
    && !document.querySelector('[data-testid="stProgress"]')"""


def settle(page) -> None:
    """The script run over and nothing computing (twice, a second apart: a rerun may follow a run)."""
    for _ in range(2):
        page.wait_for_function(IDLE_JS, timeout=PAGE_S * 1000, polling=200)
        page.wait_for_timeout(1000)


def visit(browser, base: str, cuts: list[float]) -> None:
    """One visitor: Grow the ground truth (its plan), then the Monitor page at each of ``cuts``."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(PAGE_S * 1000)
    try:
        page.goto(f"{base}/truth_review")
        page.get_by_role("heading", name="Can this set tell?").wait_for()
        settle(page)
        for cut in cuts:
            page.goto(f"{base}/monitor?config=E/hybrid&cut={cut:.3f}&offtopic=10")
            page.locator('[data-testid="stMain"] h4', has_text=f"cut {cut:.3f}").first.wait_for()
            settle(page)
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--visitors", type=int, default=10)
    ap.add_argument("--cuts", type=int, default=4, help="cuts per visitor on the Monitor page (default 4)")
    ap.add_argument("--size-mb", type=float, default=27.0)
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    from playwright import sync_api

    with tempfile.TemporaryDirectory(prefix="ragdiag-served-") as tmp:
        tmp = Path(tmp)
        log = tmp / "live.jsonl"
        lines = write_log(log, args.size_mb)
        port = free_port()
        env = {**os.environ, "RAGDIAG_LOCKED": "1", "RAGDIAG_MONITOR_LOG": str(log),
               "RAGDIAG_CACHE": str(tmp / "cache"), "PYTHONUNBUFFERED": "1"}
        server_log = tmp / "server.log"
        with open(server_log, "wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port),
                                     "--server.address", "127.0.0.1", "--server.headless", "true",
                                     "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                                    cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        rows = []
        try:
            wait_healthy(base, proc)
            pw = sync_api.sync_playwright().start()
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            try:
                # warm-up: the shared evaluation (every visitor's first page waits for it) is not a visitor's cost
                ctx = browser.new_context()
                page = ctx.new_page()
                page.set_default_timeout(PAGE_S * 1000)
                page.goto(f"{base}/?config=E/hybrid")
                settle(page)
                ctx.close()
                time.sleep(2)
                start_rss = rss_mb(proc.pid)
                rows.append(("before the first visitor", 0.0, start_rss, 0.0))
                for v in range(args.visitors):
                    cuts = [round(0.40 + 0.003 * (args.cuts * v + j), 3) for j in range(args.cuts)]
                    c0, t0 = cpu_s(proc.pid), time.monotonic()
                    visit(browser, base, cuts)
                    time.sleep(2)  # the session's close reaches the server
                    rows.append((f"visitor {v + 1} (cuts {cuts[0]:.3f}-{cuts[-1]:.3f})", cpu_s(proc.pid) - c0,
                                 rss_mb(proc.pid), time.monotonic() - t0))
            finally:
                browser.close()
                pw.stop()
        finally:
            stop_process(proc, grace_s=20)
        text = server_log.read_text(encoding="utf-8", errors="replace")
        tracebacks = text.count("Traceback (most recent call last)")
        size = log.stat().st_size
    first = rows[1][1]
    total = sum(r[1] for r in rows[1:])
    first_rss, last_rss = rows[1][2], rows[-1][2]
    print(f"log: {size / 1e6:.1f} MB, {lines:,} lines; {args.visitors} visitors, {args.cuts} cuts each")
    print(f"{'':44} {'server CPU s':>12} {'RSS MB':>8} {'wall s':>8}")
    for name, cpu, rss, wall in rows:
        print(f"{name:44} {cpu:12.1f} {rss:8.0f} {wall:8.1f}")
    print(f"all {args.visitors} visitors: {total:.1f} s of server CPU = {total / first:.2f}x the first visitor's "
          f"{first:.1f} s (goal: at most 2x)")
    print(f"memory: {first_rss:.0f} MB after the first visitor, {last_rss:.0f} MB after the last "
          f"({100 * (last_rss / first_rss - 1):+.1f}%; goal: within 10%); {start_rss:.0f} MB before any visitor")
    print(f"server log: {tracebacks} tracebacks")
    if args.out:
        Path(args.out).write_text(json.dumps({
            "log_mb": size / 1e6, "lines": lines, "visitors": args.visitors, "cuts_each": args.cuts,
            "rows": [{"name": n, "cpu_s": c, "rss_mb": r, "wall_s": w} for n, c, r, w in rows],
            "cpu_ratio": total / first, "rss_change": last_rss / first_rss - 1, "tracebacks": tracebacks}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
