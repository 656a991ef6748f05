"""A served instance in headless Chromium, used by a hostile visitor: nothing outside the allowed roots.

Starts ``streamlit run app.py`` (see ``browsing.py``) with the tiny corpus as the operator's data (the FAKE encoder)
and no extra roots, plants a secret beside it, and tries every way a visitor has to name a file:
the sidebar's fields, URL parameters on every page, the external run's server path, and an
uploaded file whose name is Markdown. A second instance runs in the read-only presentation mode.
"""

from __future__ import annotations

import json
import re
import urllib.parse

import pytest

from browser_wait import count, main, text_of
from browsing import COLD_TIMEOUT_MS, fake_encoder_env, main_text, shot, start_server, stop_server, wait_idle
from browsing import browser  # noqa: F401 - the shared pytest fixture (one Chromium per module)

pytestmark = [pytest.mark.browser]

SECRET = "TOPSECRET-4711"
REFUSED = "is not one this dashboard serves"
PAGES = ("", "compare", "chunking", "threshold", "inspector", "documents", "external", "export")


def _setup(base, **extra):
    from apptest import ENV, write_tiny_corpus

    root, truth = write_tiny_corpus(base)
    secret = base / "secret"
    secret.mkdir()
    (secret / "passwords.md").write_text(f"# Secret\n\n{SECRET} is the admin password.\n", encoding="utf-8")
    # the FAKE encoder: what a visitor can reach does not depend on the model (its load was most of the servers' CPU)
    env = {**ENV, **fake_encoder_env(), "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth),
           "RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_ROOTS": "", **extra}
    return env, secret


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("served")
    env, secret = _setup(base, RAGDIAG_LOCKED="")
    proc, url = start_server(env, base / "streamlit.log")
    try:
        yield {"url": url, "secret": secret, "base": base}
    finally:
        stop_server(proc)


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1440, "height": 2200})
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    requests: list[str] = []
    p.on("request", lambda r: requests.append(r.url))
    p.requests = requests  # type: ignore[attr-defined]
    try:
        yield p
    finally:
        ctx.close()


def _everything(page) -> str:
    return text_of(page.locator("body"))


def _type(page, label: str, value: str) -> None:
    box = page.get_by_role("textbox", name=label)
    box.fill(value)
    box.press("Enter")
    wait_idle(page)


def test_visitor_cannot_read_outside_the_roots(served, page):
    url, secret = served["url"], served["secret"]
    page.goto(url)
    page.get_by_role("heading", name="Summary").wait_for(timeout=COLD_TIMEOUT_MS)
    wait_idle(page, COLD_TIMEOUT_MS)
    # the sidebar's fields: a secret folder, a system folder, a device
    for path in (str(secret), "/etc", "/dev/zero", str(served["base"])):
        _type(page, "Corpus folder", path)
        page.get_by_text(REFUSED).first.wait_for()
        assert SECRET not in _everything(page) and "passwd" not in _everything(page)
    page.goto(f"{url}/documents")
    wait_idle(page, COLD_TIMEOUT_MS)
    _type(page, "Corpus folder", str(secret))
    page.get_by_text(REFUSED).first.wait_for()
    assert SECRET not in _everything(page)
    shot(page, "served-refused")


def test_url_parameters_never_name_files(served, page):
    url, secret = served["url"], served["secret"]
    params = {"corpus_path": str(secret), "truth_path": "/etc/passwd", "run_path": str(secret / "passwords.md"),
              "corpus": str(secret), "truth": "/etc/passwd", "doc": "../secret/passwords", "path": "/etc/passwd"}
    for name in PAGES:
        page.goto(f"{url}/{name}?{urllib.parse.urlencode(params)}")
        page.locator('[data-testid="stMain"]').wait_for()
        wait_idle(page, COLD_TIMEOUT_MS)
        text = _everything(page)
        assert SECRET not in text and "root:x:0" not in text, name
        assert "Traceback" not in text, name


def test_external_run_path_is_refused_alike_and_never_read(served, page):
    page.goto(f"{served['url']}/external")
    page.get_by_role("textbox", name="…or a run file on the server").wait_for(timeout=COLD_TIMEOUT_MS)
    wait_idle(page)
    answers = set()
    for path in ("/etc/hostname", "/etc/no-such-file", "/dev/zero", str(served["secret"] / "passwords.md")):
        _type(page, "…or a run file on the server", path)
        alert = page.locator('[data-testid="stAlert"]').filter(has_text=REFUSED).first
        alert.wait_for()
        answers.add(text_of(main(page).locator('[data-testid="stAlert"]').filter(has_text=REFUSED)))
        assert SECRET not in _everything(page)
    assert len(answers) == 1 and REFUSED in answers.pop()


def test_uploaded_file_name_is_shown_as_text(served, page, tmp_path):
    page.goto(f"{served['url']}/external")
    page.get_by_role("textbox", name="…or a run file on the server").wait_for(timeout=COLD_TIMEOUT_MS)
    wait_idle(page)
    lines = "\n".join(json.dumps({"query_id": q, "hits": [{"text": "nothing"}]}) for q in ("q1:course", "o1"))
    page.locator('input[type="file"]').set_input_files(
        files=[{"name": "![x](http://tracker.invalid/p.png).jsonl", "mimeType": "application/json",
                "buffer": lines.encode()}])
    page.get_by_text(re.compile(r"^Recall of ext/")).wait_for()
    wait_idle(page)
    assert count(page.locator('img[src*="tracker"]')) == 0
    assert not [r for r in page.requests if "tracker.invalid" in r]  # type: ignore[attr-defined]


def test_locked_mode_shows_no_path_fields(tmp_path_factory, browser):
    base = tmp_path_factory.mktemp("locked")
    env, secret = _setup(base, RAGDIAG_LOCKED="1")
    proc, url = start_server(env, base / "streamlit.log")
    try:
        ctx = browser.new_context(viewport={"width": 1440, "height": 2200})
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{url}/documents?corpus_path={urllib.parse.quote(str(secret))}")
        page.get_by_text("Canonical text").wait_for(timeout=COLD_TIMEOUT_MS)
        wait_idle(page, COLD_TIMEOUT_MS)
        assert count(page.get_by_role("textbox", name="Corpus folder")) == 0
        assert count(page.get_by_role("textbox", name="Ground-truth file")) == 0
        assert SECRET not in _everything(page) and "bike.md" in main_text(page)  # the configured corpus
        page.goto(f"{url}/external")
        page.get_by_text("Run file (.jsonl)").wait_for(timeout=COLD_TIMEOUT_MS)
        wait_idle(page)
        assert count(page.get_by_role("textbox", name="…or a run file on the server")) == 0
        shot(page, "served-locked")
        ctx.close()
    finally:
        stop_server(proc)
