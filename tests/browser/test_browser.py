"""What a person sees: the real app in headless Chromium (Playwright), on the tiny corpus.

Starts ``streamlit run app.py`` on a free port of 127.0.0.1 with the tiny
corpus of ``test_app.py`` and an empty cache folder, and drives Debian's
``/usr/bin/chromium`` (installed by ``scripts/browser-deps.sh``; Playwright's
own browsers are not used). Screenshots go to ``test-artifacts/``. Every wait goes through ``browser_wait``
(the run over, then the one element read holding its value).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from browser_wait import LIMIT_MS, count, main, one, settle, sidebar, text_of, value_of, wait_healthy, watched

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
COLD_TIMEOUT_MS = 180_000  # first page: loads the model and builds the indexes
TIMEOUT_MS = 60_000
#: The overall limit of a wait for a page's own "done" state (the run over, an element present): a wait
#: ends as soon as the state is reached, so a slow machine (a load of 10-30 on 2 cores) makes a test slower, not red.
SETTLE_LIMIT_MS = LIMIT_MS

pytestmark = [pytest.mark.browser, pytest.mark.model]

if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is missing (scripts/browser-deps.sh installs Debian's chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -r requirements-dev.txt)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env_extra: dict[str, str], log_path: Path, *,
                 launcher: list[str] | None = None) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` (or ``launcher``'s arguments, e.g. ``-m ui.serve``) on a free local port;
    returns (process, base url) once it is healthy."""
    port = free_port()
    env = {**os.environ, **env_extra, "PYTHONUNBUFFERED": "1"}
    run = launcher if launcher is not None else ["-m", "streamlit", "run", str(ROOT / "app.py")]
    cmd = [sys.executable, *run, "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    log = open(log_path, "wb")  # noqa: SIM115 - closed by stop_server
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    proc._log = log  # type: ignore[attr-defined]
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, log_path)
    except RuntimeError:
        stop_server(proc)
        raise
    return proc, base


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    log = getattr(proc, "_log", None)
    if log is not None:
        log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from apptest import ENV, write_tiny_corpus

    base = tmp_path_factory.mktemp("browser")
    root, truth = write_tiny_corpus(base)
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(base / "cache")}
    proc, url = start_server(env, base / "streamlit.log")
    try:
        yield url
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def browser():
    pw = sync_api.sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
    except Exception as exc:  # noqa: BLE001 - a browser that cannot start here is an environment problem
        pw.stop()
        pytest.skip(f"chromium could not start: {exc}")
    try:
        yield watched(b)  # every page counts Streamlit's runs: browser_wait.settle waits for the last one
    finally:
        b.close()
        pw.stop()


@pytest.fixture
def page(browser):
    ARTIFACTS.mkdir(exist_ok=True)
    # Tall viewport: Streamlit scrolls inside its main block, so a full-page shot is the viewport.
    ctx = browser.new_context(viewport={"width": 1440, "height": 2200})
    p = ctx.new_page()
    p.set_default_timeout(TIMEOUT_MS)
    dialogs: list[str] = []
    p.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    p.dialogs = dialogs  # type: ignore[attr-defined]
    try:
        yield p
    finally:
        ctx.close()


def viewport_page(browser, width: int, height: int, timeout_ms: int = TIMEOUT_MS):
    """A page of ``width`` x ``height`` in a context of its own, closed after (for a module fixture's ``yield from``)."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    p = ctx.new_page()
    p.set_default_timeout(timeout_ms)
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        yield p
    finally:
        ctx.close()


def wait_idle(page, timeout_ms: int = SETTLE_LIMIT_MS) -> None:
    """Wait until the run last asked for is over and the page stands still (``browser_wait.settle``)."""
    settle(page, timeout_ms)


def wait_settled(page, timeout_ms: int = SETTLE_LIMIT_MS) -> None:
    """Wait until no strategy is still computing and the run is over (``browser_wait.settle`` waits for both:
    a strategy that finishes in the background reruns the page, and a read during that rerun sees half a page)."""
    settle(page, timeout_ms)


def main_text(page, expected=None) -> str:
    """The main area's text once the run is over (and holds ``expected``, if given)."""
    return text_of(main(page), expected)


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_overview_shows_recall_table(server, page):
    t0 = time.perf_counter()
    page.goto(f"{server}/overview")
    page.get_by_role("heading", name="Overview").wait_for()
    drawn = time.perf_counter() - t0
    # cold store: the page is already drawn and shows the progress of loading the model / building indexes
    page.locator('[data-testid="stProgress"]').first.wait_for(timeout=30_000)
    recall_grid(page).wait_for(timeout=COLD_TIMEOUT_MS)
    cold = time.perf_counter() - t0
    settle(page)
    print(f"\nfirst paint {drawn:.1f} s; time to overview table (cold, tiny corpus): {cold:.1f} s")
    text = main_text(page)
    assert re.search(r"At k = 4, .+ finds the answer for \d+% \(\d+–\d+\)", text), text  # the answer first
    # the table's cells are in the grid's accessible DOM
    grid = recall_grid(page)
    expect = sync_api.expect
    expect(grid.get_by_text("E/hybrid", exact=True).first).to_be_attached()
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for()
    page.get_by_text("Inputs: corpus and ground truth").click()
    page.get_by_text("in-domain queries").first.wait_for()
    main_text(page, re.compile(r"documents\s+3\b"))
    shot(page, "overview")
    # warm: a reload is served from the cached evaluation
    t0 = time.perf_counter()
    page.reload()
    recall_grid(page).wait_for()
    print(f"time to overview table (warm reload): {time.perf_counter() - t0:.1f} s")


