"""The decided cut holds on every page (issue 38): Chromium at 1400 × 900 (and 800 px) on the bundled corpus.

* With nothing chosen, Summary, Overview, Threshold, Inspector, Export and the report downloaded from the Summary
  are about the recommendation at its cut, without a click.
* The sidebar's slider moves the cut to the next stop, a click on the trade-off curve sets it, and the cut the
  Threshold page prints for its in-sample rule gives its printed rate when typed back.
* While another evaluation keeps the machine busy, 30 quick clicks through the pages never change the context.
* At 800 px the Summary's cards show their numbers whole.

Every wait is for a state of the page (``browser_wait.settle``: the run over, no progress bar, no "still
computing" line, nothing stale), and every read is of one element holding its value, with a generous overall
limit: a slow machine makes these tests slower, not red.
"""

from __future__ import annotations

import re
import subprocess
import sys
from urllib.parse import parse_qs, urlparse

import pytest

from browser_wait import count, main, one, settle, sidebar, sidebar_text, text_of, value_of
from browsing import ARTIFACTS, COLD_TIMEOUT_MS, ROOT, browser, viewport_page  # noqa: F401 - fixture

pytestmark = [pytest.mark.browser, pytest.mark.model]

WIDTH, HEIGHT = 1400, 900
RATE = re.compile(r"^\d+% \(\d+–\d+\)$")
LIMIT_MS = 3 * COLD_TIMEOUT_MS  # the overall limit of one wait; a wait ends as soon as the state is reached


@pytest.fixture(scope="module")
def server(bundled_dashboard):
    """The bundled corpus's dashboard, shared with the other modules that only read it (conftest.py)."""
    return bundled_dashboard


@pytest.fixture
def page(server, browser):
    yield from viewport_page(browser, WIDTH, HEIGHT, LIMIT_MS, accept_downloads=True)


def sync_expect():
    from playwright.sync_api import expect

    return expect


def params(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def context_of(page) -> dict[str, str]:
    q = params(page)
    return {k: q.get(k) for k in ("config", "cut", "keep", "goal")}


def go(page, title: str) -> None:
    """Open a page from the sidebar's navigation, as a person does (Export sits behind "View … more")."""
    link = page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title)  # its icon's text precedes
    if not count(link.filter(visible=True)):  # behind "View … more"
        page.locator('[data-testid="stSidebarNav"]').get_by_text(re.compile(r"View \d+ more")).click()
    one(link.filter(visible=True)).click()
    page.get_by_role("heading", name=title, exact=True).wait_for(timeout=LIMIT_MS)


def cut_field(page):
    """The sidebar's exact cut: one field (a number field whose label names the cut)."""
    return sidebar(page).get_by_role("spinbutton", name=re.compile(r"^Cut, exact"))


def main_text(page, expected=None) -> str:
    return text_of(main(page), expected)


def test_every_page_and_the_report_show_the_recommendation_without_a_click(server, page):
    page.goto(server)
    page.get_by_role("heading", name="Summary").wait_for(timeout=LIMIT_MS)
    settle(page)
    ctx = context_of(page)
    assert ctx["cut"] and re.fullmatch(r"\d\.\d{3}", ctx["cut"]) and ctx["config"], page.url
    summary = main_text(page)
    assert f"at strictness {ctx['cut']}" in summary
    label = page.get_by_test_id("stMetricLabel").filter(has_text=re.compile(r"^answered", re.IGNORECASE))
    answered = text_of(main(page).get_by_test_id("stMetric").filter(has=label).get_by_test_id("stMetricValue"))
    assert RATE.match(answered), answered
    with page.expect_download(timeout=LIMIT_MS) as dl:
        page.get_by_role("button", name="Download report").click()
    report = open(dl.value.path(), encoding="utf-8").read()
    assert ctx["config"] in report and ctx["cut"] in report
    estimate, interval = re.match(r"(\d+%) \((\d+–\d+)\)", answered).groups()
    assert estimate in report and interval in report  # the same rate and range ("56%", "44–68")
    for title in ("Overview", "Threshold", "Inspector", "Export"):
        go(page, title)
        settle(page)
        assert context_of(page) == ctx, (title, page.url)
        assert value_of(cut_field(page)) == ctx["cut"], title
        text = main_text(page)
        if title == "Threshold":
            assert f"At strictness {ctx['cut']} (the recommendation)" in text
        if title == "Export":
            assert f"at cut {ctx['cut']}" in text and "the recommendation." in text
    page.screenshot(path=str(ARTIFACTS / "context-export.png"))


