"""The cut you run today on the Threshold page, as a person sees it: Chromium at 1400 × 900, locked mode.

The server runs locked (``RAGDIAG_LOCKED=1``: no path fields) on the tiny corpus with the FAKE encoder; the
number field for the cut a team runs today is still there (a number, not a path). Typed in distance units and
then in similarity units, the cut is drawn as its own marker on both charts (read from the SVG's ARIA labels),
the marker is inside the first screen (no scrolling past the first chart), the sentence is the CLI's, and the
URL carries the value and its units.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from browser_wait import count, main, main_text, one, settle, value_of
from browsing import ARTIFACTS, COLD_TIMEOUT_MS, browser, serving_tiny, viewport_page  # noqa: F401
from processes import child_pythonpath

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = [pytest.mark.browser]

WIDTH, HEIGHT = 1400, 900


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serving_tiny(tmp_path_factory.mktemp("browser_today"), RAGDIAG_ENCODER="fakes:fake_encoder",
                      RAGDIAG_LOCKED="1", PYTHONPATH=child_pythonpath()) as served:
        yield served


@pytest.fixture(scope="module")
def page(served, browser):
    yield from viewport_page(browser, WIDTH, HEIGHT)


def _ready(page) -> None:
    """The page drawn with every strategy and both charts, the run over."""
    page.get_by_role("heading", name="Threshold").wait_for(timeout=COLD_TIMEOUT_MS)
    page.wait_for_function("""() => document.querySelectorAll('[data-testid="stVegaLiteChart"] svg').length >= 2""",
                           timeout=COLD_TIMEOUT_MS, polling=500)
    settle(page)


def _markers(page, name: str) -> list[dict]:
    """Per drawn chart (in page order), the box of the first rule whose ARIA label names ``name``, or None: read once
    the run is over and the page stands still (a box read mid-rerun is a moment's layout, not the page's)."""
    settle(page)
    return page.evaluate("""(name) => Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"] svg'))
        .map((svg) => {
            const el = Array.from(svg.querySelectorAll('[aria-roledescription="rule"], [aria-roledescription="rule mark"]'))
                .find((e) => (e.getAttribute('aria-label') || '').includes(name));
            if (!el) return null;
            const r = el.getBoundingClientRect();
            return {label: el.getAttribute('aria-label'), top: r.top, bottom: r.bottom, left: r.left};
        })""", name)


def _wait_markers(page, label: str) -> None:
    """Until both charts draw the "you run today" rule with ``label`` in its ARIA label (a chart redraws after the
    run that changed it)."""
    page.wait_for_function("""(label) => Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"] svg'))
        .filter((svg) => Array.from(svg.querySelectorAll('[aria-label*="you run today"]'))
            .some((e) => e.getAttribute('aria-label').includes(label))).length >= 2""",
                           arg=label, timeout=60_000, polling=200)


def _today_field(page):
    return main(page).get_by_role("spinbutton", name="The cut you run today")


def _type_current(page, value: str) -> None:
    field = one(_today_field(page))
    field.fill(value)
    field.press("Enter")
    page.wait_for_function("(v) => new URL(location.href).searchParams.get('current') === v", arg=value,
                           timeout=60_000, polling=200)
    _wait_markers(page, f"cut: {value};")
    settle(page)


def _to_top(page) -> None:
    """Back to the first screen (the page's title in view, as it opens)."""
    page.get_by_role("heading", name="Threshold", exact=True).scroll_into_view_if_needed()
    page.locator('[data-testid="stMain"]').evaluate("(m) => { m.scrollTop = 0; window.scrollTo(0, 0); }")
    sync_api.expect(page.get_by_role("heading", name="Threshold", exact=True)).to_be_in_viewport()


def test_the_cut_you_run_today_is_a_marker_on_both_charts_in_the_first_screen(served, page):
    url, root, truth = served
    page.goto(f"{url}/threshold")
    _ready(page)
    field = one(_today_field(page))
    assert one(field).is_visible() and one(field).is_editable()  # locked mode: a number, not a path
    assert count(page.get_by_label("Corpus folder")) == 0  # ...while the path fields are gone

    _type_current(page, "0.6")  # the field sits under the charts: typing scrolls to it
    _to_top(page)
    boxes = _markers(page, "you run today")
    assert len(boxes) >= 2 and all(boxes[:2]), boxes  # the histogram and the trade-off both draw it
    page.screenshot(path=str(ARTIFACTS / "threshold-today-distance.png"))
    assert all(b["top"] < HEIGHT - 40 for b in boxes[:2]), boxes  # seen without scrolling past the first chart
    assert all(re.search(r"0\.6", b["label"]) for b in boxes[:2]), boxes
    # the slice verdict sits under the charts (the first screen is the goal, the slider, the sentence, the charts)
    sync_api.expect(main(page).get_by_text(re.compile(r"^Per (language|tag|doc)")).first).to_be_attached()
    main_text(page, "The cut you run today (cosine distance 0.6 (ragdiag's own units))")
    q = {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}
    assert q["current"] == "0.6" and q["units"] == "distance", q

    # the same number read as a similarity: the marker moves to the distance 1 - 0.6 = 0.4
    page.locator("button", has_text=re.compile(r"^similarity$")).click()  # the units switch
    page.wait_for_function("() => new URL(location.href).searchParams.get('units') === 'similarity'",
                           timeout=60_000, polling=200)
    main_text(page, "similarity 0.6 read as cosine distance 1 - 0.6 = 0.4")
    _wait_markers(page, "cut: 0.4;")  # both charts redrawn at the distance 1 - 0.6
    _to_top(page)
    boxes = _markers(page, "you run today")
    assert all(boxes[:2]) and all(re.search(r"0\.4", b["label"]) for b in boxes[:2]), boxes
    assert all(b["top"] < HEIGHT - 40 for b in boxes[:2]), boxes
    page.screenshot(path=str(ARTIFACTS / "threshold-today-similarity.png"))
    q = {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}
    assert q["current"] == "0.6" and q["units"] == "similarity", q

    # emptied: no marker, and the URL forgets it
    field = one(_today_field(page))
    field.fill("")
    field.press("Enter")
    page.wait_for_function("() => !new URL(location.href).searchParams.has('current')", timeout=60_000, polling=200)
    settle(page)
    page.wait_for_function("""() => !document.querySelector('[data-testid="stVegaLiteChart"] svg [aria-label*="you run today"]')""",
                           timeout=60_000, polling=200)  # both charts redrawn without it
    assert len(_markers(page, "you run today")) >= 2 and not any(_markers(page, "you run today"))
    assert "units" not in parse_qs(urlparse(page.url).query)


def test_a_link_with_the_cut_you_run_today_opens_with_it(served, page):
    url, _, _ = served
    page.goto(f"{url}/threshold?current=0.47&units=similarity&bluff_cost=3")
    _ready(page)
    main_text(page, "similarity 0.47 read as cosine distance 1 - 0.47 = 0.53")
    assert all(_markers(page, "you run today")[:2])
    assert value_of(_today_field(page), "0.470") == "0.470"
    assert count(main(page).get_by_text("If a bluff costs as much as 3 lost answers")) == 1
