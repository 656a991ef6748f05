"""A move of the Threshold page's slider redraws both cut charts in place: Chromium at 1400 × 900 on the bundled
corpus, embedded by the FAKE encoder (strategy A, dense only: the page's charts, not the model, are under test).

After a move the histogram's and the trade-off's drawings (their ``svg`` elements) are the ones drawn before it,
and their titles, the cut's rule and the outcome sentence show the new cut (``ui.threshold_charts``: the same spec,
new rows). A click on the trade-off curve still sets the cut, and the same click again after a move sets it again.
Every wait is an auto-waiting assertion on one element or a wait for the page's own state.
"""

from __future__ import annotations

import re

import pytest

from ui.context import CUT_SLIDER_LABEL

from browser_wait import one, settle
from browsing import browser, serving, viewport_page  # noqa: F401 - fixtures

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

pytestmark = [pytest.mark.browser]

LIMIT_MS = 300_000  # the first page embeds the bundled corpus (918 chunks) with the fake encoder on a busy machine
MOVE_MS = 60_000  # one move's run on a busy machine
CHARTS = ("threshold_histogram", "threshold_curve")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from pathlib import Path

    base = tmp_path_factory.mktemp("in-place")
    helpers = str(Path(__file__).resolve().parents[1] / "helpers")
    with serving({"RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_ENCODER": "fakes:fake_encoder",
                  "RAGDIAG_STRATEGIES": "A", "RAGDIAG_RETRIEVERS": "dense", "PYTHONPATH": helpers}, base) as url:
        yield url


@pytest.fixture(scope="module")
def page(server, browser):
    yield from viewport_page(browser, 1400, 900, LIMIT_MS)


def _chart(page, key: str):
    return page.locator(f'[data-testid="stMain"] .st-key-{key} [data-testid="stVegaLiteChart"]')


def _slider(page):
    return page.locator('[data-testid="stMain"]').get_by_role("slider", name=CUT_SLIDER_LABEL)


def _sentence(page, cut: str):
    pattern = re.compile(r"^At cut " + re.escape(cut) + r" \([a-z ]+\): of \d+ answerable")
    return page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p').filter(has_text=pattern)


def _open(page, server: str) -> None:
    page.goto(f"{server}/threshold")
    expect(page.get_by_role("heading", name="Threshold", exact=True)).to_be_visible(timeout=LIMIT_MS)
    expect(page.locator('[data-testid="stProgress"]')).to_have_count(0, timeout=LIMIT_MS)
    expect(page.get_by_text("Strategies still computing")).to_have_count(0, timeout=LIMIT_MS)
    for key in CHARTS:
        expect(_chart(page, key).locator("svg")).to_be_visible(timeout=LIMIT_MS)
    settle(page, LIMIT_MS)


def _press(page, key: str = "ArrowRight") -> str:
    """One arrow press on the focused slider; waits for the page's run at the new cut; returns the cut's words."""
    thumb = _slider(page)
    before = one(thumb).input_value()
    page.keyboard.press(key)
    expect(thumb).not_to_have_value(before, timeout=MOVE_MS)
    cut = one(thumb).get_attribute("aria-valuetext")
    expect(_sentence(page, cut)).to_have_count(1, timeout=MOVE_MS)
    settle(page, MOVE_MS)
    return cut


MARK = """els => els.forEach(svg => { svg.dataset.drawnBefore = 'yes'; })"""


def test_a_move_redraws_both_charts_in_place_at_the_new_cut(server, page):
    _open(page, server)
    one(_slider(page)).focus()
    _press(page)  # the first move after opening makes every element of the main area anew (its cause not traced)
    for _ in range(3):
        for key in CHARTS:
            one(_chart(page, key)).locator("svg").evaluate_all(MARK)
        cut = _press(page)
        histogram, curve = (_chart(page, key) for key in CHARTS)
        expect(histogram.get_by_text(f"At cut {cut}:", exact=False)).to_have_count(1, timeout=MOVE_MS)
        expect(curve.get_by_text(f"at cut {cut}", exact=False)).to_have_count(1, timeout=MOVE_MS)
        for chart in (histogram, curve):  # the same drawing, not a new one built for the cut
            expect(chart.locator("svg")).to_have_attribute("data-drawn-before", "yes", timeout=1)


def test_the_same_click_on_the_curve_sets_the_cut_again_after_a_move(server, page):
    _open(page, server)
    thumb = _slider(page)

    def click_left() -> str:
        before = one(thumb).get_attribute("aria-valuetext")
        plot = one(_chart(page, "threshold_curve")).locator("svg g.mark-line").evaluate_all("""els => {
            const r = els.map(e => e.getBoundingClientRect());
            const x = Math.min(...r.map(b => b.left)), y = Math.min(...r.map(b => b.top));
            return {x, y, width: Math.max(...r.map(b => b.right)) - x, height: Math.max(...r.map(b => b.bottom)) - y};
        }""")
        page.mouse.click(plot["x"] + 0.2 * plot["width"], plot["y"] + 0.5 * plot["height"])
        expect(thumb).not_to_have_attribute("aria-valuetext", before, timeout=MOVE_MS)
        after = one(thumb).get_attribute("aria-valuetext")
        expect(_sentence(page, after)).to_have_count(1, timeout=MOVE_MS)
        settle(page, MOVE_MS)
        return after

    clicked = click_left()
    one(thumb).focus()
    moved = _press(page)
    assert moved != clicked
    assert click_left() == clicked  # the click before the move is not taken for the same click again
