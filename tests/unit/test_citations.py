"""Tests for ragdiag.index.citations: exact quotes and locators, the grounded prompt, NO ANSWER."""

from __future__ import annotations

import pytest

from ragdiag.index.chunking import STRATEGIES, chunk_document
from ragdiag.core.gate import Gate
from ragdiag.index.citations import (
    PROMPT_RULES,
    Answer,
    CharLocator,
    Citation,
    NoAnswer,
    PageLocator,
    build_prompt,
    cite,
)
from ragdiag.documents.corpus import Corpus, make_document

TEXT = (
    "# Guide\n\n"
    "Intro line before any section.\n\n"
    "## Install\n\n"
    "Run pip install ragdiag to get started.\n\n"
    "## Use\n\n"
    "Call evaluate on a corpus and a truth file.\n"
)


@pytest.fixture(scope="module")
def corpus():
    doc = make_document("guide", TEXT, path="docs/guide.md")
    # a PDF-like document: pages start at offsets 0, 40 and 80
    pdf_text = "Page one text here, enough to fill it..\n" + "Page two text: the answer lives here...\n" + "Page three.\n"
    pdf = make_document("manual", pdf_text, title="Manual", path="manual.pdf", kind="pdf", page_starts=(0, 40, 80))
    return Corpus(root="mem", documents=(doc, pdf), name="mem")


@pytest.fixture(scope="module")
def chunks_e(corpus):
    """Strategy E: the embedded text carries a [header] line that is not in the document."""
    return chunk_document(corpus.document("guide"), STRATEGIES["E"])


def test_quote_is_exactly_the_document_text_and_never_the_header(corpus, chunks_e):
    kept = [(c, 0.1 * (i + 1)) for i, c in enumerate(chunks_e)]
    ans = cite("how do I install?", kept, corpus, Gate(10, 1.0))
    assert isinstance(ans, Answer)
    assert len(ans.citations) == len(chunks_e) == 3
    doc = corpus.document("guide")
    for c, chunk in zip(ans.citations, chunks_e):
        assert c.quote == doc.text[chunk.start : chunk.end] == chunk.content
        assert chunk.embed_text.startswith("[")  # the header is embedded ...
        assert not c.quote.startswith("[") and f"[{chunk.header}]" not in c.quote  # ... never quoted
        assert c.locators == (CharLocator(chunk.start, chunk.end),)
        assert c.fragment == f"#char={chunk.start},{chunk.end}"
        assert c.url == f"docs/guide.md#char={chunk.start},{chunk.end}"
        assert (c.doc_id, c.doc_name, c.chunk_id, c.path) == ("guide", "Guide", chunk.id, "docs/guide.md")
    assert [c.label for c in ans.citations] == ["Guide", "Install", "Use"]  # the preamble is labelled by the title
    assert [c.index for c in ans.citations] == [1, 2, 3]
    assert [c.distance for c in ans.citations] == pytest.approx([0.1, 0.2, 0.3])


def test_page_locator_for_documents_with_pages(corpus):
    doc = corpus.document("manual")
    start = doc.text.index("the answer")
    end = start + len("the answer lives here")
    from ragdiag.index.chunking import Chunk

    chunk = Chunk("C:manual:0001", "manual", "", "Manual", start, end, doc.text[start:end], doc.text[start:end])
    (c,) = cite("where is the answer?", [(chunk, 0.2)], corpus, Gate(cut=0.5)).citations
    # offset 55 lies on page 2 (pages start at 0, 40, 80)
    assert c.locators == (PageLocator(2), CharLocator(start, end))
    assert c.fragment == "#page=2"
    assert c.url == "manual.pdf#page=2"
    assert c.quote == "the answer lives here"


@pytest.mark.parametrize(
    ("locator", "fragment"),
    [
        (CharLocator(10, 42), "#char=10,42"),
        (PageLocator(7), "#page=7"),
    ],
)
def test_locator_fragments(locator, fragment):
    assert locator.fragment == fragment


def test_citation_fragment_prefers_a_page_whatever_the_order():
    c = Citation(1, "d", "D", "S", (CharLocator(0, 5), PageLocator(3)), "quote", 0.1, "C:d:0000")
    assert c.fragment == "#page=3"
    assert c.url == "d#page=3"  # no path: the document id


def test_no_answer_when_nothing_is_under_the_cut(corpus, chunks_e):
    kept = [(chunks_e[0], 0.5), (chunks_e[1], 0.7)]
    ans = cite("what is the capital of France?", kept, corpus, Gate(cut=0.5))
    assert isinstance(ans, NoAnswer)
    assert not hasattr(ans, "prompt")  # the pipeline never reaches a model
    assert (ans.cut, ans.keep, ans.query) == (0.5, 4, "what is the capital of France?")
    assert ans.message.startswith("NO ANSWER")
    assert "0.5" in ans.message and "capital of France" in ans.message
    assert isinstance(cite("q", [], corpus, Gate(cut=0.9)), NoAnswer)


def test_chunks_at_or_over_the_cut_are_never_cited(corpus, chunks_e):
    # the caller passes everything; 0.4 is exactly the cut -> dropped; 0.9 is over -> dropped
    kept = [(chunks_e[0], 0.4), (chunks_e[1], 0.39), (chunks_e[2], 0.9)]
    ans = cite("install", kept, corpus, Gate(cut=0.4))
    assert [c.chunk_id for c in ans.citations] == [chunks_e[1].id]
    assert ans.citations[0].index == 1  # renumbered from 1
    assert "[2]" not in ans.prompt


def test_keep_limits_the_number_of_citations(corpus, chunks_e):
    kept = [(c, 0.1) for c in chunks_e]
    ans = cite("q", kept, corpus, Gate(2, 0.5))
    assert [c.chunk_id for c in ans.citations] == [chunks_e[0].id, chunks_e[1].id]


def test_prompt_rules_then_numbered_sources_then_question_last(corpus, chunks_e):
    query = "How do I install it?"
    ans = cite(query, [(chunks_e[1], 0.2), (chunks_e[2], 0.3)], corpus, Gate(cut=0.5))
    p = ans.prompt
    assert p == build_prompt(query, ans.citations)
    assert p.startswith(PROMPT_RULES)
    for rule in ("only the numbered sources", "[1]", "say so and stop"):
        assert rule in PROMPT_RULES
    i1 = p.index("[1] Guide > Install\n" + chunks_e[1].content)
    i2 = p.index("[2] Guide > Use\n" + chunks_e[2].content)
    iq = p.index(f"Question: {query}")
    assert len(PROMPT_RULES) < i1 < i2 < iq
    assert p.endswith(f"Question: {query}")
    assert "[Guide > Install]" not in p  # the embedded header line is not a source text
