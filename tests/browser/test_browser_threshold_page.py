"""The Threshold page's first screen, as a person sees it: Chromium at 1400 × 900 on the bundled corpus.

Inside the first 900 px: the page's own slider for the context's cut, both charts (their plots, not only their
titles) and the sentence with the four outcomes at the cut; at most 60 words above the charts. Five arrow presses
on the focused slider move the cut five stops (the slider keeps the focus across the reruns they start), and a
click on the trade-off curve moves the slider. Every wait is an auto-waiting assertion on one element.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from ui.context import CUT_SLIDER_LABEL

from browser_wait import count, one, text_of
from browsing import ARTIFACTS, COLD_TIMEOUT_MS, browser, viewport_page  # noqa: F401

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

pytestmark = [pytest.mark.browser, pytest.mark.model]

WIDTH, HEIGHT = 1400, 900
LIMIT_MS = 3 * COLD_TIMEOUT_MS  # the overall limit of one wait; each ends as soon as its state is reached
SENTENCE = re.compile(r"^At cut (\d\.\d{3}) \([a-z ]+\): of (\d+) answerable queries, (\d+) answered, "
                      r"(\d+) given wrong passages, (\d+) refused; (\d+) of (\d+) off-topic queries get passages \(bluffs\)\.")


@pytest.fixture(scope="module")
def server(bundled_dashboard):
    """The session's bundled-corpus dashboard (conftest): every page opened is a visitor's session of its own."""
    return bundled_dashboard


@pytest.fixture(scope="module")
def page(server, browser):
    yield from viewport_page(browser, WIDTH, HEIGHT, LIMIT_MS)


def slider(page):
    """The page's own slider (the sidebar has one too, for the same context)."""
    return page.locator('[data-testid="stMain"]').get_by_role("slider", name=CUT_SLIDER_LABEL)


def sentence(page, cut: str | None = None):
    """The outcome sentence (at ``cut`` when given)."""
    pattern = re.compile(r"^At cut " + (re.escape(cut) if cut else r"\d\.\d{3}") + r" \([a-z ]+\): of \d+ answerable")
    return page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p').filter(has_text=pattern)


def chart(page, key: str):
    """One of the page's two charts, by its container's key: ``threshold_histogram`` or ``threshold_curve``."""
    return page.locator(f'[data-testid="stMain"] .st-key-{key} [data-testid="stVegaLiteChart"]')


CHARTS = ("threshold_histogram", "threshold_curve")


def open_threshold(page, server: str, query: str = "") -> None:
    """Open the page and wait for its settled state: every strategy done (no progress bar), both charts drawn."""
    page.goto(f"{server}/threshold{query}")
    expect(page.get_by_role("heading", name="Threshold", exact=True)).to_be_visible(timeout=LIMIT_MS)
    expect(page.locator('[data-testid="stProgress"]')).to_have_count(0, timeout=LIMIT_MS)
    expect(page.get_by_text("Strategies still computing")).to_have_count(0, timeout=LIMIT_MS)
    expect(page.locator('[data-testid="stVegaLiteChart"] svg').nth(1)).to_be_visible(timeout=LIMIT_MS)
    expect(sentence(page)).to_be_visible(timeout=LIMIT_MS)


def url_cut(page) -> str:
    return parse_qs(urlparse(page.url).query)["cut"][0]


def words_above(page, top: float) -> list[str]:
    """The words the main area shows above ``top`` (the charts' top): every visible text node's words."""
    return page.evaluate("""(top) => {
        const main = document.querySelector('[data-testid="stMain"]');
        const walk = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
        const out = [];
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            const el = n.parentElement;
            if (!el || el.closest('[data-testid="stVegaLiteChart"]') || !n.textContent.trim()) continue;
            const r = el.getBoundingClientRect();
            const style = getComputedStyle(el);
            if (r.height === 0 || style.visibility === 'hidden' || style.display === 'none') continue;
            if (r.bottom <= top) out.push(...n.textContent.trim().split(/\\s+/));
        }
        return out;
    }""", top)


