"""How long a move of the cut slider takes to redraw the Threshold page, in a real browser.

Run: ``python benchmarks/bench_slider.py [--moves 20] [--synthetic 100000] [--skip-bundled] [--before DIR]``

The dashboard is served (``streamlit run app.py``, an empty store folder of its own) and Debian's headless
Chromium (the tests' browser, driven by Playwright) opens ``/threshold`` at 1400 x 900 and waits until every
strategy is done and the page stands still. Then the page's own cut slider takes the focus and the right arrow is
pressed ``--moves`` times (left once the last stop is reached). One move is timed from the key press (the page's
clock) to the last change of the page's DOM before it stands still again: the rerun the move asks for has started
and finished (the websocket's run counts of ``tests/helpers/browser_wait.py``), nothing is stale, and the outcome sentence,
both charts' titles and the slider all show the new cut (checked after each move; a move that does not
show it fails the run). Printed: each move's milliseconds, the median and the 95th percentile.

``--synthetic N`` also measures a synthetic corpus of ``N`` paragraphs (``benchmarks/synthetic.py``'s
pseudo-words, written as Markdown sections, strategy C, dense retrieval only; strategy C cuts the longer
paragraphs in two: 100,000 paragraphs are 163,273 chunks; its 50 questions plant a needle each, plus 20
off-topic queries). Embedding is not what is measured: the store's vectors come from a
bag-of-words hashing encoder (``tests/helpers/fakes.py``'s FakeEncoder at 384 dimensions, its stamp says so).

``--before DIR`` measures another checkout the same way (alternated with this one per corpus), for a
before/after ratio under the same load. The machine and ``uptime`` are printed; nothing here fails CI.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_dashboard import ARGS, CHROMIUM, cpu_seconds, free_port  # noqa: E402
from browser_wait import SETTLED_JS, WATCH_JS, QUIET_MS  # noqa: E402
from processes import stop_process  # noqa: E402

LIMIT_MS = 1_800_000  # an evaluation of 100k chunks on a loaded machine: the first wait only
CUT_LABEL = "Cut: lower refuses more"  # ui.context.CUT_SLIDER_LABEL (the page's own slider)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def machine() -> str:
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.machine()
    return f"{os.cpu_count()} CPU ({cpu}), Python {platform.python_version()}"


# ----- a synthetic corpus as Markdown ------------------------------------------------------------------------
def write_synthetic(folder: Path, n_chunks: int, *, sections: int = 100) -> tuple[Path, Path]:
    """``n_chunks`` pseudo-word paragraphs as sections of Markdown files (``sections`` per file), and a truth file:
    50 questions whose needle sentence sits in one paragraph, their two phrasings, and 20 off-topic queries made of
    words no paragraph holds."""
    from synthetic import make_kb

    kb = make_kb(n_chunks, n_queries=100, seed=0)
    root = folder / "synthetic"
    root.mkdir(parents=True, exist_ok=True)
    for f in range(0, n_chunks, sections):
        body = "".join(f"## Part {i}\n\n{kb.texts[i]}\n\n" for i in range(f, min(n_chunks, f + sections)))
        (root / f"doc{f // sections:05d}.md").write_text(f"# Document {f // sections}\n\n{body}", encoding="utf-8")
    by_q: dict[str, dict] = {}
    for qid, text, question in kb.queries:
        pos = int(kb.holders[question][0])
        by_q.setdefault(question, {"id": question, "needle": _needle(kb.texts[pos], text), "queries": {}})
        by_q[question]["queries"][qid.split(":")[1]] = text
    ood = [{"id": f"o{i:02d}", "kind": "far" if i % 2 else "near",
            "query": f"where can I find the {['zyxt', 'qwpl', 'vvbn', 'kkrq', 'xjwo'][i % 5]} form number {i}"}
           for i in range(20)]
    truth = folder / "synthetic.truth.json"
    truth.write_text(json.dumps({"questions": list(by_q.values()), "ood": ood}, indent=1), encoding="utf-8")
    return root, truth


def _needle(paragraph: str, query: str) -> str:
    """The paragraph's sentence sharing the most words with the query (the planted needle)."""
    words = set(query.lower().split())
    sentences = [s.strip().rstrip(".") + "." for s in paragraph.split(". ") if s.strip()]
    return max(sentences, key=lambda s: len(words & set(s.lower().rstrip(".").split())))


