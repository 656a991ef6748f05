"""The review queue in headless Chromium: a person accepts 20 drafts with the keyboard alone, then saves with W.

The bundled corpus with a copy of its ground truth (the page writes the copy),
strategies E and F with hybrid retrieval (the plan compares them). Uses the
server helpers of ``browsing.py``; screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from browser_wait import main, one, text_of
from browsing import ARTIFACTS, COLD_TIMEOUT_MS, TIMEOUT_MS, shot, start_server, stop_server, wait_idle
from browsing import browser, page  # noqa: F401 - pytest fixtures

pytestmark = [pytest.mark.browser, pytest.mark.model]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def review_server(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser-review")
    truth = base / "sklearn-user-guide.truth.json"
    shutil.copy(ROOT / "data" / "sklearn-user-guide.truth.json", truth)
    env = {"RAGDIAG_CORPUS": str(ROOT / "data" / "sklearn-user-guide"), "RAGDIAG_TRUTH": str(truth),
           "RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_STRATEGIES": "E,F", "RAGDIAG_RETRIEVERS": "hybrid"}
    proc, url = start_server(env, base / "streamlit.log")
    try:
        yield url, truth
    finally:
        stop_server(proc)


def test_accept_twenty_drafts_with_the_keyboard(review_server, page):  # noqa: F811 - the fixture
    url, truth = review_server
    ARTIFACTS.mkdir(exist_ok=True)
    before = json.loads(truth.read_text(encoding="utf-8"))
    page.goto(f"{url}/truth_review")
    page.get_by_role("heading", name="Grow the ground truth").wait_for(timeout=COLD_TIMEOUT_MS)
    page.get_by_text(re.compile(r"^Write \d+ more questions")).wait_for(timeout=COLD_TIMEOUT_MS)
    page.get_by_role("button", name="Accept").wait_for(timeout=TIMEOUT_MS)
    wait_idle(page)
    shot(page, "truth-review-plan-and-queue")
    accepted = []
    for i in range(20):
        needle = text_of(main(page).locator('.st-key-gt_rq_needle [data-testid="stCode"]')).strip()
        leakage = main(page).locator(".st-key-gt_rq_leakage").get_by_text("Leakage:", exact=False)
        assert one(leakage).is_visible()  # every draft shows its leakage
        said = "|".join(re.findall(r"Accepted as q\d+", page.evaluate("document.body.innerText")))
        page.locator("body").press("a")
        # wait for this acceptance's own message: the previous one stays on screen until the rerun
        page.wait_for_function("""(before) => {
            const m = document.body.innerText.match(/Accepted as q\\d+/g);
            return m !== null && m.join('|') !== before; }""", arg=said, timeout=TIMEOUT_MS)
        wait_idle(page)
        accepted.append(needle)
    page.locator("body").press("w")
    page.get_by_text("Saved sklearn-user-guide.truth.json", exact=False).wait_for(timeout=TIMEOUT_MS)
    shot(page, "truth-review-saved")
    saved = json.loads(truth.read_text(encoding="utf-8"))
    new = saved["questions"][len(before["questions"]):]
    assert len(new) == 20
    assert all(q["source"] == "draft" and set(q["queries"]) == {"course"} for q in new)
    assert [" ".join(q["needle"].split()) for q in new] == [" ".join(n.split()) for n in accepted]
