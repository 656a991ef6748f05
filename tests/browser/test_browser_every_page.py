"""Every page of the navigation on three corpora, as a person walks it: Chromium at 1400 × 900.

* On the bundled corpus, ``data/de-haushalt`` (German, five documents, the real encoder) and the BEIR example
  (``make_examples``' ``beir-sklearn``, served as the operator's collection: its navigation is its one page), each
  page opens from the sidebar without an error (no exception box), and its URL carries the context (configuration,
  cut, keep, goal), the same on every page: on the bundled corpus the recommended one, on de-haushalt one the visitor
  set. Every failing page is named at once, not only the first.
* A context the visitor set (a configuration other than the recommended one, a cut, a keep and a goal of their own)
  survives a reload on every page of the navigation: the sidebar reads it back (its fields where the page draws
  them, its line where it does not). The same walk on de-haushalt as the one above: each page is opened from the
  sidebar, checked, then reloaded.
* A cold start (``data/de-haushalt``, an empty store, no click) ends on the recommendation: the sidebar says so and
  never "Your choice" (a provisional pick must not become the visitor's choice). The de-haushalt server's first
  visit, made as the server starts (before any other test of the module can open a page on it), is what is read.

One server per corpus, shared by the module's tests; every wait is an auto-waiting assertion on one element.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from browser_wait import count, one, settle, sidebar, text_of, value_of
from browsing import ARTIFACTS, COLD_TIMEOUT_MS, new_page, open_from_sidebar, serving, viewport_page
from browsing import browser  # noqa: F401 - the shared pytest fixture
from processes import child_pythonpath

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

pytestmark = [pytest.mark.browser, pytest.mark.model]

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
HAUSHALT = ROOT / "data" / "de-haushalt"
LIMIT_MS = 3 * COLD_TIMEOUT_MS
FIELDS = ("config", "cut", "keep", "goal")
#: The navigation's pages (app.py), by their titles.
PAGES = ("Summary", "Overview", "Compare", "History", "Threshold", "Monitor", "Inspector", "Chunking", "Hubs", "Cost",
         "Variants", "Documents", "Ground truth", "Grow the ground truth", "External run", "Export", "Glossary")
#: Their paths (app.py's files), in the same order, for a visit by URL.
PATHS = ("", "overview", "compare", "history", "threshold", "monitor", "inspector", "chunking", "hubs", "cost",
         "variants", "documents", "ground_truth", "truth_review", "external", "export", "glossary")


@pytest.fixture(scope="module")
def bundled(bundled_dashboard):
    """The session's bundled-corpus dashboard (conftest): every page opened is a visitor's session of its own."""
    return bundled_dashboard


@pytest.fixture(scope="module")
def haushalt(tmp_path_factory, browser):  # noqa: F811
    """``data/de-haushalt`` with its ground truth, the real encoder, the default strategies, an empty store: its url
    and what its first visit (a cold start, no click) ended on (:func:`first_visit`)."""
    base = tmp_path_factory.mktemp("every-page-haushalt")
    env = {"RAGDIAG_CORPUS": str(HAUSHALT), "RAGDIAG_TRUTH": str(HAUSHALT.parent / "de-haushalt.truth.json"),
           "RAGDIAG_CACHE": str(base / "cache")}
    with serving(env, base) as url:
        yield {"url": url, "first visit": first_visit(browser, url)}


@pytest.fixture(scope="module")
def beir(tmp_path_factory, corpus, truth):
    """The BEIR example served as the operator's collection (as ``tests/test_browser_collection.py`` serves it): the
    FAKE encoder keeps it to seconds; a page that opens is plumbing, its numbers are checked headless elsewhere."""
    from ragdiag.documents.collections.examples import make_examples

    base = tmp_path_factory.mktemp("every-page-beir")
    make_examples(base, corpus, truth)
    env = {"RAGDIAG_COLLECTION": f"beir:{base}/beir-sklearn", "RAGDIAG_ENCODER": "fakes:fake_encoder",
           "PYTHONPATH": child_pythonpath(),
           "RAGDIAG_CACHE": str(base / "cache"), "RAGDIAG_STRATEGIES": "E", "RAGDIAG_RETRIEVERS": "dense,bm25"}
    with serving(env, base) as url:
        yield url


@pytest.fixture(scope="module")
def page(browser):
    yield from viewport_page(browser, 1400, 900, LIMIT_MS)


def context_of(page) -> dict[str, str | None]:
    q = {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}
    return {k: q.get(k) for k in FIELDS}


def wait_context(page, ctx: dict, timeout_ms: int = LIMIT_MS) -> bool:
    """Until the URL carries ``ctx`` (a page writes it during its run); False if it does not within ``timeout_ms``."""
    try:
        page.wait_for_function("""(ctx) => { const q = new URLSearchParams(location.search);
            return Object.entries(ctx).every(([k, v]) => q.get(k) === v); }""", arg=ctx, timeout=timeout_ms,
                               polling=250)
    except sync_api.TimeoutError:
        return False
    return True


def open_first(page, url: str, title: str = "Summary") -> None:
    """``url``'s first page, once every strategy is in (no progress bar, no "still computing") and the run is over."""
    page.goto(url)
    expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible(timeout=LIMIT_MS)
    expect(page.locator('[data-testid="stProgress"]')).to_have_count(0, timeout=LIMIT_MS)
    expect(page.get_by_text("Strategies still computing")).to_have_count(0, timeout=LIMIT_MS)
    settle(page, LIMIT_MS)