def fake_encoder(model=None, **options):
    """The benchmark's hashing encoder (``RAGDIAG_ENCODER=bench_slider:fake_encoder``): not MiniLM, stamped so."""
    from fakes import FakeEncoder

    return FakeEncoder(dim=384)


# ----- the server and the moves --------------------------------------------------------------------------------
def serve(tree: Path, env_extra: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    from browser_wait import wait_healthy

    port = free_port()
    env = {**os.environ, **env_extra, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "streamlit", "run", str(tree / "app.py"), "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    out = open(log, "wb")  # noqa: SIM115 - closed in stop()
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)
    proc._log = out  # type: ignore[attr-defined]
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base, proc, log, limit_s=120)
    return proc, base


def stop(proc: subprocess.Popen) -> None:
    stop_process(proc)
    proc._log.close()  # type: ignore[attr-defined]


MOVE_JS = """() => { const R = window.__ragdiagRuns; return {asked: R.asked, t: performance.now()}; }"""
ASKED_JS = """(n) => window.__ragdiagRuns.asked > n"""
DONE_JS = """() => ({changed: window.__ragdiagRuns.changed, ended: window.__ragdiagRuns.ended})"""


def moves(browser, base: str, n_moves: int, server_pid: int) -> tuple[list[float], list[float], float, float]:
    """Open /threshold, wait for it whole, then time ``n_moves`` arrow presses; returns (ms per move until the page
    stands still, ms per move until the server said its run finished, s to open, the server's CPU ms per move)."""
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    ctx.add_init_script(WATCH_JS)
    page = ctx.new_page()
    page.set_default_timeout(LIMIT_MS)
    try:
        t0 = time.perf_counter()
        page.goto(f"{base}/threshold")
        expect(page.get_by_role("heading", name="Threshold", exact=True)).to_be_visible(timeout=LIMIT_MS)
        expect(page.locator('[data-testid="stProgress"]')).to_have_count(0, timeout=LIMIT_MS)
        expect(page.get_by_text("Strategies still computing")).to_have_count(0, timeout=LIMIT_MS)
        page.wait_for_function(SETTLED_JS, arg=QUIET_MS, timeout=LIMIT_MS, polling=100)
        opened = time.perf_counter() - t0
        thumb = page.locator('[data-testid="stMain"]').get_by_role("slider", name=CUT_LABEL)
        expect(thumb).to_have_count(1)
        thumb.focus()
        last = int(thumb.get_attribute("aria-valuemax") or 0)
        times, runs, key = [], [], "ArrowRight"
        cpu0 = cpu_seconds(server_pid)
        for _ in range(n_moves):
            before = int(thumb.input_value())
            if key == "ArrowRight" and before >= last or key == "ArrowLeft" and before <= 0:
                key = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"
            start = page.evaluate(MOVE_JS)
            page.keyboard.press(key)
            page.wait_for_function(ASKED_JS, arg=start["asked"], timeout=LIMIT_MS, polling="raf")
            page.wait_for_function(SETTLED_JS, arg=QUIET_MS, timeout=LIMIT_MS, polling=50)
            done = page.evaluate(DONE_JS)
            cut = thumb.get_attribute("aria-valuetext")
            assert int(thumb.input_value()) != before, "the slider did not move"
            main = page.locator('[data-testid="stMain"]')
            sentence = main.locator('[data-testid="stMarkdownContainer"] p').filter(
                has_text=re.compile(r"^At cut " + re.escape(cut) + r" \([a-z ]+\): of \d+ answerable"))
            expect(sentence).to_have_count(1, timeout=1)  # the outcome sentence, at the new cut
            expect(main.locator('[data-testid="stVegaLiteChart"]').get_by_text(f"at cut {cut}", exact=False)
                   ).not_to_have_count(0, timeout=1)  # the trade-off chart's title
            expect(main.locator('[data-testid="stVegaLiteChart"]').get_by_text(f"At cut {cut}:", exact=False)
                   ).not_to_have_count(0, timeout=1)  # the histogram's title
            times.append(max(done["changed"], done["ended"]) - start["t"])
            runs.append(done["ended"] - start["t"])
        return times, runs, opened, 1000 * (cpu_seconds(server_pid) - cpu0) / max(1, len(times))
    finally:
        ctx.close()


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(0.95 * len(s) + 0.5) - 1))]


