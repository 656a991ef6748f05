"""Narrow screens and both themes (issue 38): Chromium on the tiny corpus.

* Under 1,000 px the sidebar starts folded (Streamlit's own rule folds it only under 768 px) and its button opens
  it; at 1,400 px it starts open.
* A row selected in the Inspector's failures table opens that query on the same page and in the URL, the
  context unchanged (it once came back as the configuration's stale label when the recommendation had changed
  while the strategies finished).
* In the dark and the light theme (the visitor's system setting), every text a chart draws contrasts with the
  page's background at least 4.5 : 1 (WCAG AA), read from the rendered SVG's computed colours.

Waits are for states of the page (the status widget gone, an element present), never fixed sleeps.
"""

from __future__ import annotations

import pytest

from browser_wait import one, settle, text_of, texts_of
from browsing import ARTIFACTS, SETTLE_LIMIT_MS, TIMEOUT_MS, open_from_sidebar, wait_settled
from browsing import browser, server  # noqa: F401 - pytest fixtures

pytestmark = [pytest.mark.browser, pytest.mark.model]

#: WCAG 2 relative luminance and contrast ratio, computed in the page (colours as the browser resolved them).
CONTRAST_JS = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => v / 255).map(v => v <= 0.03928 ? v / 12.92
                                                              : Math.pow((v + 0.055) / 1.055, 2.4))
                                      .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
  const app = document.querySelector('[data-testid="stApp"]');
  const bg = rgb(getComputedStyle(app).backgroundColor);
  const out = [];
  for (const t of document.querySelectorAll('[data-testid="stVegaLiteChart"] svg text')) {
    const s = getComputedStyle(t);
    if (!t.textContent.trim() || s.fill === 'none' || s.visibility === 'hidden' || s.opacity === '0'
        || Number(t.getAttribute('fill-opacity') ?? 1) === 0) continue;
    out.push({text: t.textContent.trim().slice(0, 40), fill: s.fill, ratio: ratio(rgb(s.fill), bg)});
  }
  return {background: getComputedStyle(app).backgroundColor, texts: out};
}"""


def _open(browser, server, path: str, *, width: int = 1400, scheme: str = "light"):
    ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(server + path)
    page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=SETTLE_LIMIT_MS)
    wait_settled(page)
    return ctx, page


def test_the_sidebar_starts_folded_under_1000_px(browser, server):
    """At 800 px it starts folded; the visitor opens it again and it stays open on the next page (at 1,400 px it
    starts open: the themes' test below checks that on its first page)."""
    ctx, page = _open(browser, server, "/", width=800)
    try:
        side = page.locator('[data-testid="stSidebar"]')
        page.wait_for_function("""() => document.querySelector('[data-testid="stSidebar"]')
                                          ?.dataset.collapsed === 'true'""", timeout=TIMEOUT_MS)
        page.locator('[data-testid="stExpandSidebarButton"]').click()  # the visitor opens it again
        page.wait_for_function("""() => document.querySelector('[data-testid="stSidebar"]')
                                          ?.dataset.collapsed === 'false'""", timeout=TIMEOUT_MS)
        side.get_by_role("link", name="Threshold").first.click()
        page.get_by_role("heading", name="Threshold", exact=True).wait_for(timeout=SETTLE_LIMIT_MS)
        wait_settled(page)
        assert one(side).get_attribute("data-collapsed") == "false"  # it stays open on the next page
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "narrow-800.png"))
    finally:
        ctx.close()


