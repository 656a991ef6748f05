"""A served instance in headless Chromium: no request leaves the server, no server path reaches the browser,
and two visitors saving the Ground truth page at once both keep their entries.

Uses the server helpers of ``browsing.py`` (Debian's ``/usr/bin/chromium``).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path

import pytest

from browsing import (COLD_TIMEOUT_MS, SETTLE_LIMIT_MS, fake_encoder_env, main_text, new_page, serving, shot, wait_idle,
                      wait_settled)
from browsing import browser  # noqa: F401 - the shared pytest fixture (one Chromium per module)

pytestmark = [pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
TRACKER = "tracker.example"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The tiny corpus, a truth query holding a Markdown image of an outside host; the FAKE encoder (what leaves the
    server and what two visitors save do not depend on the model)."""
    from apptest import ENV, write_tiny_corpus

    base = tmp_path_factory.mktemp("browser-round2")
    root, truth = write_tiny_corpus(base)
    data = json.loads(truth.read_text())
    data["questions"][0]["queries"]["ticket"] = f"![x](http://{TRACKER}/p.png) my green tea tastes bitter"
    truth.write_text(json.dumps(data, indent=2))
    env = {**ENV, **fake_encoder_env(), "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth),
           "RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_ROOTS": "", "RAGDIAG_WARM": "0"}
    with serving(env, base, launcher=["-m", "ui.serve"]) as url:  # as ./run.sh dashboard
        yield url, truth


def _page(browser):  # noqa: F811 - the fixture
    return new_page(browser, 1440, 2200, SETTLE_LIMIT_MS)  # every wait is for a state: generous, ends when reached


def test_no_request_leaves_the_server_and_no_server_path_reaches_the_browser(served, browser):  # noqa: F811
    url, _ = served
    ctx, page = _page(browser)
    hosts: list[str] = []
    frames: list[bytes] = []
    page.on("request", lambda r: hosts.append(urllib.parse.urlsplit(r.url).netloc))
    page.on("websocket", lambda ws: ws.on("framereceived",
                                          lambda f: frames.append(f if isinstance(f, bytes) else f.encode())))
    try:
        page.goto(f"{url}/overview")
        page.get_by_role("heading", name="Overview").wait_for(timeout=SETTLE_LIMIT_MS)
        wait_settled(page)
        page.goto(f"{url}/inspector?q=q1%3Acourse")
        page.get_by_text("my green tea tastes bitter", exact=False).first.wait_for(timeout=SETTLE_LIMIT_MS)
        wait_idle(page)
        assert TRACKER in main_text(page)  # the query's text is shown, as text
        shot(page, "round2-inspector-escaped")
        outside = sorted({h for h in hosts if h and not h.startswith("127.0.0.1")})
        assert not outside, outside
        assert frames and not any(str(ROOT).encode() in f for f in frames)
    finally:
        ctx.close()


def _add_ood(page, url: str, text: str) -> None:
    page.goto(f"{url}/ground_truth")
    page.get_by_role("heading", name="Ground truth").wait_for(timeout=COLD_TIMEOUT_MS)
    wait_idle(page)
    page.get_by_role("tab", name=re.compile(r"^Out-of-domain")).click()
    box = page.get_by_role("textbox", name="Out-of-domain query", exact=True)
    box.fill(text)
    box.press("Control+Enter")  # a text area sends its value on Ctrl+Enter
    wait_idle(page)
    page.get_by_role("button", name="Add out-of-domain query").click()
    page.get_by_text("Added o03", exact=False).wait_for()
    wait_idle(page)


def test_two_visitors_saving_at_once_lose_nothing(served, browser):  # noqa: F811
    url, truth = served
    (ca, alice), (cb, bob) = _page(browser), _page(browser)
    try:
        _add_ood(alice, url, "Which espresso machine has the best steam wand?")
        _add_ood(bob, url, "How do I renew a fishing licence?")
        alice.get_by_role("button", name="Save", exact=True).click()
        alice.get_by_text("Saved tiny.truth.json", exact=False).wait_for()
        bob.get_by_role("button", name="Save", exact=True).click()
        bob.get_by_text("changed on disk", exact=False).wait_for()
        wait_idle(bob)
        bob.get_by_role("button", name="Reload and keep my edits").click()
        bob.get_by_text("yours is now o04", exact=False).wait_for()
        wait_idle(bob)
        bob.get_by_role("button", name="Save", exact=True).click()
        bob.get_by_text("Saved tiny.truth.json", exact=False).wait_for()
        shot(bob, "round2-two-visitors-saved")
        ood = {o["id"]: o["query"] for o in json.loads(truth.read_text())["ood"]}
        assert ood["o03"] == "Which espresso machine has the best steam wand?"
        assert ood["o04"] == "How do I renew a fishing licence?"
    finally:
        ca.close()
        cb.close()