def test_slider_and_curve_set_the_cut_and_a_printed_cut_reproduces_its_rates(server, page):
    page.goto(server + "/threshold")
    page.get_by_role("heading", name="Threshold").wait_for(timeout=LIMIT_MS)
    settle(page)
    start = float(params(page)["cut"])
    thumb = one(sidebar(page).locator('[data-testid="stSlider"] input[type="range"]'))
    thumb.focus()
    thumb.press("ArrowRight")  # the next stop: the next cut where some query changes outcome
    page.wait_for_function(f"() => !location.search.includes('cut={start:.3f}')", timeout=LIMIT_MS)
    settle(page)
    moved = float(params(page)["cut"])
    assert moved > start
    sidebar_text(page, "Changed: Strictness (cut)")
    # a click on the trade-off curve (its own keyed container), in the left part of its plot
    chart = main(page).locator('.st-key-threshold_curve [data-testid="stVegaLiteChart"]')
    chart.scroll_into_view_if_needed()
    box = one(chart.locator("svg.marks")).bounding_box()
    page.mouse.click(box["x"] + 0.25 * box["width"], box["y"] + 0.6 * box["height"])
    page.wait_for_function(f"() => !location.search.includes('cut={moved:.3f}')", timeout=LIMIT_MS)
    settle(page)
    clicked = float(params(page)["cut"])
    assert clicked != moved
    # the printed in-sample cut, typed back, gives the rate printed beside it
    text = main_text(page)
    m = re.search(r"The cut fitted to these questions (\d\.\d{3}) .*?in sample \(optimistic\) (\d+% \(\d+–\d+\)) "
                  r"bluffs", text, re.S)
    assert m, text[:1500]
    printed, rate = m.group(1), m.group(2)
    field = one(cut_field(page))
    field.fill(printed)
    field.press("Enter")
    page.wait_for_function(f"() => location.search.includes('cut={printed}')", timeout=LIMIT_MS)
    settle(page)
    grid = main(page).locator('.st-key-threshold_rates [data-testid="stDataFrame"]')  # the rates at the cut
    row = grid.get_by_text("bluffs (off-topic, all)", exact=True).first
    row.wait_for(state="attached", timeout=LIMIT_MS)
    assert count(grid.get_by_text(rate, exact=True)) >= 1, (printed, rate)  # its cells are in the grid's DOM


def test_a_busy_server_never_changes_the_context_without_the_visitor(server, page, tmp_path):
    page.goto(server)
    page.get_by_role("heading", name="Summary").wait_for(timeout=LIMIT_MS)
    settle(page)
    ctx = context_of(page)
    busy = subprocess.Popen([sys.executable, "-m", "ragdiag", "eval", "--strategies", "A,B", "--no-snapshot",
                             "--cache", str(tmp_path / "busy")], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        pages = ("Overview", "Threshold", "Inspector", "Summary", "Threshold", "Overview")
        for i in range(30):
            title = pages[i % len(pages)]
            go(page, title)  # a click as soon as the page changes: the previous run may still be going
            if i % 3 == 2:  # every third click, wait for the page and read what it shows
                settle(page)
                assert context_of(page) == ctx, (i, title, page.url)
                assert value_of(cut_field(page)) == ctx["cut"], (i, title)
        settle(page)
        assert context_of(page) == ctx, page.url
        assert "Changed:" not in sidebar_text(page)
    finally:
        busy.terminate()
        busy.wait(timeout=30)


def test_at_800_px_the_summary_cards_show_their_numbers_whole(server, page):
    page.set_viewport_size({"width": 800, "height": HEIGHT})
    page.goto(server)
    page.get_by_role("heading", name="Summary").wait_for(timeout=LIMIT_MS)
    settle(page)
    # the four cards drawn (the run over is not enough: read the cards once all four are there)
    sync_expect()(main(page).locator('[data-testid="stMetricValue"]')).to_have_count(4, timeout=LIMIT_MS)
    cards = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMetricValue"]')].map(
        el => ({text: el.innerText, cut: el.scrollWidth > el.clientWidth + 1
                || [...el.querySelectorAll('*')].some(c => c.scrollWidth > c.clientWidth + 1)}))""")
    assert len(cards) == 4, cards  # answered, given wrong passages, refused, bluffs
    for card in cards:
        assert RATE.match(card["text"].strip()) and "…" not in card["text"], card
        assert not card["cut"], card
    page.screenshot(path=str(ARTIFACTS / "context-summary-800.png"))
