"""Time to the first recall table and to the full Overview, in a real browser, from an empty cache.

Run: ``python benchmarks/bench_dashboard.py [--modes snapshot,no-snapshot] [--cold-eval]``

For each mode: a fresh empty cache folder, ``streamlit run app.py`` (what
``./run.sh dashboard`` serves) on the bundled corpus, and Debian's headless
Chromium (the browser of the tests, driven by Playwright) opening the
Overview as soon as the server answers its health check. Recorded, from
that moment: first paint (the Overview heading), first recall table (the
grid shows ``E/hybrid``), and the full table (every strategy's rows, nothing
left computing). ``no-snapshot`` sets ``RAGDIAG_NO_SNAPSHOT=1``: what a user's
own corpus goes through. ``--cold-eval`` also times a cold full
``python -m ragdiag eval --no-snapshot`` (empty cache) in the same run, for
the side-by-side ratio.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STRATEGIES = "ABCDEF"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(env: dict, log: Path) -> tuple[subprocess.Popen, str, float]:
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **env}, stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, base, time.perf_counter()
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"streamlit did not start: {log.read_text(errors='replace')[-2000:]}")


def measure(browser, mode: str, timeout_s: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {"RAGDIAG_CACHE": str(Path(tmp) / "cache"), "PYTHONUNBUFFERED": "1"}
        env.update(RAGDIAG_STRATEGIES="", RAGDIAG_RETRIEVERS="", RAGDIAG_CORPUS="", RAGDIAG_TRUTH="")
        if mode == "no-snapshot":
            env["RAGDIAG_NO_SNAPSHOT"] = "1"
        else:
            env["RAGDIAG_NO_SNAPSHOT"] = ""
        proc, base, t0 = serve(env, Path(tmp) / "streamlit.log")
        try:
            ctx = browser.new_context(viewport={"width": 1440, "height": 2400})
            page = ctx.new_page()
            page.set_default_timeout(timeout_s * 1000)
            page.goto(base)
            page.get_by_role("heading", name="Overview").wait_for()
            paint = time.perf_counter() - t0
            grid = page.locator('[data-testid="stDataFrame"]:visible').first
            grid.get_by_text("E/hybrid", exact=True).first.wait_for(state="attached")
            first = time.perf_counter() - t0
            print(f"{mode}: first paint {paint:.1f} s, first recall table {first:.1f} s", flush=True)
            full = None
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                main = page.locator('[data-testid="stMain"]').inner_text()
                grid = page.locator('[data-testid="stDataFrame"]:visible').first
                rows = all(grid.get_by_text(f"{s}/hybrid", exact=True).count() for s in STRATEGIES)
                if rows and "still computing" not in main:
                    full = time.perf_counter() - t0
                    break
                time.sleep(0.5)
            notes = [line for line in page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
                     if "shipped index" in line]
            ctx.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return {"mode": mode, "paint": paint, "first": first, "full": full, "note": notes[0] if notes else ""}


def cold_eval() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ragdiag", "eval", "--no-snapshot", "--cache", str(Path(tmp) / "c")],
                       cwd=ROOT, check=True, capture_output=True)
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default="snapshot,no-snapshot")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--cold-eval", action="store_true")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        for mode in args.modes.split(","):
            results.append(measure(browser, mode, args.timeout))
            print(results[-1], flush=True)
        browser.close()
    cold = cold_eval() if args.cold_eval else None
    print("\n# Dashboard from an empty cache (bundled corpus, all strategies and retrievers)\n")
    print("| mode | first paint s | first recall table s | full Overview s | note |\n|---|---:|---:|---:|---|")
    for r in results:
        full = f"{r['full']:.1f}" if r["full"] is not None else "timeout"
        print(f"| {r['mode']} | {r['paint']:.1f} | {r['first']:.1f} | {full} | {r['note']} |")
    if cold is not None:
        print(f"\ncold full `eval --no-snapshot` (empty cache), same run: {cold:.1f} s")
        for r in results:
            print(f"{r['mode']}: first table / cold eval = {r['first'] / cold:.2f}"
                  + (f"; full / cold eval = {r['full'] / cold:.2f}" if r["full"] else ""))


if __name__ == "__main__":
    main()
