"""Strategy W: sentence windows, every sentence with one neighbour either side.

A sentence-window parser (LlamaIndex's ``SentenceWindowNodeParser``) embeds
each sentence and hands its window to the prompt; here the window itself is the
chunk, embedded and quoted: for each sentence of a section (paragraphs cut at
sentence ends, :func:`ragdiag.index.splitters._text.sentence_units`) the span from
the previous sentence's start to the next one's end, within the section
(:data:`WINDOW` = 1 either side). A window longer than the strategy's size
shrinks to the sentence alone; a sentence longer than the size is cut at the
last whitespace before it. One chunk per sentence, so about three times as many
embedded characters as the text: its cost is in the ledger's embedding time.
"""

from __future__ import annotations

from ...documents.corpus import Document
from ._text import sentence_units, trim

__all__ = ["WINDOW", "sentence_window_spans", "fit"]

#: Sentences either side of the centre sentence.
WINDOW = 1


def fit(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """``[start, end)`` cut at the last whitespace before each ``size`` characters (hard at the limit)."""
    out = []
    while end - start > size:
        cut = next((i for i in range(start + size, start + size // 2, -1) if text[i - 1].isspace()), start + size)
        if (s := trim(text, start, cut)) is not None:
            out.append(s)
        start = cut
    if (s := trim(text, start, end)) is not None:
        out.append(s)
    return out


def sentence_window_spans(doc: Document, size: int) -> list[tuple[int, int]]:
    """For every sentence, the window of :data:`WINDOW` sentences either side (see the module notes).

    >>> from ragdiag.documents.corpus import make_document
    >>> d = make_document("d", "One. Two. Three.")
    >>> [d.text[s:e] for s, e in sentence_window_spans(d, 512)]
    ['One. Two.', 'One. Two. Three.', 'Two. Three.']
    """
    out: list[tuple[int, int]] = []
    for units in sentence_units(doc):
        for i, (s, e) in enumerate(units):
            ws, we = units[max(i - WINDOW, 0)][0], units[min(i + WINDOW, len(units) - 1)][1]
            if we - ws <= size:
                out.append((ws, we))
            else:
                out.extend(fit(doc.text, s, e, size))
    # a shrunk window's pieces can start after the next window's start: in document order, each span once
    return sorted(set(out))
