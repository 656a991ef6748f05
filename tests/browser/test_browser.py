"""What a person sees: the real app in headless Chromium (Playwright), on the tiny corpus.

Starts ``streamlit run app.py`` on a free port of 127.0.0.1 with the tiny
corpus of ``test_app.py`` and an empty cache folder, and drives Debian's
``/usr/bin/chromium`` (installed by ``scripts/browser-deps.sh``; Playwright's
own browsers are not used). Screenshots go to ``test-artifacts/``. Every wait goes through ``browser_wait``
(the run over, then the one element read holding its value).
"""

from __future__ import annotations

import re
import time

import pytest

from browser_wait import count, main, one, settle, sidebar, text_of, texts_of, value_of
from browsing import (COLD_TIMEOUT_MS, SETTLE_LIMIT_MS, main_text, recall_grid, shot, sync_api, wait_settled,
                      browser, page, server)  # noqa: F401 - browser, page and server are fixtures

pytestmark = [pytest.mark.browser, pytest.mark.model]


def test_overview_shows_recall_table(server, page):
    t0 = time.perf_counter()
    page.goto(f"{server}/overview")
    page.get_by_role("heading", name="Overview").wait_for()
    drawn = time.perf_counter() - t0
    # cold store: the page is already drawn and shows the progress of loading the model / building indexes
    page.locator('[data-testid="stProgress"]').first.wait_for(timeout=30_000)
    recall_grid(page).wait_for(timeout=COLD_TIMEOUT_MS)
    cold = time.perf_counter() - t0
    settle(page)
    print(f"\nfirst paint {drawn:.1f} s; time to overview table (cold, tiny corpus): {cold:.1f} s")
    text = main_text(page)
    assert re.search(r"At k = 4, .+ finds the answer for \d+% \(\d+–\d+\)", text), text  # the answer first
    # the table's cells are in the grid's accessible DOM
    grid = recall_grid(page)
    expect = sync_api.expect
    expect(grid.get_by_text("E/hybrid", exact=True).first).to_be_attached()
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for()
    page.get_by_text("Inputs: corpus and ground truth").click()
    page.get_by_text("in-domain queries").first.wait_for()
    main_text(page, re.compile(r"documents\s+3\b"))
    shot(page, "overview")
    # warm: a reload is served from the cached evaluation
    t0 = time.perf_counter()
    page.reload()
    recall_grid(page).wait_for()
    print(f"time to overview table (warm reload): {time.perf_counter() - t0:.1f} s")


def _gate_grid(page):
    """The Threshold page's table of outcomes at the cut on screen (its cells are in the grid's accessible DOM)."""
    return main(page).locator('.st-key-threshold_rates [data-testid="stDataFrame"]')


def _cut_field(page):
    """The sidebar's exact cut (one field: its key is stable, so a rerun never draws a second copy beside it)."""
    return sidebar(page).get_by_role("spinbutton", name=re.compile(r"^Cut, exact"))


def test_threshold_cut_from_the_sidebar(server, page):
    page.goto(f"{server}/threshold?config=E%2Fhybrid&cut=0.5")
    page.get_by_text("At strictness 0.500", exact=False).wait_for(timeout=SETTLE_LIMIT_MS)
    wait_settled(page)
    grid = _gate_grid(page)
    for outcome in ("answered", "refused (nothing close enough)", "bluffs (off-topic, all)"):
        sync_api.expect(grid.get_by_text(outcome, exact=True).first).to_be_attached()
    shot(page, "threshold-before")
    field = _cut_field(page)
    assert float(value_of(field)) == 0.5
    one(field).fill("0.505")
    one(field).press("Enter")
    main_text(page, "At strictness 0.505")
    value_of(field, "0.505")
    assert "cut=0.505" in page.url
    one(field).fill("1")
    one(field).press("Enter")
    # every out-of-domain query gets sources when nothing is cut
    text = main_text(page, "At strictness 1.000 (your choice), 2 of 2 off-topic questions still get passages")
    assert "misses the goal" in text
    shot(page, "threshold-after")


def test_inspector_and_escaped_text(server, page):
    page.goto(f"{server}/inspector?q=q2%3Acourse&config=E%2Fhybrid&cut=1")
    page.get_by_text("How should chain lubricant be applied?").first.wait_for(timeout=COLD_TIMEOUT_MS)
    wait_settled(page)
    page.get_by_text("Citation preview").wait_for()  # the page's last section: drawn whole, not mid-rerun
    page.get_by_text("Answer (needle)").first.wait_for()
    # setting the shared context from the URL reruns the page once; wait for its locator to be drawn again
    page.get_by_text("#char=", exact=False).first.wait_for()
    text = main_text(page, "Citation preview")
    assert "Answer (needle)" in text, text
    assert "#char=" in text, text
    assert "Citation preview" in text
    assert "Question: How should chain lubricant be applied?" in text
    marks = main(page).locator("mark")
    assert count(marks.filter(has_text="Chain lubricant")), texts_of(marks)  # the needle is highlighted
    shot(page, "inspector")

    page.goto(f"{server}/chunking?doc=bike")
    page.get_by_text("Document viewer").wait_for(timeout=COLD_TIMEOUT_MS)
    chunk_map = page.locator('[data-ragdiag="chunk-map"]')
    # the corpus's markup is shown as characters, inside our own highlighting
    assert "<script>alert(1)</script>" in text_of(chunk_map)
    assert count(chunk_map.locator("script")) == 0
    assert page.dialogs == []  # type: ignore[attr-defined]
    shot(page, "chunking")
