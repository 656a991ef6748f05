"""The decision screens as a person sees them: Chromium at 1400 × 900 on the bundled corpus.

Checks what the first screen holds (the recommendation in words, with a
percentage and its interval; no seeding note, warning or Deploy button), the
sidebar's job sections, the Threshold page's "Use this cut" button above the
fold and what it does to the URL, and every chart on the Summary, Threshold and
Compare pages, read from the SVG's ARIA labels: at most 8 legend values, no
clipped title, no legend cut off, no continuous y axis shorter than 200 px.
Uses the real model (the bundled corpus's shipped index seeds an empty cache).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from ragdiag.analyses.recommend import RETRIEVER_WORDS, STRATEGY_WORDS

from browser_wait import count, main, one, text_of
from browsing import (ARTIFACTS, COLD_TIMEOUT_MS, HEIGHT, WIDTH, browser, chart_problems, first_screen,  # noqa: F401
                      n_charts, open_page, viewport_page)  # browser is a fixture

pytestmark = [pytest.mark.browser, pytest.mark.model]

RATE = re.compile(r"\d+% \(\d+–\d+\)")


@pytest.fixture(scope="module")
def server(bundled_dashboard):
    """The bundled corpus's dashboard, shared with the other modules that only read it (conftest.py)."""
    return bundled_dashboard


@pytest.fixture(scope="module")
def page(server, browser):
    yield from viewport_page(browser, WIDTH, HEIGHT)


def test_summary_first_screen_says_what_to_ship(server, page):
    open_page(page, server, "Summary")
    blocks = first_screen(page)
    text = "\n".join(b["text"] for b in blocks)
    page.screenshot(path=str(ARTIFACTS / "decide-summary.png"))
    ship = next(b["text"] for b in blocks if b["text"].startswith("Ship "))
    # the configuration in words (a strategy's and a retriever's description), not a code
    assert any(w.lower() in ship.lower() for w in STRATEGY_WORDS.values()), ship
    assert any(w.lower() in ship.lower() for w in RETRIEVER_WORDS.values()), ship
    assert RATE.search(text), text  # a percentage with its interval
    assert sum(b["kind"] == "stMetric" for b in blocks) == 4  # answered, given wrong passages, refused, bluffs
    assert not [b for b in blocks if b["kind"] == "stAlert"], text  # no warning on a first screen
    assert "shipped index" not in text and "seeded" not in text.lower()
    assert count(page.get_by_text("Deploy", exact=True)) == 0
    assert count(page.locator('[data-testid="stAppDeployButton"]')) == 0
    nav = text_of(page.locator('[data-testid="stSidebarNav"]'))
    for section in ("Results", "Decide the cut", "Diagnose", "Data and more"):
        assert section in nav, nav
    assert chart_problems(page) == []


def test_threshold_use_this_cut_is_above_the_fold_and_sets_the_url(server, page):
    open_page(page, f"{server}/threshold", "Threshold")  # at the proposed cut already: nothing to apply
    assert one(main(page).get_by_role("button", name=re.compile(r"^Use this cut"))).is_disabled()
    open_page(page, f"{server}/threshold?cut=0.6", "Threshold")  # a link with another cut: the button applies
    button = one(main(page).get_by_role("button", name=re.compile(r"^Use this cut")))
    box = one(button).bounding_box()
    assert box is not None and box["y"] + box["height"] <= HEIGHT
    page.screenshot(path=str(ARTIFACTS / "decide-threshold.png"))
    proposed = float(re.search(r"([0-9.]+)$", text_of(button)).group(1))
    assert n_charts(page) >= 2
    assert chart_problems(page) == []
    button.click()
    page.wait_for_function("() => !['0.6', '0.600'].includes(new URLSearchParams(location.search).get('cut'))",
                           timeout=COLD_TIMEOUT_MS)  # the proposed cut, not the link's
    said = main(page).locator('[data-testid="stMarkdownContainer"] p').filter(
        has_text=re.compile(rf"^At cut {proposed:.3f} \("))  # the page's sentence at the applied cut
    assert "Meets the goal." in text_of(said, "Meets the goal.", timeout_ms=COLD_TIMEOUT_MS)
    cut = float(parse_qs(urlparse(page.url).query)["cut"][0])
    assert round(cut, 4) == proposed


def test_compare_charts_are_readable(server, page):
    open_page(page, f"{server}/compare", "Compare")
    page.locator('[data-testid="stVegaLiteChart"] svg').first.wait_for(timeout=COLD_TIMEOUT_MS)
    assert chart_problems(page) == []


def test_inspector_first_screen_answers_in_a_sentence(server, page):
    open_page(page, f"{server}/inspector", "Inspector")
    text = "\n".join(b["text"] for b in first_screen(page))
    page.screenshot(path=str(ARTIFACTS / "decide-inspector.png"))
    from ragdiag.core.words import RUNG_WORDS

    leads = "|".join(re.escape(w[:1].upper() + w[1:]) for w in RUNG_WORDS.values())  # a rung's one name leads
    assert re.search(rf"— ({leads})", text), text
