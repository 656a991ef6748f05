"""Sentence units with exact offsets, shared by the sentence-window and semantic splitters."""

from __future__ import annotations

import re
from typing import Sequence

from ...documents.corpus import Document

__all__ = ["sentence_units", "trim", "split_at", "pack", "BLANK_LINES", "SENTENCE_END"]

#: Where paragraphs meet: a line holding only whitespace.
BLANK_LINES = re.compile(r"\n[ \t]*\r?\n\s*")
#: A sentence ends at . ! or ? (optionally followed by closing quotes/brackets) and whitespace.
SENTENCE_END = re.compile(r"[.!?][\"'\)\]\u201d\u2019]*\s+")


def trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``[start, end)`` without surrounding whitespace; None when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def split_at(text: str, start: int, end: int, pattern: re.Pattern, *, keep_match: bool) -> list[tuple[int, int]]:
    """``[start, end)`` cut at every match of ``pattern``, each piece trimmed (empty ones dropped).

    ``keep_match``: the match ends the piece before it (a sentence keeps its full stop); else it is dropped.
    """
    out, pos = [], start
    for m in pattern.finditer(text, start, end):
        if (s := trim(text, pos, m.end() if keep_match else m.start())) is not None:
            out.append(s)
        pos = m.end()
    if (s := trim(text, pos, end)) is not None:
        out.append(s)
    return out


def pack(units: Sequence[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """Greedily pack consecutive units while the packed span fits in ``size``."""
    packed: list[tuple[int, int]] = []
    cur_start = cur_end = None
    for s, e in units:
        if cur_start is not None and e - cur_start <= size:
            cur_end = e
            continue
        if cur_start is not None:
            packed.append((cur_start, cur_end))
        cur_start, cur_end = s, e
    if cur_start is not None:
        packed.append((cur_start, cur_end))
    return packed


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
        for ps, pe in split_at(doc.text, section.start, section.end, BLANK_LINES, keep_match=False):
            units.extend(split_at(doc.text, ps, pe, SENTENCE_END, keep_match=True))
        if units:
            out.append(units)
    return out
