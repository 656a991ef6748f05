"""Served locked, walked by a hostile visitor in headless Chromium: every page of the navigation (the first by its
URL, the others from the sidebar, as a visitor walks it), then URLs no link makes (a bad or crafted ``?config=``, a
cut of ``nan`` or ``1e999``, an unknown page, overlong and unicode values, a Markdown image and backticks in the
context), and the server's log after it all: no traceback.

Every request the browser makes is recorded (``page.on("request")``): all go to the server's own origin, and no
``<img>`` in the page's DOM has a source elsewhere. The FAKE encoder (``tests/fakes.py``) serves the tiny corpus,
so the walk is about what the browser is sent, fetches and what the server logs, not the model's figures.
Uses the server helpers of ``test_browser.py`` (Debian's ``/usr/bin/chromium``).
"""

from __future__ import annotations

import urllib.parse

import pytest

from browser_wait import count
from browsing import ARTIFACTS, COLD_TIMEOUT_MS, open_from_sidebar, start_server, stop_server, wait_settled
from browsing import browser  # noqa: F401 - the shared pytest fixture (one Chromium per module)
from processes import child_pythonpath

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUTSIDE = "example.invalid"
IMAGE = f"![x](http://{OUTSIDE}/a.png)"
#: The navigation's pages (app.py), by their titles: the first (the Summary, the default page) opens at the server's
#: root, the others from the sidebar's navigation.
PAGES = ("Summary", "Overview", "Compare", "History", "Threshold", "Monitor", "Inspector", "Chunking", "Hubs", "Cost",
         "Variants", "Documents", "Ground truth", "Grow the ground truth", "External run", "Export", "Glossary")


def _q(**params: str) -> str:
    return "?" + urllib.parse.urlencode(params)


#: URLs a visitor may type (page, query): none is made by a link of the dashboard.
HOSTILE = (
    ("", _q(config=IMAGE)),
    ("overview", _q(config=f"`{IMAGE}`")),
    ("threshold", _q(config="``` <img src=x onerror=alert(1)> ```" + IMAGE)),
    ("inspector", _q(config="Z/nothing", q=IMAGE, search=f"`{IMAGE}`", failures="nan")),
    ("threshold", _q(cut="nan")),
    ("summary", _q(cut="1e999")),
    ("compare", _q(cut="-inf", keep="1e999")),
    ("export", _q(cut="nan", keep="nan", goal="1e999")),
    ("monitor", _q(cut="1e999", config=IMAGE)),
    ("no_such_page", ""),
    ("no_such_page", _q(config=IMAGE)),
    ("overview", _q(config="E/" + "x" * 6000)),
    ("inspector", _q(q="q" * 6000, cut="0." + "9" * 2000)),
    ("compare", _q(k="1e999", a=IMAGE, b="`x`", phrasing=IMAGE, view="nan")),
    ("overview", _q(strategies=IMAGE, retrievers="1e999", lost_at=IMAGE)),
    ("documents", _q(doc=IMAGE, status="\u202e", part="1e999")),
    ("chunking", _q(doc=IMAGE, strategy="1e999", trunc="nan", part="-1e999")),
    ("variants", _q(vstrategy=IMAGE, vmodels=IMAGE, vkinds="1e999")),
    ("external", _q(run_vs=IMAGE)),
    ("chunking", _q(config="E/dense\u202e\u0000\U0001F4A5", strategies="\u00e9\u6f22\U0001F600")),
    ("hubs", _q(k="nan", top="1e999", config="A/\u0301\u0301")),
    ("cost", _q(config="[a](javascript:alert(1))", sample="-1e999")),
    ("truth_review", _q(config=IMAGE, cut="nan")),
    ("glossary", _q(config=IMAGE, cut="1e999", keep="-1", goal=IMAGE)),
)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The tiny corpus served locked (``RAGDIAG_LOCKED=1``) as ``./run.sh dashboard`` serves it."""
    from apptest import ENV, write_tiny_corpus

    base = tmp_path_factory.mktemp("served-walk")
    root, truth = write_tiny_corpus(base)
    log = base / "streamlit.log"
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(base / "cache"),
           "RAGDIAG_LOCKED": "1", "RAGDIAG_ROOTS": "", "RAGDIAG_WARM": "0", "RAGDIAG_ENCODER": "fakes:fake_encoder",
           "PYTHONPATH": child_pythonpath()}
    proc, url = start_server(env, log, launcher=["-m", "ui.serve"])
    try:
        yield {"url": url, "log": log}
    finally:
        stop_server(proc)


def _outside_images(page, origin: str) -> list[str]:
    """The resolved sources of every ``<img>`` (and ``srcset``) in the DOM that are not on ``origin``."""
    sources = page.evaluate("""() => [...document.querySelectorAll('img')].flatMap(i =>
        [i.currentSrc || i.src, ...(i.srcset || '').split(',').map(s => s.trim().split(' ')[0]).filter(Boolean)])""")
    return sorted({s for s in sources if s and not s.startswith((origin + "/", "data:", "blob:"))})


def test_a_locked_walk_with_hostile_urls_fetches_nothing_outside_and_logs_no_traceback(served, browser):  # noqa: F811
    url = served["url"]
    ARTIFACTS.mkdir(exist_ok=True)
    ctx = browser.new_context(viewport={"width": 1440, "height": 1400})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    problems: list[tuple[str, str]] = []
    expect = sync_api.expect

    def check(where: str) -> None:
        wait_settled(page)
        if count(page.locator('[data-testid="stException"]')):
            problems.append((where, "an exception box"))
        for src in _outside_images(page, url):
            problems.append((where, f"<img src={src[:120]}>"))

    try:
        for n, title in enumerate(PAGES):
            if n == 0:
                page.goto(f"{url}/")
                expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible(timeout=COLD_TIMEOUT_MS)
            else:
                open_from_sidebar(page, title)
            check(f"{title} (the navigation)")
        for path, query in HOSTILE:
            page.goto(f"{url}/{path}{query}")
            page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=COLD_TIMEOUT_MS)  # every page has one
            check(f"/{path}{query[:80]}")
        page.screenshot(path=str(ARTIFACTS / "served-walk-last.png"))
    finally:
        ctx.close()
    assert not problems, problems
    outside = sorted({r[:120] for r in requests if not r.startswith((url + "/", "data:", "blob:")) and r != url})
    assert not outside, outside  # every request to the server's own origin
    assert any(OUTSIDE in urllib.parse.unquote(r) for r in requests)  # the crafted URLs were sent, as text
    log = served["log"].read_text(errors="replace")
    assert "Traceback" not in log, log[max(0, log.index("Traceback") - 1500):][:4000]