def test_first_screen_holds_the_slider_both_plots_and_the_sentence(server, page):
    open_threshold(page, server)
    page.screenshot(path=str(ARTIFACTS / "threshold-first-screen.png"))
    box = one(slider(page).locator("xpath=ancestor::*[@data-testid='stSlider']")).bounding_box()
    assert box is not None and box["y"] + box["height"] <= HEIGHT, box
    said = sentence(page)
    text = text_of(said)
    m = SENTENCE.match(text)
    assert m, text
    cut, n_in, answered, wrong, refused = m.group(1), *map(int, m.group(2, 3, 4, 5))
    assert answered + wrong + refused == n_in  # the three outcomes of an answerable query, each counted once
    assert cut == url_cut(page) == one(slider(page)).get_attribute("aria-valuetext")
    s_box = one(said).bounding_box()
    assert s_box["y"] + s_box["height"] <= HEIGHT, s_box
    tops = []
    for key in CHARTS:  # the histogram and the trade-off curve, side by side, their plots (marks) on screen
        drawn = chart(page, key)
        c_box = one(drawn).bounding_box()
        assert c_box["y"] + c_box["height"] <= HEIGHT, (key, c_box)
        marks = drawn.locator("svg .mark-rect path, svg .mark-line path, svg .mark-rect, svg .mark-line")
        assert count(marks) > 0, key
        # every plotted layer (each bar and line group, not only the first) ends on the first screen
        bottoms = drawn.locator("svg g.mark-rect, svg g.mark-line").evaluate_all(
            "els => els.map(e => e.getBoundingClientRect().bottom)")
        assert bottoms and max(bottoms) <= HEIGHT, (key, bottoms)
        tops.append(c_box["y"])
    first, second = (one(chart(page, key)).bounding_box() for key in CHARTS)
    assert abs(first["y"] - second["y"]) < 5 and first["x"] + first["width"] <= second["x"] + 1  # side by side
    words = words_above(page, min(tops))
    assert len(words) <= 60, (len(words), " ".join(words))


def test_five_arrow_presses_move_the_cut_five_stops(server, page):
    open_threshold(page, server)
    thumb = slider(page)
    start = int(one(thumb).input_value())
    thumb.focus()
    seen = []
    for step in range(1, 6):
        page.keyboard.press("ArrowRight")  # to the focused element: the slider, if it kept the focus
        expect(thumb).to_have_value(str(start + step), timeout=LIMIT_MS)
        cut = one(thumb).get_attribute("aria-valuetext")
        expect(sentence(page, cut).first).to_be_visible(timeout=LIMIT_MS)  # the page's run at the new cut is drawn
        expect(thumb).to_be_focused(timeout=LIMIT_MS)
        seen.append(cut)
    assert len(set(seen)) == 5 and seen == sorted(seen, key=float), seen
    page.wait_for_function(f"() => location.search.includes('cut={seen[-1]}')", timeout=LIMIT_MS, polling=250)


def test_a_click_on_the_curve_moves_the_slider(server, page):
    open_threshold(page, server)
    thumb = slider(page)
    before = one(thumb).get_attribute("aria-valuetext")
    curve = chart(page, "threshold_curve")
    one(curve)  # the one curve drawn; the union of its line groups (it draws more than one) is the plot clicked
    plot = curve.locator("svg g.mark-line").evaluate_all("""els => {
        const r = els.map(e => e.getBoundingClientRect());
        const x = Math.min(...r.map(b => b.left)), y = Math.min(...r.map(b => b.top));
        return {x, y, width: Math.max(...r.map(b => b.right)) - x, height: Math.max(...r.map(b => b.bottom)) - y};
    }""")
    page.mouse.click(plot["x"] + 0.2 * plot["width"], plot["y"] + 0.5 * plot["height"])  # far left of the cut
    expect(thumb).not_to_have_attribute("aria-valuetext", before, timeout=LIMIT_MS)
    after = one(thumb).get_attribute("aria-valuetext")
    expect(sentence(page, after).first).to_be_visible(timeout=LIMIT_MS)
    assert float(after) < float(before), (before, after)
    page.wait_for_function(f"() => location.search.includes('cut={after}')", timeout=LIMIT_MS, polling=250)
