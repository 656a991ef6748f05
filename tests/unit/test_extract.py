"""Extraction on real files: HTML pages and PDFs made from Debian's documentation.

The fixture folder ``tests/fixtures/kb/`` is committed; ``tests/fixtures/make_kb.py``
rebuilds it (needs Chromium) and ``tests/fixtures/kb.SOURCES.txt`` records where
each file came from.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pypdf
import pytest

from ragdiag.documents.walk import CorpusError
from ragdiag.documents.corpus import load_corpus
from ragdiag.documents.extract.base import ExtractionError, ExtractOptions
from ragdiag.documents.extract import extract, kind_for
from ragdiag.documents.extract._checks import find_furniture, join_pages, short_lines_warning, strip_furniture
from ragdiag.documents.ingest import format_ingest_table, ingest_folder, ingest_rows

KB = Path(__file__).parents[1] / "fixtures" / "kb"
COMPARISON = KB / "pdf" / "comparison.pdf"
TWO_COLUMN = KB / "pdf" / "making-patches-two-column.pdf"
SCANNED_MIXED = KB / "pdf" / "interactive-merging-with-scanned-page.pdf"
BS4_HTML = KB / "html" / "beautiful-soup-documentation.html"
TEXINFO_HTML = KB / "html" / "merging-with-patch.html"

# Chromium's print footer and header on every page of comparison.pdf (the date and time vary by build).
FOOTER_URL = "http://127.0.0.1:8765/diffutils/Comparison.html"
HEADER_RE = re.compile(r"^\d{1,2}/\d{1,2}/\d{2}, \d{1,2}:\d{2} [AP]M Comparison \(Comparing and Merging Files\)$", re.M)

# A sentence printed on page 2 of comparison.pdf (one line there).
PAGE2_SENTENCE = "But if diff notices the common line ‘b’ instead, it produces this output:"

EXPECTED = {
    # path: (status, words the reason must contain)
    "broken/binary.md": ("failed", "binary content"),
    "broken/empty.md": ("failed", "empty file"),
    "broken/empty.pdf": ("failed", "empty file (0 bytes)"),
    "broken/encrypted.pdf": ("failed", "encrypted PDF (password required)"),
    "broken/latin1.txt": ("failed", "not UTF-8"),
    "broken/objects.inv": ("failed", "unsupported type '.inv'"),
    "broken/scanned-only.pdf": ("failed", "PDF has no text layer on any page (scanned? run OCR first)"),
    "broken/truncated.pdf": ("failed", "corrupt PDF (truncated"),
    "html/beautiful-soup-documentation.html": ("warning", "replacement characters (U+FFFD)"),
    "html/merging-with-patch.html": ("ok", ""),
    "notes/bs4-readme.md": ("ok", ""),
    "pdf/comparison.pdf": ("warning", "repeated page headers/footers on 5 of 5 pages"),
    "pdf/interactive-merging-with-scanned-page.pdf": ("warning", "no text layer on 1 of 3 pages (page 3;"),
    "pdf/making-patches-two-column.pdf": ("ok", ""),
    "pdf/owner-password-only.pdf": ("ok", ""),
}


@pytest.fixture(scope="module")
def kb(kb_corpus):
    return kb_corpus


@pytest.fixture(scope="module")
def kb_stripped():
    return load_corpus(KB, strip_page_furniture=True)


def _pypdf_page(path: Path, page_no: int) -> str:
    return pypdf.PdfReader(path).pages[page_no - 1].extract_text()


# --- the folder as a whole --------------------------------------------------------------


def test_fixture_folder_is_small():
    total = sum(p.stat().st_size for p in KB.rglob("*") if p.is_file())
    assert total < 2_000_000
    assert not (KB / "SOURCES.txt").exists()  # provenance lives beside the folder
    assert (KB.parent / "kb.SOURCES.txt").is_file()


def test_fixtures_name_no_path_of_the_build_machine():
    # make_kb.py prints from http://127.0.0.1:8765/, not file:// (footer text and link annotations).
    # Built from parts so this guard itself holds no literal machine path.
    leaks = ("file://", *(f"/{top}/" for top in ("tmp", "root", "home", "work")))
    for path in sorted(p for p in KB.rglob("*") if p.is_file()):
        data = path.read_bytes()
        assert not [s for s in leaks if s.encode() in data], path
        if path.parent.name == "pdf":
            reader = pypdf.PdfReader(path)
            uris = [str(a.get_object()["/A"]["/URI"]) for page in reader.pages for a in page.get("/Annots") or []
                    if "/URI" in a.get_object().get("/A", {})]
            text = "\n".join([page.extract_text() for page in reader.pages] + uris)
            assert not [s for s in leaks if s in text], path


def test_every_file_gets_a_status_and_reason(kb):
    rows = {r["path"]: r for r in ingest_rows(kb)}
    assert set(rows) == set(EXPECTED)
    for path, (status, words) in EXPECTED.items():
        row = rows[path]
        assert row["status"] == status, (path, row)
        assert words in row["reason"], (path, row["reason"])
        if status == "ok":
            assert row["reason"] == ""


def test_good_files_load_while_bad_ones_fail(kb):
    loaded = {d.path for d in kb.documents}
    failed = {f.path for f in kb.failures}
    assert loaded == {p for p, (s, _) in EXPECTED.items() if s != "failed"}
    assert failed == {p for p, (s, _) in EXPECTED.items() if s == "failed"}
    for doc in kb.documents:
        assert doc.text.strip()
        assert doc.status == ("warning" if doc.warnings else "ok")
    kinds = {d.path: d.kind for d in kb.documents}
    assert kinds["pdf/comparison.pdf"] == "pdf"
    assert kinds["html/merging-with-patch.html"] == "html"
    assert kinds["notes/bs4-readme.md"] == "markdown"


def test_extractor_versions_are_stamped(kb, kb_stripped):
    by_path = {d.path: d for d in kb.documents}
    assert by_path["pdf/comparison.pdf"].extractor == f"pdf/1+pypdf-{pypdf.__version__}"
    assert by_path["html/merging-with-patch.html"].extractor.startswith("html/1+bs4-")
    assert by_path["notes/bs4-readme.md"].extractor == "markdown/1"
    stripped = {d.path: d for d in kb_stripped.documents}
    # Stripping changed this text, so its stamp changes; a PDF without furniture keeps its stamp.
    assert stripped["pdf/comparison.pdf"].extractor.endswith("+strip-furniture")
    assert stripped["pdf/making-patches-two-column.pdf"].extractor == by_path["pdf/making-patches-two-column.pdf"].extractor


# --- PDF pages and locators -----------------------------------------------------------


def test_pdf_page_locator_points_at_the_real_page(kb, kb_stripped):
    page2 = _pypdf_page(COMPARISON, 2)
    assert PAGE2_SENTENCE in page2
    assert PAGE2_SENTENCE not in _pypdf_page(COMPARISON, 1)
    for corpus in (kb, kb_stripped):
        doc = corpus.document("pdf/comparison")
        assert len(doc.page_starts) == 5 and doc.page_starts[0] == 0
        offset = doc.text.index(PAGE2_SENTENCE)
        assert doc.page_at(offset) == 2
        assert doc.page_at(offset + len(PAGE2_SENTENCE) - 1) == 2
        assert doc.page_at(0) == 1
        assert doc.page_at(len(doc.text) - 1) == 5


def test_pdf_page_starts_match_each_page_of_pypdf(kb):
    for path in (COMPARISON, TWO_COLUMN, SCANNED_MIXED):
        doc = kb.document(path.relative_to(KB).with_suffix("").as_posix())
        reader = pypdf.PdfReader(path)
        assert len(doc.page_starts) == len(reader.pages)
        bounds = list(doc.page_starts) + [len(doc.text) + 2]
        for i, page in enumerate(reader.pages):
            ours = doc.text[bounds[i]:bounds[i + 1] - 2]
            theirs = page.extract_text().replace("\ufb01", "fi").replace("\ufb00", "ff")
            assert ours.split() == theirs.split(), (path.name, i + 1)
            if ours:
                assert doc.page_at(bounds[i] + len(ours) // 2) == i + 1


def test_page_boundaries_join_with_a_blank_line(kb):
    doc = kb.document("pdf/comparison")
    for start in doc.page_starts[1:]:
        assert doc.text[start - 2:start] == "\n\n"


def test_two_column_pdf_reads_column_by_column(kb):
    doc = kb.document("pdf/making-patches-two-column")
    # The lines of a column follow each other: no interleaving with the other column.
    assert "Use some common sense when making and\nusing patches." in doc.text
    heads = [doc.text.index(h) for h in ("11.1 Tips for Patch Producers", "11.2 Tips for Patch Consumers",
                                          "11.3 Avoiding Common Mistakes", "11.4 Generating Smaller Patches")]
    assert heads == sorted(heads)
    assert doc.page_at(doc.text.index("proper operation when patches do not exactly")) == 3
    assert doc.title == "Making Patches (Comparing and Merging Files)"  # from the PDF metadata


def test_scanned_page_has_no_text_and_is_reported(kb):
    doc = kb.document("pdf/interactive-merging-with-scanned-page")
    assert doc.status == "warning"
    assert doc.warnings == ("no text layer on 1 of 3 pages (page 3; scanned? run OCR first)",)
    assert doc.text[doc.page_starts[2]:] == ""
    assert doc.page_at(doc.text.index("Concatenate the two versions")) == 2


def test_owner_password_only_pdf_opens(kb):
    doc = kb.document("pdf/owner-password-only")
    assert pypdf.PdfReader(KB / "pdf" / "owner-password-only.pdf").is_encrypted
    assert "Computer users often find occasion to ask how two files differ." in doc.text
    assert len(doc.page_starts) == 2


def test_ligatures_are_expanded(kb):
    assert "\ufb00" in _pypdf_page(COMPARISON, 1)  # pypdf gives U+FB00 for the "ff" ligature (diffutils)
    assert not any(ch in kb.document("pdf/comparison").text for ch in "\ufb00\ufb01\ufb02\ufb03\ufb04")


# --- repeated page headers / footers --------------------------------------------------


def test_repeated_headers_and_footers_detected_and_kept(kb):
    doc = kb.document("pdf/comparison")
    assert len(doc.warnings) == 1
    assert doc.warnings[0].startswith("repeated page headers/footers on 5 of 5 pages (e.g. '")
    assert doc.warnings[0].endswith("Comparison (Comparing and Merging Files)'); kept in the text")
    # Chromium's footer: the page's URL (served from 127.0.0.1, see make_kb.py) and "page x/y".
    assert doc.text.count(FOOTER_URL) == 5
    assert all(f"{FOOTER_URL} {n}/5" in doc.text for n in range(1, 6))
    # Chromium's header: the print date and time, then the page title, on every page.
    assert len(HEADER_RE.findall(doc.text)) == 5


def test_repeated_headers_and_footers_removed_on_request(kb, kb_stripped):
    before = kb.document("pdf/comparison")
    doc = kb_stripped.document("pdf/comparison")
    assert doc.status == "warning"
    assert doc.warnings[0].startswith("repeated page headers/footers removed from 5 of 5 pages")
    assert FOOTER_URL not in doc.text
    assert "127.0.0.1" not in doc.text
    assert not HEADER_RE.search(doc.text)
    assert len(doc.text) < len(before.text)
    # The body survives, and every page still starts where its body starts.
    assert PAGE2_SENTENCE in doc.text
    for i, (a, b) in enumerate(zip(before.page_starts, doc.page_starts)):
        first_line = before.text[a:].split("\n", 1)[0]
        assert doc.text[b:].startswith(first_line), i + 1
    for start in doc.page_starts[1:]:
        assert doc.text[start - 2:start] == "\n\n"
    # Documents without furniture are untouched.
    assert kb_stripped.document("pdf/making-patches-two-column").text == kb.document(
        "pdf/making-patches-two-column").text


def test_find_furniture_normalises_page_numbers():
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    pages = [f"ACME Manual, rev 3\n{w} starts page {i}.\nthen more {w} text\nPage {i} of 12"
             for i, w in enumerate(words, start=1)]
    pages[0] = "Title page\nNothing repeated here"
    f = find_furniture(pages)
    assert f and f.pages == 11 and f.text_pages == 12
    assert f.example == "ACME Manual, rev 3"
    out = strip_furniture(pages, f)
    assert out[0] == pages[0]
    assert out[4] == "epsilon starts page 5.\nthen more epsilon text"
    text, starts = join_pages(out)
    assert [text[s:].split("\n", 1)[0] for s in starts[1:3]] == ["beta starts page 2.", "gamma starts page 3."]
    # Lines equal up to digits deeper in the page are body text, not furniture; a page is never emptied.
    same = [f"Head\nRow {i}\nFoot {i}" for i in range(5)]
    assert strip_furniture(same, find_furniture(same)) == [f"Row {i}" for i in range(5)]
    only = ["Head\nFoot"] * 4
    assert strip_furniture(only, find_furniture(only)) == only


def test_find_furniture_needs_most_pages():
    assert find_furniture(["Head\nbody a", "Head\nbody b"]) is None  # too few pages to tell
    pages = ["Head\nx a"] * 2 + [f"Other {c}\nbody {c}" for c in "abcd"]
    assert find_furniture(pages) is None  # 2 of 6 is not "most"
    assert find_furniture(["Same line\nbody one", "Same line\nbody two", "Same line\nbody three"]).pages == 3


def test_short_lines_warning():
    assert short_lines_warning("\n".join(["a", "bc", "long enough line here"] * 10))
    assert short_lines_warning("\n".join(["a normal line of prose text"] * 40)) is None
    assert short_lines_warning("a\nb\n") is None  # too few lines to judge


# --- HTML -----------------------------------------------------------------------------


def test_html_headings_become_sections(kb):
    doc = kb.document("html/beautiful-soup-documentation")
    titles = [s.title for s in doc.sections if s.title]
    # Several <h1> on the page: the page title is "# ", each h1 part a "## " section.
    assert doc.text.startswith("# Beautiful Soup Documentation")
    assert titles[:4] == ["Beautiful Soup Documentation", "Quick Start", "Installing Beautiful Soup", "Making the soup"]
    assert "### Getting help\n" in doc.text
    assert doc.title.startswith("Beautiful Soup Documentation")

    tex = kb.document("html/merging-with-patch")
    assert tex.title == "Merging with patch (Comparing and Merging Files)"
    assert [s.title for s in tex.sections if s.title] == ["10 Merging with `patch`"]
    assert "\n### 10.1 Selecting the `patch` Input Format\n" in tex.text
    assert "\n#### 10.3.1 Applying Patches with Changed White Space\n" in tex.text


def test_html_drops_scripts_styles_and_navigation(kb):
    raw = BS4_HTML.read_text(encoding="utf-8")
    doc = kb.document("html/beautiful-soup-documentation")
    for gone in ("document.getElementById('searchbox')", "Quick search", "Show Source", "Created using",
                 "Navigation", "Table of Contents", "searchbox"):
        assert gone in raw  # really in the file ...
        assert gone not in doc.text, gone  # ... and not in the text
    assert "a.copiable-anchor" not in kb.document("html/merging-with-patch").text  # <style>
    tex = kb.document("html/merging-with-patch").text
    assert 'accesskey="n"' in TEXINFO_HTML.read_text(encoding="utf-8")
    assert "Next: " not in tex and "[Contents]" not in tex  # Texinfo node navigation
    assert "¶" not in doc.text  # Sphinx permalink anchors


def test_html_keeps_tables_and_code(kb):
    doc = kb.document("html/beautiful-soup-documentation")
    assert "| Parser | Typical usage | Advantages | Disadvantages |\n| --- | --- | --- | --- |\n" in doc.text
    assert '| lxml’s HTML parser | `BeautifulSoup(markup, "lxml")` | Very fast Lenient | External C dependency |' in doc.text
    assert "```\nfrom bs4 import BeautifulSoup\nsoup = BeautifulSoup(html_doc, 'html.parser')\n" in doc.text
    # "#" comment lines inside code stay inside the fence: no section starts there.
    assert all(not s.title.startswith("<html>") for s in doc.sections)


def _html(tmp_path: Path, body: str, head: str = "<title>T</title>") -> str:
    p = tmp_path / "page.html"
    p.write_text(f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>", encoding="utf-8")
    return extract(p).text


def test_html_converter_rules(tmp_path):
    text = _html(tmp_path, """
      <header><a href="/">Site</a> <nav><a>Home</a></nav></header>
      <div role="navigation">crumbs</div>
      <aside>related links</aside>
      <main><article>
        <header><h1>Real <em>title</em></h1><p>By the author</p></header>
        <p>First   paragraph<br>second line.</p>
        <h2>Part <code>one</code></h2>
        <p>## not a heading</p>
        <ul><li>apple</li><li>pear<ul><li>nested</li></ul></li></ul>
        <ol start="3"><li>three</li><li>four</li></ol>
        <h3>Deeper</h3>
        <pre class="language-python">def f():
    return "```"</pre>
        <blockquote><p>quoted</p></blockquote>
        <table><tr><th>a</th><th>b|c</th></tr><tr><td>1</td></tr></table>
        <p hidden>secret hidden</p><p style="display: none">also hidden</p>
        <script>alert("js ran")</script><style>p{}</style><noscript>no js</noscript>
        <form><input value="x"><button>Send</button></form>
        <footer>article footer kept</footer>
      </article></main>
      <footer>site footer</footer>
    """)
    assert text.startswith("# Real title\n\nBy the author\n\nFirst paragraph\nsecond line.\n\n## Part `one`\n")
    assert "\n\\## not a heading\n" in text
    assert "- apple\n- pear\n  - nested" in text
    assert "3. three\n4. four" in text
    assert "### Deeper" in text
    assert '````python\ndef f():\n    return "```"\n````' in text
    assert "> quoted" in text
    assert "| a | b\\|c |\n| --- | --- |\n| 1 |  |" in text
    assert "article footer kept" in text
    for gone in ("Site", "Home", "crumbs", "related links", "hidden", "js ran", "p{}", "no js", "Send", "site footer"):
        assert gone not in text, gone


def test_html_heading_levels_and_title(tmp_path):
    assert _html(tmp_path, "<h2>A</h2><p>x</p><h3>B</h3><p>y</p>", head="<title>Page</title>") == (
        "# Page\n\n## A\n\nx\n\n### B\n\ny\n")
    assert _html(tmp_path, "<h1>One</h1><p>x</p><h2>Two</h2><p>y</p>") == "# One\n\nx\n\n## Two\n\ny\n"
    # Several h1: the page title on top, every heading one level down.
    assert _html(tmp_path, "<h1>A</h1><p>x</p><h1>B</h1><h2>C</h2><p>y</p>", head="<title>Site</title>") == (
        "# Site\n\n## A\n\nx\n\n## B\n\n### C\n\ny\n")


def test_html_loads_no_external_entities(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    p = tmp_path / "xxe.html"
    p.write_text(f'<!DOCTYPE html [<!ENTITY xxe SYSTEM "{secret.as_uri()}">]>'
                 '<html><body><p>before &xxe; after</p><img src="x" onerror="alert(1)"></body></html>')
    text = extract(p).text
    assert "TOP-SECRET-CONTENT" not in text
    assert "before" in text and "after" in text


def test_html_without_text_fails(tmp_path):
    p = tmp_path / "nav.html"
    p.write_text("<html><body><nav><a href='/'>Home</a></nav><script>x()</script></body></html>")
    with pytest.raises(ExtractionError, match="no text in the HTML"):
        extract(p)


# --- guards ---------------------------------------------------------------------------


def test_page_limit(tmp_path):
    with pytest.raises(ExtractionError, match=r"too large: 5 pages \(limit 4\)"):
        extract(COMPARISON, options=ExtractOptions(max_pages=4))
    assert extract(COMPARISON, options=ExtractOptions(max_pages=5)).pages == 5
    assert ExtractOptions().max_pages == 2000


def test_time_limit_is_checked_between_pages():
    with pytest.raises(ExtractionError, match=r"too slow: .*time limit of 1e-09 s; stopped at page 1 of 5"):
        extract(COMPARISON, options=ExtractOptions(time_limit_s=1e-9))
    with pytest.raises(ExtractionError, match=r"too slow"):
        extract(BS4_HTML, options=ExtractOptions(time_limit_s=1e-9))
    assert ExtractOptions().time_limit_s == 60


def test_size_limit_per_file(tmp_path):
    (tmp_path / "small.md").write_text("# Small\n\nfits\n")
    (tmp_path / "big.pdf").write_bytes(COMPARISON.read_bytes())
    corpus = load_corpus(tmp_path, max_bytes=10_000)
    assert [(f.path, f.reason.split(" (")[0]) for f in corpus.failures] == [("big.pdf", "too large")]
    assert [d.id for d in corpus.documents] == ["small"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_symlinks_outside_the_folder_are_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nTOP-SECRET-CONTENT\n")
    root = tmp_path / "kb"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nfine\n")
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "leakdir").symlink_to(outside, target_is_directory=True)
    corpus = load_corpus(root)
    assert [d.id for d in corpus.documents] == ["good"]
    assert {f.path: f.reason for f in corpus.failures} == {
        "leak.md": "symlink pointing outside the corpus folder (not followed)",
        "leakdir": "symlink pointing outside the corpus folder (not followed)",
    }
    assert all("TOP-SECRET" not in d.text for d in corpus.documents)


def test_any_pypdf_error_becomes_an_extraction_error(tmp_path, monkeypatch):
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\ntrailer << >>\n%%EOF\n")
    with pytest.raises(ExtractionError, match="^corrupt PDF: "):
        extract(junk)
    notpdf = tmp_path / "fake.pdf"
    notpdf.write_text("just some text, not a PDF")
    with pytest.raises(ExtractionError, match="no %PDF- header"):
        extract(notpdf)

    def boom(*args, **kwargs):
        raise KeyError("/Root")

    monkeypatch.setattr(pypdf, "PdfReader", boom)
    with pytest.raises(ExtractionError, match=r"^corrupt PDF: '/Root'$"):
        extract(COMPARISON)


def test_a_page_that_fails_is_a_warning(monkeypatch):
    real = pypdf.PageObject.extract_text
    calls = {"n": 0}

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise ValueError("bad content stream")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pypdf.PageObject, "extract_text", flaky)
    ex = extract(COMPARISON)
    assert "text extraction failed on page 2 (bad content stream)" in ex.warnings
    assert len(ex.page_starts) == 5


def test_folder_of_only_broken_files(tmp_path):
    rows, corpus = ingest_folder(KB / "broken")
    assert corpus is None
    assert {r["status"] for r in rows} == {"failed"}
    assert len(rows) == 8
    with pytest.raises(CorpusError) as err:
        load_corpus(KB / "broken")
    assert len(err.value.failures) == 8


# --- Markdown / text ------------------------------------------------------------------


def test_replacement_characters_in_text_are_a_warning(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nbroken \ufffd\ufffd here\n", encoding="utf-8")
    doc = load_corpus(tmp_path).document("a")
    assert doc.status == "warning"
    assert doc.warnings == ("2 replacement characters (U+FFFD) in the text: "
                            "some characters were undecodable somewhere upstream",)


# --- ingest report --------------------------------------------------------------------


def test_ingest_rows_and_table(kb):
    rows = ingest_rows(kb)
    assert [r["path"] for r in rows] == sorted(EXPECTED)
    by = {r["path"]: r for r in rows}
    assert by["pdf/comparison.pdf"] | {"reason": ""} == {
        "path": "pdf/comparison.pdf", "id": "pdf/comparison", "type": "pdf", "pages": 5,
        "characters": len(kb.document("pdf/comparison").text), "sections": 0, "status": "warning", "reason": "",
    }
    assert by["broken/encrypted.pdf"] == {
        "path": "broken/encrypted.pdf", "id": "", "type": "pdf", "pages": None, "characters": None,
        "sections": None, "status": "failed", "reason": "encrypted PDF (password required)",
    }
    assert by["html/beautiful-soup-documentation.html"]["sections"] >= 10
    assert by["notes/bs4-readme.md"]["pages"] is None
    assert by["broken/objects.inv"]["type"] == "inv"

    table = format_ingest_table(rows)
    lines = table.splitlines()
    assert lines[0].split() == ["STATUS", "TYPE", "PAGES", "CHARS", "SECTIONS", "PATH", "REASON"]
    assert lines[-1] == "15 files: 4 ok, 3 warning, 8 failed"
    assert len(lines) == len(rows) + 2
    path_col = lines[0].index("PATH")
    assert all(line[path_col:].split()[0] == r["path"] for line, r in zip(lines[1:], rows))


def test_kind_for():
    assert [kind_for(p) for p in ("a.pdf", "b.HTM", "c.md", "d.txt", "e.docx", "Makefile")] == [
        "pdf", "html", "markdown", "text", "docx", "-"]


def test_extract_accepts_bytes_without_reading(tmp_path):
    data = COMPARISON.read_bytes()
    ex = extract(tmp_path / "not-on-disk.pdf", data)
    assert ex.pages == 5 and ex.kind == "pdf"
    reader = pypdf.PdfReader(io.BytesIO(data))
    assert PAGE2_SENTENCE in reader.pages[1].extract_text()
