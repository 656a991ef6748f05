"""The Ground truth page in headless Chromium: pick a needle, write phrasings, save, reload, evaluate.

A small version of going from a corpus to an evaluated ground truth on the
page alone. Uses the server helpers of ``browsing.py`` (Debian's
``/usr/bin/chromium``); screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re

import pytest

from browsing import ARTIFACTS, COLD_TIMEOUT_MS, fake_encoder_env, main_text, recall_grid, serving_tiny, shot, wait_idle
from browsing import browser, page  # noqa: F401 - pytest fixtures

pytestmark = [pytest.mark.browser]

NEW_NEEDLE = "Feed the starter equal weights of flour and water once a day."


@pytest.fixture(scope="module")
def gt_server(tmp_path_factory):
    # the FAKE encoder: writing, saving and counting the questions do not depend on the model
    with serving_tiny(tmp_path_factory.mktemp("browser-gt"), **fake_encoder_env()) as (url, _, truth):
        yield url, truth


def choose(page, label: str, option: str) -> None:
    """Open the selectbox labelled ``label`` and click the option whose text starts with ``option``."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text(label, exact=True))
    box.click()
    page.get_by_role("option", name=re.compile("^" + re.escape(option))).first.click()
    wait_idle(page)


def test_write_a_question_save_reload_evaluate(gt_server, page):  # noqa: F811 - the fixture
    url, truth = gt_server
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(f"{url}/ground_truth")
    page.get_by_role("heading", name="Ground truth").wait_for(timeout=COLD_TIMEOUT_MS)
    wait_idle(page)
    choose(page, "Document", "bread")
    choose(page, "Section", "Starter")
    choose(page, "Sentence", "1. Feed the starter")
    page.get_by_text("Occurs exactly once (bread", exact=False).wait_for()
    page.get_by_role("textbox", name="Phrasing 'course'", exact=True).fill("How often should a sourdough starter be fed, and with what?")
    page.keyboard.press("Enter")
    wait_idle(page)
    page.get_by_role("textbox", name="Phrasing 'ticket'", exact=True).fill("my starter looks sad, what do I give it and how often")
    page.keyboard.press("Enter")
    wait_idle(page)
    page.get_by_text("Leakage:", exact=False).first.wait_for()
    page.get_by_role("button", name="Add question").click()
    page.get_by_text("Added q05", exact=False).wait_for()
    wait_idle(page)
    shot(page, "ground-truth-added")
    page.get_by_role("button", name="Save").click()
    page.get_by_text("Saved tiny.truth.json", exact=False).wait_for()
    saved = json.loads(truth.read_text())
    assert saved["questions"][-1]["needle"] == NEW_NEEDLE
    assert saved["questions"][-1]["queries"]["ticket"] == "my starter looks sad, what do I give it and how often"
    # reload: the file is what the page shows
    page.reload()
    page.get_by_role("tab", name="Questions (5)").wait_for(timeout=COLD_TIMEOUT_MS)
    assert "saved" in main_text(page)
    # evaluate: the Overview runs on the saved file
    page.goto(f"{url}/overview")
    recall_grid(page).wait_for(timeout=COLD_TIMEOUT_MS)
    wait_idle(page)
    page.get_by_text("Inputs: corpus and ground truth").click()
    page.get_by_text("in-domain queries").first.wait_for()
    # a strategy finishing reruns the page: wait for the metric itself rather than read mid-rerun
    # (read the metrics themselves, each waited for: a rerun may fold the expander between two reads of the page)
    # (attached, not visible: a rerun can fold the expander again; the metric's text is the same inside it)
    metrics = page.locator('[data-testid="stMetric"]')
    metrics.filter(has_text=re.compile(r"questions\s*5\s*$")).first.wait_for(state="attached")
    metrics.filter(has_text=re.compile(r"in-domain queries\s*10\s*$")).first.wait_for(state="attached")
    shot(page, "ground-truth-evaluated")
