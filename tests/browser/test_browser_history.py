"""The History page as a person sees it: Chromium at 1400 × 900, 50 runs.

The runs are the hand-written ones of ``test_history_page.make_history``
(drifting, a failed candidate, the ground truth changed at run 30); two
concurrent writers are ``test_history.py``'s concern. The server runs
``ragdiag dashboard`` (the console command, not ``streamlit run``) with the
FAKE encoder for the sidebar's tiny corpus. Checked from the SVG: every run is
a point in each rate panel with its interval rule, no chart is clipped, and a
click on a point lists that run's changed questions.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from browser_wait import main_text, one, wait_healthy
from browsing import ARTIFACTS, COLD_TIMEOUT_MS, browser, free_port, stop_server, wait_idle  # noqa: F401
from processes import child_pythonpath

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from apptest import ENV, write_tiny_corpus

    base = tmp_path_factory.mktemp("browser_history")
    root, truth = write_tiny_corpus(base)
    path = base / "ragdiag-history.sqlite"
    from histories import make_history

    make_history(path, n=50, change_at=30)
    env = {**os.environ, "PYTHONPATH": child_pythonpath()}
    port = free_port()
    env.update({**ENV, "RAGDIAG_ENCODER": "fakes:fake_encoder", "RAGDIAG_CACHE": str(base / "cache"),
                "PYTHONUNBUFFERED": "1"})
    log = open(base / "dashboard.log", "wb")  # noqa: SIM115 - closed by stop_server
    proc = subprocess.Popen([sys.executable, "-m", "ragdiag", "dashboard", "--corpus", str(root), "--truth",
                             str(truth), "--history", str(path), "--port", str(port), "--no-warm"],
                            cwd=base, env=env, stdout=log, stderr=subprocess.STDOUT)
    proc._log = log  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, base / "dashboard.log")
    except RuntimeError:
        stop_server(proc)
        raise
    try:
        yield url
    finally:
        stop_server(proc)


def test_history_page_draws_fifty_runs_with_intervals_and_a_click_lists_changes(server, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        page.goto(f"{server}/history")
        page.get_by_role("heading", name="History").wait_for(timeout=COLD_TIMEOUT_MS)
        page.locator('[data-testid="stVegaLiteChart"] svg').first.wait_for(timeout=COLD_TIMEOUT_MS)
        wait_idle(page, COLD_TIMEOUT_MS)
        text = main_text(page, "Latest run 50")
        assert "Latest run 50" in text
        page.screenshot(path=str(ARTIFACTS / "history-1400x900.png"))
        chart = page.locator('[data-testid="stMain"] [data-testid="stVegaLiteChart"] svg.marks')  # the page's one chart
        box = one(chart).bounding_box()
        main = one(page.locator('[data-testid="stMainBlockContainer"]')).bounding_box()
        assert box["x"] + box["width"] <= main["x"] + main["width"] + 1, (box, main)  # nothing cut off at the right
        # the SVG's ARIA labels: a point per run in each of the four panels, an interval rule per run in three
        labels = page.evaluate("""() => Array.from(document.querySelectorAll(
            '[data-testid="stVegaLiteChart"] svg [aria-roledescription]')).map(
            e => [e.getAttribute('aria-roledescription'), e.getAttribute('aria-label') || ''])""")
        points = [lab for role, lab in labels if role == "point"]
        assert len(points) == 4 * 50, len(points)
        rules = [lab for role, lab in labels if "rule" in role and "high:" in lab]  # the intervals
        assert len(rules) == 3 * 50, (len(rules), sorted({r for r, lab in labels}), [lab for r, lab in labels if "rule" in r][:3])
        assert any("run: 4;" in lab and "fail" in lab for lab in points)  # the failed candidate's marker
        # a click on a point of run 31 lists the questions changed against run 30 (same ground truth)
        target = page.locator('[data-testid="stVegaLiteChart"] svg [aria-roledescription="point"]'
                              '[aria-label*="run: 31;"]').first
        target.click()
        page.get_by_text("Run 31 against run 30").wait_for(timeout=60_000)
        wait_idle(page)
        page.screenshot(path=str(ARTIFACTS / "history-click.png"))
    finally:
        ctx.close()
