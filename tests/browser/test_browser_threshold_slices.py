"""The Threshold page's slices as a person sees them: Chromium at 1400 × 900 on a corpus in two languages.

``data/de-haushalt`` (German guides, each question asked in German and in
English) with eight English off-topic queries added (the fixture of
``tests/model/test_threshold_slices.py``): the page slices by language without being
asked, the verdict sentence follows the first screen's charts, and the small multiples of
the slices' distances sit in their own section below, readable (the chart checks
of ``tests/browser/test_browser_decide.py``).
"""

from __future__ import annotations

import re
import json
from pathlib import Path

import pytest

from browser_wait import count, one, text_of
from browsing import ARTIFACTS, browser, serving, viewport_page  # noqa: F401 - browser is a fixture
from browsing import HEIGHT, WIDTH, chart_problems, open_page
from offtopic import ENGLISH_OOD

pytestmark = [pytest.mark.browser, pytest.mark.model]

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("slices")
    truth = json.loads((DATA / "de-haushalt.truth.json").read_text(encoding="utf-8"))
    truth["ood"] += [{"id": f"e{i}", "kind": "far", "query": q} for i, q in enumerate(ENGLISH_OOD, 1)]
    path = base / "de-en.truth.json"
    path.write_text(json.dumps(truth), encoding="utf-8")
    # the one configuration the test reads (E/dense) is all the server evaluates: the others cost CPU, not checks
    with serving({"RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_CORPUS": str(DATA / "de-haushalt"),
                  "RAGDIAG_TRUTH": str(path), "RAGDIAG_STRATEGIES": "E", "RAGDIAG_RETRIEVERS": "dense"}, base) as url:
        yield url


@pytest.fixture(scope="module")
def page(server, browser):
    yield from viewport_page(browser, WIDTH, HEIGHT)


def test_the_slice_verdict_is_under_the_charts_and_the_slices_below(server, page):
    open_page(page, f"{server}/threshold?config=E/dense", "Threshold")
    page.screenshot(path=str(ARTIFACTS / "threshold-slices-first-screen.png"))
    # the first screen is the goal, the cut's slider, its sentence and both charts; the verdict follows them
    verdict = page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"]').filter(
        has_text=re.compile(r"^Per language \("))  # the verdict, not the caption
    verdict.scroll_into_view_if_needed()
    # two slices: each is the other's "rest", and the sentence leads with the one whose difference is shown
    assert re.search(r"Slice “(en|de)” needs its own cut", text_of(verdict, "needs its own cut"))
    tops = page.evaluate("""() => {
        const v = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
            .find((e) => e.innerText.startsWith('Per language'));
        const c = document.querySelector('[data-testid="stVegaLiteChart"]');
        return [v.getBoundingClientRect().top, c.getBoundingClientRect().bottom];
    }""")
    assert tops[0] >= tops[1], tops  # under the first chart
    section = page.get_by_role("heading", name="One cut for every language?")
    section.scroll_into_view_if_needed()
    grid = page.locator('[data-testid="stMain"] .st-key-slice_multiples_chart [data-testid="stVegaLiteChart"]')
    grid.scroll_into_view_if_needed()
    grid.locator("svg").wait_for()
    page.screenshot(path=str(ARTIFACTS / "threshold-slices-section.png"), full_page=True)
    label = one(grid.locator("svg.marks")).get_attribute("aria-label") or ""
    assert "en" in text_of(grid) or "en" in label or count(grid.locator("text", has_text="en"))
    assert chart_problems(page) == []