def walk(page, pages: tuple[str, ...], ctx: dict | None) -> dict[str, str]:
    """Open each of ``pages`` from the sidebar's navigation; the pages that show an error (or drop ``ctx`` from the
    URL), each with what went wrong."""
    errors: dict[str, str] = {}
    for title in pages:
        open_from_sidebar(page, title, LIMIT_MS)
        if count(page.locator('[data-testid="stException"]')):
            errors[title] = "an exception box"
            page.screenshot(path=str(ARTIFACTS / f"every-page-error-{title.replace(' ', '-').lower()}.png"))
            continue
        # the run is over: the URL holds what the page wrote (a short grace for the browser to apply it)
        if ctx is not None and not wait_context(page, ctx, 15_000):
            errors[title] = f"the URL's context {context_of(page)} is not {ctx}"
    return errors


def test_every_page_opens_without_an_error_and_keeps_the_context(bundled, page):
    """On the bundled corpus, with the recommended context (de-haushalt's walk is the reload test's, with the
    visitor's)."""
    open_first(page, bundled)
    page.wait_for_function("() => /[?&]cut=\\d/.test(location.search)", timeout=LIMIT_MS, polling=250)
    ctx = context_of(page)
    assert all(ctx.values()), ctx
    errors = walk(page, PAGES, ctx)
    assert not errors, errors
    page.screenshot(path=str(ARTIFACTS / "every-page-bundled-glossary.png"))


def test_every_page_of_a_served_beir_collection_opens_without_an_error(beir, page):
    """The operator's collection is the navigation's one page (Streamlit draws no navigation for one page); every
    other page's path opens it too."""
    for path in ("", *PATHS[1:3]):
        page.goto(f"{beir}/{path}")
        expect(page.get_by_role("heading", name="Collection", exact=True)).to_be_visible(timeout=LIMIT_MS)
        settle(page, LIMIT_MS)
        assert count(page.locator('[data-testid="stException"]')) == 0, path
        assert count(page.locator('[data-testid="stSidebarNav"]')) == 0
    text_of(page.locator('[data-testid="stMain"]'), "ranks the judged documents best on beir:beir-sklearn")


def _sidebar_context(page) -> dict[str, str]:
    """The context as the sidebar shows it: its fields where the page draws them, else its one line."""
    side = sidebar(page)
    cut = side.get_by_role("spinbutton", name=re.compile(r"^Cut, exact"))
    if count(cut):
        keep = side.get_by_role("spinbutton", name="Passages kept at most")
        goal = side.get_by_role("spinbutton", name="Goal: bluffs at most (%)")
        # the box shows its value outside the page's text; the caption below it names the configuration in full
        return {"config": text_of(side), "cut": value_of(cut), "keep": value_of(keep),
                "goal": value_of(goal), "choice": count(side.get_by_text(re.compile(r"^Your choice\."))) == 1}
    line = side.locator('[data-testid="stCaptionContainer"]').filter(has_text=" · strictness (cut) ")
    return {"line": text_of(line) if count(line) == 1 else f"no line: {text_of(side)}"}


def test_a_reload_on_every_page_keeps_the_context_the_visitor_set(haushalt, page):
    """de-haushalt's walk: each page opens from the sidebar without an error and its URL keeps the visitor's
    context; reloaded, the sidebar reads that context back and the URL still holds it."""
    url, recommended = haushalt["url"], haushalt["first visit"]["context"]  # the recommendation, as the first visit
    assert all(recommended.values()), recommended                           # ended on it
    options = ("E/bm25", "A/bm25", "E/dense")
    config = next(c for c in options if c != recommended["config"])
    ctx = {"config": config, "cut": "0.437", "keep": "3", "goal": "12"}
    assert ctx["cut"] != recommended["cut"] and ctx["keep"] != recommended["keep"] != ctx["goal"], recommended
    page.goto(f"{url}/?{urlencode(ctx)}")  # a link's context: the visitor's choice from now on
    expect(page.get_by_role("heading", name="Summary", exact=True)).to_be_visible(timeout=LIMIT_MS)
    assert wait_context(page, ctx), context_of(page)
    errors, lost = {}, {}
    for title in PAGES:
        open_from_sidebar(page, title, LIMIT_MS)
        if count(page.locator('[data-testid="stException"]')):
            errors[title] = "an exception box"
            page.screenshot(path=str(ARTIFACTS / f"every-page-error-{title.replace(' ', '-').lower()}.png"))
        # the run is over: the URL holds what the page wrote (a short grace for the browser to apply it)
        elif not wait_context(page, ctx, 15_000):
            errors[title] = f"the URL's context {context_of(page)} is not {ctx}"
        page.reload()  # a new session: only the URL carries the context
        expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible(timeout=LIMIT_MS)
        settle(page, LIMIT_MS)
        shown = _sidebar_context(page)
        if "line" in shown:
            expected = f"{config} · strictness (cut) {ctx['cut']} · at most {ctx['keep']} passages"
            ok = expected in shown["line"]
        else:
            ok = (f"({config})" in shown["config"] and float(shown["cut"]) == float(ctx["cut"])
                  and int(shown["keep"]) == int(ctx["keep"]) and float(shown["goal"]) == float(ctx["goal"])
                  and shown["choice"])
        if not ok or context_of(page) != ctx:
            lost[title] = (shown, context_of(page))
    page.screenshot(path=str(ARTIFACTS / "every-page-haushalt-glossary.png"))
    assert not errors, errors
    assert not lost, lost


