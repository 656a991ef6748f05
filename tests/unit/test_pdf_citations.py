"""PDF hits cite the page that really holds the quoted text (real PDF fixture, pypdf as the oracle)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from ragdiag.index.chunking import STRATEGIES, chunk_document
from ragdiag.core.gate import Gate
from ragdiag.index.citations import PageLocator, cite

KB = Path(__file__).parents[1] / "fixtures" / "kb"


def _norm(text: str) -> str:
    # pypdf keeps ligatures (U+FB01 "fi"); the extractor's canonical text has them compatibility-normalised.
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


@pytest.fixture(scope="module")
def kb(kb_corpus):
    """The fixture folder (conftest loads it once: extracting its PDFs and HTML takes seconds)."""
    return kb_corpus


@pytest.fixture(scope="module")
def pypdf_pages():
    """The comparison PDF's pages as pypdf extracts them (the oracle), normalised."""
    import pypdf

    return [_norm(p.extract_text() or "") for p in pypdf.PdfReader(KB / "pdf" / "comparison.pdf").pages]


@pytest.mark.parametrize("strategy", ["A", "C", "E"])
def test_pdf_citations_point_at_the_page_holding_the_quote(strategy, kb, pypdf_pages):
    corpus, pages = kb, pypdf_pages
    doc = corpus.document("pdf/comparison")
    assert len(doc.page_starts) > 2
    chunks = chunk_document(doc, STRATEGIES[strategy])
    checked = 0
    for chunk in chunks:
        answer = cite("q", [(chunk, 0.1)], corpus, Gate(cut=0.5))
        citation = answer.citations[0]
        page = next(loc.page for loc in citation.locators if isinstance(loc, PageLocator))
        assert citation.fragment == f"#page={page}"
        assert citation.quote == doc.text[chunk.start:chunk.end]
        # The quote's first words stand on the cited page of the real PDF.
        head = _norm(citation.quote)[:40]
        if doc.page_at(chunk.start) == doc.page_at(chunk.start + len(head)):
            assert head in pages[page - 1], (page, head)
            checked += 1
    assert checked >= len(chunks) // 2


def test_markdown_citations_have_no_page(kb):
    corpus = kb
    doc = next(d for d in corpus.documents if d.kind == "markdown")
    chunk = chunk_document(doc, STRATEGIES["C"])[0]
    citation = cite("q", [(chunk, 0.1)], corpus, Gate(cut=0.5)).citations[0]
    assert citation.fragment == f"#char={chunk.start},{chunk.end}"
    assert not any(isinstance(loc, PageLocator) for loc in citation.locators)
