"""The Monitor page as a person sees it: Chromium at 1400 × 900, served locked with the operator's query log.

The log is the three-week synthetic one (``tests/helpers/_monitor_log.py``); the page
must name the departed week in words (the premise, 32% off-topic, in the
link), draw the refused share over each week's predicted band with a plot area at least 240 px tall (read from the SVG's
y axis), pass the chart checks of the decision screens, and offer no field to
type a path. Uses the real model (the shipped index seeds an empty cache).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _monitor_log import write_synthetic_log
from browser_wait import count, main_text
from browsing import ARTIFACTS, browser, start_server, stop_server  # noqa: F401 - browser is a fixture
from browsing import HEIGHT, WIDTH, chart_problems, open_page

pytestmark = [pytest.mark.browser, pytest.mark.model]

TRUTH = Path(__file__).resolve().parents[2] / "data" / "sklearn-user-guide.truth.json"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("monitor")
    log = write_synthetic_log(base / "live.jsonl", TRUTH)
    proc, url = start_server({"RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_LOCKED": "1",
                              "RAGDIAG_MONITOR_LOG": str(log)}, base / "streamlit.log")
    try:
        yield url
    finally:
        stop_server(proc)


def test_monitor_page_names_the_moved_week_with_a_tall_chart(server, browser):
    ctx = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    try:
        open_page(page, f"{server}/monitor?config=E/hybrid&cut=0.524&offtopic=32", "Monitor")
        page.locator('[data-testid="stVegaLiteChart"] svg').first.wait_for(timeout=120_000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "monitor.png"))
        main = main_text(page)
        assert ("1 of 3 weeks refused more than the calibration predicts with 32% of live queries off-topic at cut "
                "0.524: 2026-W48.") in main, main[:2000]
        assert re.search(r"week 2026-W48: \d+ of \d+ refused \(\d+%, \d+–\d+\), predicted \d+–\d+ \(\d+–\d+%\) for \d+ "
                         r"queries with 32% off-topic: more refused than predicted, the questions moved", main), main[:2000]
        assert "Farthest from the corpus" in main
        assert count(page.locator('[data-testid="stTextInput"]')) == 0  # locked: nothing to type a path into
        heights = page.evaluate("""() => [...document.querySelectorAll(
            '[data-testid="stVegaLiteChart"] svg [aria-label^="Y-axis"]')].map((el) => el.getBoundingClientRect().height)""")
        assert heights and max(heights) >= 240, heights
        assert chart_problems(page) == []
    finally:
        ctx.close()
