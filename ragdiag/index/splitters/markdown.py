"""Strategy M: Markdown-header splitting, a piece per heading, longer pieces split recursively.

The common recipe (LangChain's ``MarkdownHeaderTextSplitter`` followed by its
``RecursiveCharacterTextSplitter``), with offsets: the document is cut before
every heading line ``#`` to ``######`` outside code fences
(:meth:`ragdiag.documents.corpus.Document.heading_spans`), so a piece is one
heading and the text under it up to the next heading of any level (the heading
line stays in the text: LangChain moves it to metadata, where a citation could
not quote it). A piece longer than the strategy's size is split by
:func:`ragdiag.index.splitters.recursive.split_span` (LangChain's recursive splitter,
64 characters of overlap inside the piece).
"""

from __future__ import annotations

from ...documents.corpus import Document
from ._text import trim
from .recursive import split_span, splitter

__all__ = ["markdown_header_spans"]


def markdown_header_spans(doc: Document, size: int) -> list[tuple[int, int]]:
    """One span per heading-led piece, pieces over ``size`` characters split recursively."""
    text = doc.text
    cuts = sorted({0, *(s for s, _ in doc.heading_spans()), len(text)})
    split = None
    out: list[tuple[int, int]] = []
    for a, b in zip(cuts, cuts[1:]):
        piece = trim(text, a, b)
        if piece is None:
            continue
        if piece[1] - piece[0] <= size:
            out.append(piece)
        else:
            split = split or splitter(size)
            out.extend(split_span(text, piece[0], piece[1], size, split=split))
    return out