def recall_grid(page):
    """The recall table (the stamps table above it sits in a collapsed expander)."""
    return page.locator('[data-testid="stDataFrame"]:visible').first


def _gate_grid(page):
    """The Threshold page's table of outcomes at the cut on screen (its cells are in the grid's accessible DOM)."""
    return page.locator('[data-testid="stDataFrame"]:visible').first


def _cut_field(page):
    """The sidebar's exact cut (one field: its key is stable, so a rerun never draws a second copy beside it)."""
    return sidebar(page).get_by_role("spinbutton", name=re.compile(r"^Cut, exact"))


def test_threshold_cut_from_the_sidebar(server, page):
    page.goto(f"{server}/threshold?config=E%2Fhybrid&cut=0.5")
    page.get_by_text("At strictness 0.500", exact=False).wait_for(timeout=SETTLE_LIMIT_MS)
    wait_settled(page)
    grid = _gate_grid(page)
    for outcome in ("answered", "refused (nothing close enough)", "bluffs (off-topic, all)"):
        sync_api.expect(grid.get_by_text(outcome, exact=True).first).to_be_attached()
    shot(page, "threshold-before")
    field = _cut_field(page)
    assert float(value_of(field)) == 0.5
    one(field).fill("0.505")
    one(field).press("Enter")
    main_text(page, "At strictness 0.505")
    value_of(field, "0.505")
    assert "cut=0.505" in page.url
    one(field).fill("1")
    one(field).press("Enter")
    # every out-of-domain query gets sources when nothing is cut
    text = main_text(page, "At strictness 1.000 (your choice), 2 of 2 off-topic questions still get passages")
    assert "misses the goal" in text
    shot(page, "threshold-after")


def test_inspector_and_escaped_text(server, page):
    page.goto(f"{server}/inspector?q=q2%3Acourse&config=E%2Fhybrid&cut=1")
    page.get_by_text("How should chain lubricant be applied?").first.wait_for(timeout=COLD_TIMEOUT_MS)
    wait_settled(page)
    page.get_by_text("Citation preview").wait_for()  # the page's last section: drawn whole, not mid-rerun
    page.get_by_text("Answer (needle)").first.wait_for()
    # setting the shared context from the URL reruns the page once; wait for its locator to be drawn again
    page.get_by_text("#char=", exact=False).first.wait_for()
    text = main_text(page, "Citation preview")
    assert "Answer (needle)" in text, text
    assert "#char=" in text, text
    assert "Citation preview" in text
    assert "Question: How should chain lubricant be applied?" in text
    marks = main(page).locator("mark")
    assert "Chain lubricant" in text_of(marks.filter(has_text="Chain lubricant").first)
    shot(page, "inspector")

    page.goto(f"{server}/chunking?doc=bike")
    page.get_by_text("Document viewer").wait_for(timeout=COLD_TIMEOUT_MS)
    chunk_map = page.locator('[data-ragdiag="chunk-map"]')
    # the corpus's markup is shown as characters, inside our own highlighting
    assert "<script>alert(1)</script>" in text_of(chunk_map)
    assert count(chunk_map.locator("script")) == 0
    assert page.dialogs == []  # type: ignore[attr-defined]
    shot(page, "chunking")