def first_visit(browser, url: str) -> dict:  # noqa: F811
    """What the first visit of ``url`` (no click) ends on, read once every strategy is in and the run is over: how
    often the sidebar holds the recommendation's line (and whether it is in view), a provisional line, "Your choice"
    (the sidebar and the whole page), the sidebar's text and the URL's context."""
    ctx, page = new_page(browser, 1400, 900, LIMIT_MS)
    try:
        page.goto(url)
        expect(page.get_by_role("heading", name="Summary", exact=True)).to_be_visible(timeout=LIMIT_MS)
        expect(page.locator('[data-testid="stProgress"]')).to_have_count(0, timeout=LIMIT_MS)
        settle(page, LIMIT_MS)
        page.screenshot(path=str(ARTIFACTS / "every-page-cold-start.png"))
        side = sidebar(page)
        line = side.get_by_text("The recommendation at its proposed cut.", exact=True)
        return {"recommendation": count(line), "recommendation shown": count(line) == 1 and one(line).is_visible(),
                "provisional": count(side.get_by_text(re.compile(r"^Provisional"))),
                "choice in the sidebar": count(side.get_by_text(re.compile(r"^Your choice"))),
                "choice on the page": count(page.get_by_text("Your choice")),
                "sidebar": text_of(side), "context": context_of(page)}
    finally:
        ctx.close()


def test_after_a_cold_start_with_no_click_the_sidebar_shows_the_recommendation(haushalt):
    seen = haushalt["first visit"]  # de-haushalt's server, an empty store, its first page: no click
    assert seen["recommendation"] == 1 and seen["recommendation shown"] and seen["provisional"] == 0, seen
    assert seen["choice in the sidebar"] == 0, seen
    assert seen["choice on the page"] == 0, seen  # nor the Summary's line about it
    ctx = seen["context"]  # the final recommendation, in the sidebar and in the URL
    assert all(ctx.values()) and f"({ctx['config']})" in seen["sidebar"], seen


#: Every chart's title and subtitle lines against the chart's own box: the lines that do not show whole (past the
#: box's right edge, or cut short with an ellipsis).
TITLES_JS = """() => {
  const out = [];
  for (const chart of document.querySelectorAll('[data-testid="stVegaLiteChart"]')) {
    const box = chart.getBoundingClientRect();
    if (box.width === 0) continue;  // in a folded expander
    const lines = [...chart.querySelectorAll('svg .role-title-text text, svg .role-title-subtitle text')];
    for (const t of lines) {
      const r = t.getBoundingClientRect(), text = t.textContent;
      if (!text.trim()) continue;
      out.push({text: text.slice(0, 80), right: Math.round(r.right - box.right), left: Math.round(r.left - box.left),
                cut: text.endsWith('…'), chart: Math.round(box.width)});
    }
  }
  return out;
}"""


def test_every_chart_title_shows_whole_at_800_px(haushalt, browser):  # noqa: F811
    """At 800 px (the sidebar folded), every title and subtitle line of every chart on every page lies inside its
    chart's box and is not cut short with "…"; each page, opened by its URL in a session of its own, shows no
    exception box."""
    ctx = browser.new_context(viewport={"width": 800, "height": 1400})
    page = ctx.new_page()
    page.set_default_timeout(LIMIT_MS)
    cut_titles, errors, seen = {}, [], 0
    try:
        for path in PATHS:  # the first visit (fixture) has computed every strategy: each page opens on them
            page.goto(f"{haushalt['url']}/{path}")
            expect(page.locator('[data-testid="stMain"] h1').first).to_be_visible(timeout=LIMIT_MS)
            settle(page, LIMIT_MS)
            if count(page.locator('[data-testid="stException"]')):
                errors.append(path or "summary")
            lines = page.evaluate(TITLES_JS)
            seen += len(lines)
            bad = [t for t in lines if t["right"] > 1 or t["left"] < -1 or t["cut"]]
            if bad:
                cut_titles[path or "summary"] = bad
                page.screenshot(path=str(ARTIFACTS / f"title-800-{path or 'summary'}.png"))
    finally:
        ctx.close()
    assert not errors, errors
    assert seen >= 10, seen  # the charts' titles were read (Overview, Threshold, Chunking, Hubs, Cost, ...)
    assert not cut_titles, cut_titles
