"""The browser tests' shared plumbing: a dashboard server on a free port, headless Chromium (Debian's
``/usr/bin/chromium``, Playwright's own browsers are not used), pages and their waits (through ``browser_wait``),
and the reads several browser modules make (the recall grid, the first screen, the charts' problems).

Importing it skips the importing module when Chromium or Playwright is missing. The ``server``, ``browser`` and
``page`` fixtures are imported by the modules that use them (``from browsing import browser``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from browser_wait import LIMIT_MS, count, main, settle, text_of, wait_healthy, watched
from processes import child_pythonpath

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
COLD_TIMEOUT_MS = 180_000  # first page: loads the model and builds the indexes
TIMEOUT_MS = 60_000
#: The overall limit of a wait for a page's own "done" state (the run over, an element present): a wait
#: ends as soon as the state is reached, so a slow machine (a load of 10-30 on 2 cores) makes a test slower, not red.
SETTLE_LIMIT_MS = LIMIT_MS

if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is missing (scripts/browser-deps.sh installs Debian's chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -r requirements-dev.txt)")
# An assertion waits for its state as long as every other read here does: Playwright's own default (5 s) is a
# moment on a loaded machine, and a grid's cells came later than that under load.
sync_api.expect.set_options(timeout=LIMIT_MS)


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


def fake_encoder_env() -> dict[str, str]:
    """A server's environment for the FAKE encoder (``fakes:fake_encoder``, imported from ``tests/helpers``): no model
    to load, vectors in milliseconds; for a test whose point is the page's plumbing, not the real model's numbers."""
    return {"RAGDIAG_ENCODER": "fakes:fake_encoder", "PYTHONPATH": child_pythonpath()}


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


@contextlib.contextmanager
def serving(env_extra: dict[str, str], base: Path, *, launcher: list[str] | None = None):
    """A dashboard server (:func:`start_server`, its log ``base/streamlit.log``) for the block: its base url."""
    proc, url = start_server(env_extra, base / "streamlit.log", launcher=launcher)
    try:
        yield url
    finally:
        stop_server(proc)


@contextlib.contextmanager
def serving_tiny(base: Path, **extra: str):
    """The tiny corpus and its truth written under ``base`` and served for the block (a cache folder there, ``extra``
    settings on top): (base url, corpus folder, truth path)."""
    from apptest import ENV, write_tiny_corpus

    root, truth = write_tiny_corpus(base)
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(base / "cache"),
           **extra}
    with serving(env, base) as url:
        yield url, root, truth


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving_tiny(tmp_path_factory.mktemp("browser")) as (url, _, _):
        yield url


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
    # Tall viewport: Streamlit scrolls inside its main block, so a full-page shot is the viewport.
    ctx, p = new_page(browser, 1440, 2200)
    dialogs: list[str] = []
    p.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    p.dialogs = dialogs  # type: ignore[attr-defined]
    try:
        yield p
    finally:
        ctx.close()


def new_page(browser, width: int, height: int, timeout_ms: int = TIMEOUT_MS, **options):
    """A page of ``width`` x ``height`` in a browser context of its own (``options``: the context's others, e.g.
    ``accept_downloads``), waiting at most ``timeout_ms`` by default: (context, page); the caller closes the context."""
    ARTIFACTS.mkdir(exist_ok=True)
    ctx = browser.new_context(viewport={"width": width, "height": height}, **options)
    p = ctx.new_page()
    p.set_default_timeout(timeout_ms)
    return ctx, p


def viewport_page(browser, width: int, height: int, timeout_ms: int = TIMEOUT_MS, **options):
    """A page of ``width`` x ``height`` in a context of its own, closed after (for a module fixture's ``yield from``)."""
    ctx, p = new_page(browser, width, height, timeout_ms, **options)
    try:
        yield p
    finally:
        ctx.close()


def wait_idle(page, timeout_ms: int = SETTLE_LIMIT_MS) -> None:
    """Wait until the run last asked for is over and the page stands still (``browser_wait.settle``)."""
    settle(page, timeout_ms)


def open_from_sidebar(page, title: str, timeout_ms: int = SETTLE_LIMIT_MS) -> None:
    """Open the page ``title`` from the sidebar's navigation, as a visitor does (no new page load), and wait until
    its heading shows and its run is over."""
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.get_by_role("link", name=title, exact=True).first.click()
    sync_api.expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible(timeout=timeout_ms)
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


def recall_grid(page):
    """The recall table (the stamps table above it sits in a collapsed expander)."""
    return page.locator('[data-testid="stDataFrame"]:visible').first


#: the viewport of the decision screens' checks (``test_browser_decide`` and the modules reading as it does)
WIDTH, HEIGHT = 1400, 900


def open_page(page, url: str, heading: str) -> None:
    """Open ``url`` and wait until the page is drawn with every strategy (no progress bar, no status line)."""
    page.goto(url)
    page.get_by_role("heading", name=heading).wait_for(timeout=COLD_TIMEOUT_MS)
    settle(page)  # the run over, every strategy in, the page standing still


def first_screen(page) -> list[dict]:
    """Visible text blocks of the main area inside the 1400 × 900 viewport (what is seen without scrolling)."""
    return page.evaluate("""(h) => {
        const out = [];
        for (const el of document.querySelectorAll('[data-testid="stMain"] [data-testid="stMarkdownContainer"],'
                                                   + '[data-testid="stMain"] [data-testid="stMetric"],'
                                                   + '[data-testid="stMain"] [data-testid="stAlert"],'
                                                   + '[data-testid="stMain"] [data-testid="stCaptionContainer"]')) {
            const r = el.getBoundingClientRect();
            if (r.height > 0 && r.top < h && r.bottom > 0) out.push({text: el.innerText, kind: el.dataset.testid});
        }
        return out;
    }""", HEIGHT)


def chart_problems(page) -> list[str]:
    """Each drawn chart's legend sizes, title and legend clipping and y-axis heights, from the SVG."""
    settle(page)
    return page.evaluate("""() => {
        const bad = [];
        document.querySelectorAll('[data-testid="stVegaLiteChart"] svg').forEach((svg, i) => {
            if (svg.getBoundingClientRect().width === 0) return;
            // inside the chart's own element (what the page shows of it), give or take a glyph's overhang
            const box = svg.closest('[data-testid="stVegaLiteChart"]').getBoundingClientRect();
            const within = (r) => r.left >= box.left - 4 && r.right <= box.right + 4
                                && r.top >= box.top - 4 && r.bottom <= box.bottom + 4;
            svg.querySelectorAll('[aria-label]').forEach((el) => {
                const label = el.getAttribute('aria-label');
                const r = el.getBoundingClientRect();
                const m = label.match(/with (\\d+) values/);
                if (/legend/i.test(label) && m && Number(m[1]) > 8) bad.push(`chart ${i}: ${label.slice(0, 80)}`);
                if (/legend/i.test(label) && !within(r)) bad.push(`chart ${i}: legend cut off: ${label.slice(0, 60)}`);
                if (/^Title text/.test(label) && !within(r)) bad.push(`chart ${i}: title clipped: ${label}`);
                if (/^Y-axis/.test(label) && /linear scale/.test(label) && r.height < 200)
                    bad.push(`chart ${i}: y axis ${Math.round(r.height)} px: ${label.slice(0, 60)}`);
            });
            svg.querySelectorAll('text').forEach((t) => {  // a title text that ends in an ellipsis was cut
                if (t.closest('.role-title') && /…$/.test(t.textContent)) bad.push(`chart ${i}: title cut: ${t.textContent}`);
            });
        });
        return bad;
    }""")


def n_charts(page) -> int:
    return count(main(page).locator('[data-testid="stVegaLiteChart"] svg'))
