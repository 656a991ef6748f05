"""The Compare page in headless Chromium on the bundled corpus: what a person sees of each question.

Every view answers in words first; no chart has a legend of more than 8 values, and no chart title is
cut short (Vega ends a clipped title with an ellipsis) or runs past its chart. The exploratory view
colours no verdict.
"""

from __future__ import annotations

import re
import urllib.parse

import pytest

from browser_wait import count, settle
from browsing import SETTLE_LIMIT_MS, main_text, shot, start_server, stop_server
from browsing import browser, page  # noqa: F401 - the shared pytest fixtures

pytestmark = [pytest.mark.browser, pytest.mark.model]

VIEWS = ("What should we ship?", "What does each chunking switch do?", "Is the candidate better than what we run?",
         "Explore every pair")

# per chart: legend sizes from the ARIA labels Vega writes, and each title's text and whether it fits its chart
CHARTS_JS = """
() => [...document.querySelectorAll('[data-testid="stMain"] svg.marks')].map(svg => {
  const box = svg.getBoundingClientRect();
  const legends = [...svg.querySelectorAll('[aria-label]')].map(e => e.getAttribute('aria-label'))
    .filter(l => /legend/i.test(l));
  const titles = [...svg.querySelectorAll('.role-title text, .role-title-text text')].map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, fits: r.left >= box.left - 1 && r.right <= box.right + 1};
  });
  return {width: box.width, legends, titles};
})
"""


@pytest.fixture(scope="module")
def bundled_server(tmp_path_factory):
    base = tmp_path_factory.mktemp("compare")
    env = {"RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_RETRIEVERS": "dense,bm25,hybrid",
           "RAGDIAG_BASELINE": "E/hybrid", "RAGDIAG_WARM": "0"}
    proc, url = start_server(env, base / "streamlit.log")
    try:
        yield url
    finally:
        stop_server(proc)


def _all_strategies_done(page, url: str) -> None:
    """Open the Compare page and wait until the background job has every strategy (the page reruns as they end)."""
    page.goto(f"{url}/compare")
    page.get_by_role("heading", name="Compare").wait_for(timeout=SETTLE_LIMIT_MS)
    settle(page)  # the run over and no strategy still computing


def test_every_question_reads_and_draws_within_the_rules(bundled_server, page):  # noqa: F811
    _all_strategies_done(page, bundled_server)
    for n, view in enumerate(VIEWS):
        page.goto(f"{bundled_server}/compare?view={urllib.parse.quote(view)}")
        page.get_by_role("heading", name="Compare").wait_for(timeout=SETTLE_LIMIT_MS)
        text = main_text(page)
        shot(page, f"compare-{n}")
        if view == VIEWS[0]:
            assert re.search(r"Ship .+ \([A-F]/\w+\) at strictness 0\.\d{3}: \d+% \(\d+–\d+\) of answerable", text), text[:800]
            assert "not shown worse than the best" in text
        elif view == VIEWS[1]:
            assert "contrasts" in text and "header" in text
        elif view == VIEWS[2]:
            assert "What you run today:" in text and "RAGDIAG_" not in text  # the meaning, not the variable
        else:
            assert "Exploratory" in text and "Which configurations each one beats, after correction" in text
            # exploratory: the verdict is plain text, never a coloured alert
            assert count(page.locator('[data-testid="stAlertContentSuccess"]')) == 0
        charts = page.evaluate(CHARTS_JS)
        if view in VIEWS[:2]:
            assert charts, f"{view}: no chart drawn"
        for chart in charts:
            for label in chart["legends"]:
                m = re.search(r"with (\d+) values?", label)
                assert m is None or int(m[1]) <= 8, (view, label)
            for title in chart["titles"]:
                assert title["fits"] and not title["text"].endswith("…"), (view, title)
            assert chart["width"] >= 240, (view, chart["width"])
