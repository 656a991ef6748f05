"""The answered goal in the sidebar, as a person sets and clears it: Chromium, locked mode (a number, not a path).

Typed into the sidebar's "Goal: answered at least (%)" field, the goal goes into the URL (``answered``) and the
Summary judges it on its own line beside the bluff goal; emptied, it leaves the URL and the Summary judges the bluff
goal alone. The recommendation on screen is the same throughout (the answered goal is judged, not optimised).
"""

from __future__ import annotations


import pytest

from browser_wait import main, main_text, one, sidebar, texts_of
from browsing import ARTIFACTS, COLD_TIMEOUT_MS, browser, serving_tiny, sync_api, wait_idle  # noqa: F401
from processes import child_pythonpath

pytestmark = [pytest.mark.browser]

FIELD = "Goal: answered at least (%)"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serving_tiny(tmp_path_factory.mktemp("browser_goals"), RAGDIAG_ENCODER="fakes:fake_encoder",
                      RAGDIAG_LOCKED="1", PYTHONPATH=child_pythonpath()) as (url, _, _):
        yield url


def _param(page, name: str):
    return page.evaluate("(n) => new URL(location.href).searchParams.get(n)", name)


def _wait_param(page, name: str, value) -> None:
    page.wait_for_function("([n, v]) => new URL(location.href).searchParams.get(n) === v", arg=[name, value],
                           timeout=60_000, polling=200)
    wait_idle(page, COLD_TIMEOUT_MS)


def _goal_lines(page) -> list[str]:
    return [t for t in texts_of(main(page).locator('[data-testid="stMarkdownContainer"]')) if t.startswith("Goal · ")]


def test_the_answered_goal_is_set_and_cleared_in_the_sidebar(served, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(served)  # the Summary is the first page
        page.get_by_role("heading", name="Summary").wait_for(timeout=COLD_TIMEOUT_MS)
        # every strategy in: the recommendation is final (a strategy finishing reruns the page)
        page.wait_for_function("""() => !document.querySelector('[data-testid="stProgress"]')
            && !document.querySelector('[data-testid="stMain"]').innerText.includes('Provisional')""",
                               timeout=COLD_TIMEOUT_MS, polling=500)
        wait_idle(page, COLD_TIMEOUT_MS)
        _wait_param(page, "goal", "5")
        # the final recommendation's configuration and cut (a provisional pick stays out of the URL)
        page.wait_for_function("() => ['config', 'cut'].every((k) => new URLSearchParams(location.search).has(k))",
                               timeout=COLD_TIMEOUT_MS, polling=200)
        config, cut = _param(page, "config"), _param(page, "cut")
        assert _param(page, "answered") is None and len(_goal_lines(page)) == 1
        field = sidebar(page).get_by_role("spinbutton", name=FIELD)
        assert one(field).is_visible() and one(field).is_editable()  # locked mode: a number, not a path

        field.fill("50")
        field.press("Enter")
        _wait_param(page, "answered", "50")
        main_text(page, "answered at least 50%:")
        lines = _goal_lines(page)
        assert len(lines) == 2 and lines[0].startswith("Goal · bluffs at most 5%: "), lines
        assert lines[1].startswith("Goal · answered at least 50%: ") and "answerable queries" in lines[1], lines
        page.screenshot(path=str(ARTIFACTS / "summary-two-goals.png"))

        field = one(sidebar(page).get_by_role("spinbutton", name=FIELD))
        field.fill("")
        field.press("Enter")
        _wait_param(page, "answered", None)
        sync_api.expect(main(page).get_by_text("answered at least 50%:")).to_have_count(0)
        assert len(_goal_lines(page)) == 1
        assert (_param(page, "config"), _param(page, "cut")) == (config, cut)  # judged, never optimised
    finally:
        ctx.close()