def measure(tree: Path, label: str, env: dict[str, str], n_moves: int, browser) -> dict:
    with tempfile.TemporaryDirectory(prefix="ragdiag-slider-") as tmp:
        log = Path(tmp) / "streamlit.log"
        proc, base = serve(tree, {**env, "RAGDIAG_CACHE": str(Path(tmp) / "cache")}, log)
        try:
            times, runs, opened, cpu = moves(browser, base, n_moves, proc.pid)
        except Exception:
            print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
            raise
        finally:
            stop(proc)
    row = {"corpus": label, "tree": str(tree.name), "moves": len(times), "median_ms": statistics.median(times),
           "p95_ms": p95(times), "run_median_ms": statistics.median(runs), "open_s": opened,
           "server_cpu_ms": cpu,
           "times_ms": [round(t) for t in times]}
    print(f"{label} [{tree.name}]: median {row['median_ms']:.0f} ms, p95 {row['p95_ms']:.0f} ms over "
          f"{len(times)} moves (the server's run over after {row['run_median_ms']:.0f} ms, median; the server's CPU "
          f"{cpu:.0f} ms a move; page opened in "
          f"{opened:.1f} s); {row['times_ms']}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--moves", type=int, default=20)
    ap.add_argument("--synthetic", type=int, default=0, help="also a synthetic corpus of this many paragraphs")
    ap.add_argument("--skip-bundled", action="store_true")
    ap.add_argument("--before", type=Path, help="another checkout, measured the same way (alternated)")
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    print(machine())
    print("uptime at the start:", uptime(), flush=True)
    trees = [ROOT] + ([args.before.resolve()] if args.before else [])
    pypath = os.pathsep.join([str(ROOT / "benchmarks"), str(ROOT / "tests" / "helpers")])
    rows = []
    with tempfile.TemporaryDirectory(prefix="ragdiag-synthetic-") as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        corpora = [] if args.skip_bundled else [("bundled", {})]
        if args.synthetic:
            t = time.perf_counter()
            root, truth = write_synthetic(Path(tmp), args.synthetic)
            print(f"synthetic corpus of {args.synthetic} paragraphs written in {time.perf_counter() - t:.1f} s",
                  flush=True)
            corpora.append((f"synthetic {args.synthetic:,}", {
                "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_STRATEGIES": "C",
                "RAGDIAG_RETRIEVERS": "dense", "RAGDIAG_ENCODER": "bench_slider:fake_encoder",
                "PYTHONPATH": pypath}))
        for label, env in corpora:
            for tree in trees:
                rows.append(measure(tree, label, env, args.moves, browser))
        browser.close()
    print("uptime at the end:", uptime())
    print("\n| corpus | tree | moves | median (ms) | p95 (ms) | run over, median (ms) | server CPU a move (ms) |\n"
          "|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['corpus']} | {r['tree']} | {r['moves']} | {r['median_ms']:.0f} | {r['p95_ms']:.0f} | "
              f"{r['run_median_ms']:.0f} | {r['server_cpu_ms']:.0f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