def test_a_failure_selected_in_the_table_opens_on_the_same_page_and_in_the_url(browser, server):
    """The failures table (grouped by cause): selecting its second row opens that query below, and the URL holds it."""
    import re
    from urllib.parse import parse_qs, urlparse

    ctx, page = _open(browser, server, "/inspector?config=A%2Fdense&cut=0.600")
    try:
        settle(page)  # every strategy computed, the run over
        page.get_by_text(re.compile(r"The \d+ failures, grouped by cause")).click()
        grid = (page.locator('[data-testid="stMain"] [data-testid="stExpander"]').filter(has_text="grouped by cause")
                .locator('[data-testid="stDataFrame"]'))  # the expander's one table
        grid.wait_for(timeout=TIMEOUT_MS)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "inspector-failures-open.png"))
        query_id = re.compile(r"q\d:(course|ticket)")
        rows = grid.locator('[role="row"]').filter(has_text=query_id)  # the data rows, in the grid's DOM
        rows.nth(1).wait_for(state="attached", timeout=TIMEOUT_MS)
        second = query_id.search(texts_of(rows)[1]).group(0)  # every data row read, the second one taken
        before = parse_qs(urlparse(page.url).query).get("q", [""])[0]
        assert second != before, (second, before)
        box = one(grid).bounding_box()
        row_h = 35  # the grid's row height (its header row too)
        page.mouse.click(box["x"] + 14, box["y"] + row_h * 2 + row_h / 2)  # the second row's selection cell
        page.wait_for_function(f"() => new URLSearchParams(location.search).get('q') === {second!r}",
                               timeout=TIMEOUT_MS)
        wait_settled(page)
        from apptest import TRUTH

        phrasing = second.split(":")
        expected = next(q["queries"][phrasing[1]] for q in TRUTH["questions"] if q["id"] == phrasing[0])
        page.locator('[data-ragdiag="question"]').get_by_text(expected).wait_for(timeout=TIMEOUT_MS)  # opened below
        params = parse_qs(urlparse(page.url).query)
        assert params["config"] == ["A/dense"] and params["cut"] == ["0.600"]  # the context stays in the link
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "inspector-failure-selected.png"))
    finally:
        ctx.close()


#: The rendered primary button's text and fill (the fill under the pointer too), as the browser resolved them.
BUTTON_JS = """(el) => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => v / 255).map(v => v <= 0.03928 ? v / 12.92
                                                              : Math.pow((v + 0.055) / 1.055, 2.4))
                                      .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
  const text = el.querySelector('p') || el;
  const s = getComputedStyle(el);
  return {color: getComputedStyle(text).color, fill: s.backgroundColor,
          ratio: ratio(rgb(getComputedStyle(text).color), rgb(s.backgroundColor))};
}"""


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_the_primary_button_and_every_chart_text_read_on_their_fill_in_both_themes(browser, server, scheme):
    """At 1,400 px the sidebar starts open. The Summary's "Download report" button (primary): its text reads on its
    fill, under the pointer too (2.6 : 1 in the dark theme before: white on #90a4ae). Then Overview and Threshold,
    opened from the sidebar (the pages with charts: Summary and Inspector have none): every text their charts draw
    contrasts with the page's background."""
    ctx, page = _open(browser, server, "/", scheme=scheme)
    try:
        import re

        page.wait_for_function("""() => document.querySelector('[data-testid="stSidebar"]')
                                          ?.dataset.collapsed === 'false'""", timeout=TIMEOUT_MS)
        if scheme == "light":
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "narrow-1400.png"))
        button = page.locator('[data-testid="stMain"]').get_by_role("button", name=re.compile("Download report"))
        text_of(button, "Download report")
        assert one(button).get_attribute("data-testid") == "stBaseButton-primary"
        seen = one(button).evaluate(BUTTON_JS)
        assert seen["ratio"] >= 4.5, (scheme, seen)
        one(button).hover()
        page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stMain"] button')]
            .some((el) => el.textContent.includes('Download report') && el.matches(':hover'))""")
        hovered = one(button).evaluate(BUTTON_JS)
        assert hovered["ratio"] >= 4.5, (scheme, hovered)
        for title in ("Overview", "Threshold"):
            open_from_sidebar(page, title)
            page.locator('[data-testid="stVegaLiteChart"] svg text').first.wait_for(timeout=TIMEOUT_MS)
            texts = page.evaluate(CONTRAST_JS)
            assert texts["texts"], (title, texts)
            low = [t for t in texts["texts"] if t["ratio"] < 4.5]
            assert not low, (scheme, title, texts["background"], low[:10])
    finally:
        ctx.close()
