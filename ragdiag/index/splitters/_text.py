"""Sentence units with exact offsets, shared by the sentence-window and semantic splitters."""

from __future__ import annotations

import re

from ...documents.corpus import Document

__all__ = ["sentence_units", "trim"]

_BLANK_LINES = re.compile(r"\n[ \t]*\r?\n\s*")
# A sentence ends at . ! or ? (optionally followed by closing quotes/brackets) and whitespace.
_SENTENCE_END = re.compile(r"[.!?][\"'\)\]\u201d\u2019]*\s+")


def trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``[start, end)`` without surrounding whitespace; None when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def _pieces(text: str, start: int, end: int, pattern: re.Pattern, keep: bool) -> list[tuple[int, int]]:
    out, pos = [], start
    for m in pattern.finditer(text, start, end):
        if (s := trim(text, pos, m.end() if keep else m.start())) is not None:
            out.append(s)
        pos = m.end()
    if (s := trim(text, pos, end)) is not None:
        out.append(s)
    return out


def sentence_units(doc: Document) -> list[list[tuple[int, int]]]:
    """Per ``## `` section, its sentences in order: paragraphs (blank lines) cut at sentence ends.

    A heading line or a list item without a full stop stays with its paragraph's
    next sentence end; nothing crosses a paragraph or a section.

    >>> from ragdiag.documents.corpus import make_document
    >>> d = make_document("d", "# T\\n\\nOne. Two!\\n\\n## S\\n\\nThree.")
    >>> [[d.text[s:e] for s, e in sec] for sec in sentence_units(d)]
    [['# T', 'One.', 'Two!'], ['## S', 'Three.']]
    """
    out = []
    for section in doc.sections:
        units = []
        for ps, pe in _pieces(doc.text, section.start, section.end, _BLANK_LINES, keep=False):
            units.extend(_pieces(doc.text, ps, pe, _SENTENCE_END, keep=True))
        if units:
            out.append(units)
    return out
