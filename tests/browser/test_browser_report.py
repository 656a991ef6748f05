"""What a reader of the report sees: the HTML report of the bundled corpus in headless Chromium (Playwright).

The evaluation uses the FAKE bag-of-words encoder of ``test_report.py`` (no model weights) over all six
strategies of the bundled corpus with dense, BM25 and hybrid retrieval: 18 configurations, the layout of a
real run. The browser is Debian's ``/usr/bin/chromium``; screenshots and the printed PDF go to
``test-artifacts/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# the browser and its launch settings are the dashboard tests' (skipped there when chromium or playwright is missing)
from browser_wait import one  # a static page: no run to wait for, one element per read
from browsing import ARTIFACTS, ROOT, browser  # noqa: F401 - browser is a fixture
from apptest import plain_words_problems

from ragdiag.core.gate import cut_text

pytestmark = [pytest.mark.browser]

# Text nodes that start above ``px`` (from the top of the page) and show (not inside a collapsed <details>), joined.
TEXT_ABOVE = """(px) => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode;
    if (!n.textContent.trim()) continue;
    const shut = n.parentElement.closest('details');  // a collapsed section shows only its summary
    if (shut && !shut.open && !n.parentElement.closest('summary')) continue;
    const range = document.createRange(); range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (r.height > 0 && r.top + window.scrollY < px && !n.parentElement.closest('svg')) out.push(n.textContent);
  }
  return out.join(' ');
}"""
# Every table (and figure) wider than the element that holds it: [id, scrollWidth, container width].
TOO_WIDE = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('table, figure, svg')) {
    const box = el.parentElement;
    const avail = box.clientWidth;
    const w = Math.max(el.scrollWidth, el.getBoundingClientRect().width);
    if (w > avail + 1 || box.scrollWidth > box.clientWidth + 1) bad.push([el.id || el.tagName, w, avail]);
  }
  return bad;
}"""


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    from fakes import BagOfWords

    from ragdiag.documents.corpus import load_corpus
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.present.report import build_report
    from ragdiag.documents.truth import default_truth_path, load_truth

    corpus = load_corpus(str(ROOT / "data" / "sklearn-user-guide"))
    truth = load_truth(default_truth_path(corpus.root), corpus)
    ev = evaluate(corpus, truth, encoder=BagOfWords(), strategies="A,B,C,D,E,F", retrievers="dense,bm25,hybrid")
    report = build_report(ev, machine={"cpus": 2, "load_average_1min": 6.0})
    out = tmp_path_factory.mktemp("report") / "report.html"
    out.write_text(report.to_html(), encoding="utf-8")
    return out, report


def test_report_reads_in_one_minute_and_prints_clean(browser, report_file):
    path, report = report_file
    ARTIFACTS.mkdir(exist_ok=True)
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    try:
        page.goto(path.as_uri())
        page.screenshot(path=str(ARTIFACTS / "report-first-screen.png"))
        # the first screen: the recommendation in words, percentages with intervals, no stamp, no other k
        first = page.evaluate(TEXT_ABOVE, 900)
        h = report.headline
        assert h.words in first and f"strictness {cut_text(h.cut)}" in first
        for card in h.cards():
            assert card.value in first and card.interval in first
        for goal in h.goals():  # the goal strip: each goal judged beside its number
            assert f"{goal.goal_words}:" in first and goal.status in first and goal.evidence in first
        for stamp in ("sha256", "ragdiag 0.", "pipeline", "platform", "load", "R@20", "R@1 ", "R@8", "MRR"):
            assert stamp not in first, stamp
        # plain words on what a person sees first (config ids stripped: identifiers, not prose)
        assert not plain_words_problems(first), plain_words_problems(first)
        assert page.evaluate("() => document.getElementById('how').open") is False  # the method's words, one click away
        # the story, then the appendix, collapsed, within 1,800 px, with at least 3 charts before it
        top = page.evaluate("() => document.getElementById('appendix').getBoundingClientRect().top + scrollY")
        assert top <= 1800, top
        assert page.evaluate("() => document.getElementById('appendix').open") is False
        charts = page.evaluate("(y) => [...document.querySelectorAll('svg')].filter(s => "
                               "s.getBoundingClientRect().bottom + scrollY <= y).length", top)
        assert charts >= 3
        assert not one(page.locator("#provenance")).is_visible()
        # every table and chart fits its container at 1200 px, the appendix opened
        page.evaluate("() => document.getElementById('appendix').open = true")
        assert page.evaluate(TOO_WIDE) == []
        page.screenshot(path=str(ARTIFACTS / "report-full.png"), full_page=True)
        # in print (A4 less margins, about 700 px): the appendix shows without a click and nothing is cut
        page.evaluate("() => document.getElementById('appendix').open = false")
        page.emulate_media(media="print")
        page.set_viewport_size({"width": 700, "height": 1000})
        assert one(page.locator("#provenance")).is_visible() and one(page.locator("#destroyed-table")).is_visible()
        assert page.evaluate(TOO_WIDE) == []
        pdf = page.pdf(format="A4", margin={"top": "14mm", "bottom": "14mm", "left": "12mm", "right": "12mm"})
        (ARTIFACTS / "report.pdf").write_bytes(pdf)
        assert pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages") >= 3
    finally:
        ctx.close()
