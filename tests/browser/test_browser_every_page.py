"""Every page of the navigation on the bundled corpus, as a person walks it: Chromium at 1400 × 900.

Each page opens from the sidebar without an error (no exception box), its URL carries the context (configuration,
cut, keep, goal), the same on every page, and a reload of a page that never draws the context (the Glossary)
opens on the same context. Every wait is an auto-waiting assertion on one element.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from browsing import ARTIFACTS, COLD_TIMEOUT_MS, browser, viewport_page  # noqa: F401

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

pytestmark = [pytest.mark.browser, pytest.mark.model]

LIMIT_MS = 3 * COLD_TIMEOUT_MS
FIELDS = ("config", "cut", "keep", "goal")
#: The navigation's pages (app.py), by their titles.
PAGES = ("Summary", "Overview", "Compare", "History", "Threshold", "Monitor", "Inspector", "Chunking", "Hubs", "Cost",
         "Variants", "Documents", "Ground truth", "Grow the ground truth", "External run", "Export", "Glossary")


@pytest.fixture(scope="module")
def server(bundled_dashboard):
    """The session's bundled-corpus dashboard (conftest): every page opened is a visitor's session of its own."""
    return bundled_dashboard


@pytest.fixture(scope="module")
def page(server, browser):
    yield from viewport_page(browser, 1400, 900, LIMIT_MS)


def context_of(page) -> dict[str, str | None]:
    q = {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}
    return {k: q.get(k) for k in FIELDS}


def wait_context(page, ctx: dict) -> None:
    """Until the URL carries ``ctx`` (a page writes it during its run)."""
    page.wait_for_function("""(ctx) => { const q = new URLSearchParams(location.search);
        return Object.entries(ctx).every(([k, v]) => q.get(k) === v); }""", arg=ctx, timeout=60_000, polling=250)


def test_every_page_opens_without_an_error_and_keeps_the_context(server, page):
    page.goto(server)
    expect(page.get_by_role("heading", name="Summary", exact=True)).to_be_visible(timeout=LIMIT_MS)
    expect(page.locator('[data-testid="stProgress"]')).to_have_count(0, timeout=LIMIT_MS)
    expect(page.get_by_text("Strategies still computing")).to_have_count(0, timeout=LIMIT_MS)
    page.wait_for_function("() => /[?&]cut=\\d/.test(location.search)", timeout=LIMIT_MS, polling=250)
    ctx = context_of(page)
    assert all(ctx.values()), ctx
    nav = page.locator('[data-testid="stSidebarNav"]')
    for title in PAGES:
        nav.get_by_role("link", name=title, exact=True).first.click()
        expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible(timeout=LIMIT_MS)
        expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=LIMIT_MS)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0, timeout=LIMIT_MS)
        wait_context(page, ctx)
        assert context_of(page) == ctx, (title, page.url)
    page.screenshot(path=str(ARTIFACTS / "every-page-glossary.png"))
    page.reload()  # a new session on a page that never draws the context
    expect(page.get_by_role("heading", name="Glossary", exact=True)).to_be_visible(timeout=LIMIT_MS)
    side = page.locator('[data-testid="stSidebar"] [data-testid="stCaptionContainer"]').filter(
        has_text=re.compile(re.escape(ctx["config"]) + r" · strictness \(cut\) " + re.escape(ctx["cut"])))
    expect(side.first).to_be_visible(timeout=LIMIT_MS)
    assert context_of(page) == ctx
