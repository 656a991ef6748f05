"""Served safely, round three, in headless Chromium: hostile question ids and a typed model name make no request
leave the server on Hubs, Ground truth and Variants; ``/export?cut=0`` shows a sentence; a scripted session over
every page leaves no traceback in the server log.

The FAKE encoder (``tests/helpers/fakes.py``) serves the numbers: what is checked here is what the browser is sent and
fetches, and what the server logs, not the model's figures (the real model's browser tests are the other
``test_browser*`` modules). Uses the server helpers of ``browsing.py`` (Debian's ``/usr/bin/chromium``).
"""

from __future__ import annotations

import json
import re
import urllib.parse

import pytest

from browser_wait import count, texts_of
from browsing import (COLD_TIMEOUT_MS, main_text, new_page, open_from_sidebar, shot, start_server, stop_server,
                      wait_idle, wait_settled)
from browsing import browser  # noqa: F401 - the shared pytest fixture (one Chromium per module)
from processes import child_pythonpath

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = [pytest.mark.browser]

TRACKER = "tracker.example"
HOSTILE_ID = f"![x](http://{TRACKER}/p.png)"
#: The pages of the scripted session: their URL paths and their titles in the sidebar's navigation.
PAGES = {"summary": "Summary", "overview": "Overview", "compare": "Compare", "threshold": "Threshold",
         "inspector": "Inspector", "chunking": "Chunking", "hubs": "Hubs", "cost": "Cost", "variants": "Variants",
         "documents": "Documents", "ground_truth": "Ground truth", "external": "External run", "export": "Export"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The tiny corpus whose every question id is a Markdown image of an outside host; a folder under the allowed
    roots whose name is a Markdown link (typed as a model name on Variants)."""
    from apptest import ENV, write_tiny_corpus

    base = tmp_path_factory.mktemp("browser-round3")
    root, truth = write_tiny_corpus(base)
    data = json.loads(truth.read_text())
    for i, q in enumerate(data["questions"]):
        q["id"] = HOSTILE_ID.replace("p.png", f"p{i}.png")
    truth.write_text(json.dumps(data, indent=2))
    model = base / f"[m](http:{TRACKER})"
    model.mkdir()
    log = base / "streamlit.log"
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(base / "cache"),
           "RAGDIAG_ROOTS": str(base), "RAGDIAG_WARM": "0", "RAGDIAG_ENCODER": "fakes:fake_encoder",
           "PYTHONPATH": child_pythonpath()}
    proc, url = start_server(env, log, launcher=["-m", "ui.serve"])  # as ./run.sh dashboard
    try:
        yield {"url": url, "model": model, "log": log, "proc": proc}
    finally:
        stop_server(proc)


def _context(browser):  # noqa: F811 - the fixture
    ctx, page = new_page(browser, 1440, 2200, 60_000)
    hosts: list[str] = []
    page.on("request", lambda r: hosts.append(urllib.parse.urlsplit(r.url).netloc))
    return ctx, page, hosts


def _open(page, url: str, path: str) -> None:
    page.goto(f"{url}/{path}")
    page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=COLD_TIMEOUT_MS)  # every page has a title
    wait_settled(page)


def _outside(hosts) -> list[str]:
    return sorted({h for h in hosts if h and not h.startswith("127.0.0.1")})


def test_hostile_ids_and_model_names_fetch_nothing_from_outside(served, browser):  # noqa: F811
    url = served["url"]
    ctx, page, hosts = _context(browser)
    try:
        _open(page, url, "hubs?k=1&top=200")
        page.get_by_text("crowded by", exact=False).first.wait_for(timeout=COLD_TIMEOUT_MS)
        links = " ".join(texts_of(page.locator('[data-testid="stPageLink"]')))
        assert "crowded by" in links and f"{HOSTILE_ID.replace('.png', '0.png')}:" in links, links  # as text
        shot(page, "round3-hubs-hostile-ids")
        open_from_sidebar(page, "Ground truth")
        page.get_by_role("tab", name=re.compile(r"^Questions")).click()
        wait_idle(page)
        assert TRACKER in main_text(page)
        shot(page, "round3-ground-truth-hostile-ids")
        open_from_sidebar(page, "Variants")
        page.get_by_text("Another model", exact=True).click()
        box = page.get_by_label("A folder under the allowed roots or a hub id already in the cache")
        box.fill(str(served["model"]))
        box.press("Enter")
        page.get_by_text("is unavailable", exact=False).first.wait_for(timeout=COLD_TIMEOUT_MS)
        wait_settled(page)
        assert TRACKER in main_text(page)
        shot(page, "round3-variants-hostile-model")
        assert not _outside(hosts), _outside(hosts)
        assert not count(page.locator(f'img[src*="{TRACKER}"], a[href*="{TRACKER}"]'))
    finally:
        ctx.close()


def test_export_at_cut_0_is_a_page_not_an_error(served, browser):  # noqa: F811
    # a cut of 0 is in the gate's one range [0, 2] (it keeps nothing): the page stands, no exception
    ctx, page, _ = _context(browser)
    try:
        _open(page, served["url"], "export?cut=0")
        text = main_text(page)
        assert "Export" in text and "Traceback" not in text
        assert not count(page.locator('[data-testid="stException"]'))
        shot(page, "round3-export-cut-0")
    finally:
        ctx.close()


def test_a_scripted_session_leaves_no_traceback_in_the_server_log(served, browser):  # noqa: F811
    """Every page twice: first from the sidebar's navigation (the first by its URL, ``/summary``), then each by its
    URL with an out-of-range context (a cut of 0, the largest keep, an unknown configuration), after the interactions
    above; then the server's log: no traceback (Arrow fallbacks and page errors log one). A compressed form of a
    half-hour session: every page and context kind, once each."""
    url = served["url"]
    ctx, page, hosts = _context(browser)
    try:
        for n, (name, title) in enumerate(PAGES.items()):
            if n == 0:
                _open(page, url, name)  # "/summary" is no page: Streamlit's "Page not found" over the main page
                page.keyboard.press("Escape")  # closed, as a visitor closes it, to reach the navigation
                sync_api.expect(page.get_by_role("dialog")).to_have_count(0)
            else:
                open_from_sidebar(page, title)
            assert not count(page.locator('[data-testid="stException"]')), (name, main_text(page))
        params = "?cut=0&keep=20&config=Z%2Fnothing"
        for name in PAGES:
            _open(page, url, name + params)
            assert not count(page.locator('[data-testid="stException"]')), (name, params, main_text(page))
        assert not _outside(hosts), _outside(hosts)
    finally:
        ctx.close()
    log = served["log"].read_text(errors="replace")
    assert "Traceback" not in log, log[log.index("Traceback") - 500:][:3000]
