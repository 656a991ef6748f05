"""Narrow screens and both themes (issue 38): Chromium on the tiny corpus.

* Under 1,000 px the sidebar starts folded (Streamlit's own rule folds it only under 768 px) and its button opens
  it; at 1,400 px it starts open.
* In the dark and the light theme (the visitor's system setting), every text a chart draws contrasts with the
  page's background at least 4.5 : 1 (WCAG AA), read from the rendered SVG's computed colours.

Waits are for states of the page (the status widget gone, an element present), never fixed sleeps.
"""

from __future__ import annotations

import pytest

from test_browser import ARTIFACTS, SETTLE_LIMIT_MS, TIMEOUT_MS, browser, server, wait_settled  # noqa: F401

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


@pytest.mark.parametrize("width, folded", [(800, True), (1400, False)])
def test_the_sidebar_starts_folded_under_1000_px(browser, server, width, folded):
    ctx, page = _open(browser, server, "/", width=width)
    try:
        side = page.locator('[data-testid="stSidebar"]')
        state = "true" if folded else "false"
        page.wait_for_function(f"""() => document.querySelector('[data-testid="stSidebar"]')
                                           ?.dataset.collapsed === '{state}'""", timeout=TIMEOUT_MS)
        if folded:  # the visitor opens it again; it stays open on the next page
            page.locator('[data-testid="stExpandSidebarButton"]').click()
            page.wait_for_function("""() => document.querySelector('[data-testid="stSidebar"]')
                                              ?.dataset.collapsed === 'false'""", timeout=TIMEOUT_MS)
            side.get_by_role("link", name="Threshold").first.click()
            page.get_by_role("heading", name="Threshold", exact=True).wait_for(timeout=SETTLE_LIMIT_MS)
            wait_settled(page)
            assert side.get_attribute("data-collapsed") == "false"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"narrow-{width}.png"))
    finally:
        ctx.close()


@pytest.mark.parametrize("scheme", ["dark", "light"])
@pytest.mark.parametrize("path", ["/overview", "/threshold"])  # the pages with charts (Summary and Inspector have none)
def test_chart_text_contrasts_with_the_background_in_both_themes(browser, server, scheme, path):
    ctx, page = _open(browser, server, path, scheme=scheme)
    try:
        page.locator('[data-testid="stVegaLiteChart"] svg text').first.wait_for(timeout=TIMEOUT_MS)
        seen = page.evaluate(CONTRAST_JS)
        assert seen["texts"], seen
        low = [t for t in seen["texts"] if t["ratio"] < 4.5]
        assert not low, (scheme, path, seen["background"], low[:10])
    finally:
        ctx.close()
