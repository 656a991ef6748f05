"""Strategy R: LangChain's ``RecursiveCharacterTextSplitter``, its chunks mapped to exact offsets.

The splitter is LangChain's own (``langchain-text-splitters``, an optional
dependency pinned in ``requirements-splitters.txt``), with its default settings
except the two sizes:

- separators ``["\\n\\n", "\\n", " ", ""]`` (paragraphs, lines, words, characters:
  LangChain's default), ``keep_separator=True``, ``strip_whitespace=True``,
  ``length_function=len`` (characters), all LangChain's defaults;
- ``chunk_size`` is the strategy's size (512 characters, as A-F) and
  ``chunk_overlap`` :data:`RECURSIVE_OVERLAP` (64, as B, D and F). LangChain's own
  defaults are 4,000 and 200 characters: a 4,000-character chunk is about
  1,000 wordpieces, four times the encoder's 256-wordpiece window, so three
  quarters of it would never be embedded.

Offsets: LangChain's ``add_start_index`` locates each chunk with ``str.find``
from the previous chunk's end less the overlap; every located chunk is checked
(``doc.text[start:end] == chunk``) and one that does not match is found again
from the previous chunk's start, so a citation quotes exactly the text at its
offsets, or the split fails loudly.
"""

from __future__ import annotations

from ...documents.corpus import Document
from ..encoder.resolve import ModelUnavailable

__all__ = ["RECURSIVE_OVERLAP", "SEPARATORS", "SplitterUnavailable", "recursive_spans", "split_span", "splitter"]

#: Characters shared by consecutive chunks (LangChain's default is 200 with 4,000-character chunks).
RECURSIVE_OVERLAP = 64
#: LangChain's default separators, tried in order.
SEPARATORS = ("\n\n", "\n", " ", "")
INSTALL = "pip install -r requirements-splitters.txt (langchain-text-splitters)"


class SplitterUnavailable(ModelUnavailable):
    """A splitter whose optional library is not installed; the message says how to install it.

    (A kind of :class:`~ragdiag.index.encoder.ModelUnavailable`, so the CLI says it in one line and exits 2.)
    """


def splitter(size: int, overlap: int = RECURSIVE_OVERLAP):
    """LangChain's ``RecursiveCharacterTextSplitter`` with the settings of the module notes."""
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter
    except ImportError:
        raise SplitterUnavailable(f"the recursive splitter (strategies R and M) needs LangChain's text splitters: "
                                  f"{INSTALL}") from None
    return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=min(overlap, size - 1),
                                          separators=list(SEPARATORS), add_start_index=True)


def split_span(text: str, start: int, end: int, size: int, *, overlap: int = RECURSIVE_OVERLAP,
               split=None) -> list[tuple[int, int]]:
    """``text[start:end]`` split recursively, as offsets into ``text``.

    >>> text = "ab\\n\\n" + "word " * 30
    >>> spans = split_span(text, 0, len(text), 40, overlap=10)
    >>> all(len(text[s:e]) <= 40 for s, e in spans), spans[0]
    (True, (0, 2))
    """
    split = split or splitter(size, overlap)
    part = text[start:end]
    out: list[tuple[int, int]] = []
    prev = -1
    for d in split.create_documents([part]):
        chunk = d.page_content
        i = d.metadata.get("start_index", -1)
        if i < 0 or part[i:i + len(chunk)] != chunk or i < prev:
            i = part.find(chunk, max(prev, 0))
        if i < 0:
            raise ValueError(f"the recursive splitter returned text that is not in the document at or after "
                             f"offset {start + max(prev, 0)}: {chunk[:60]!r}")
        out.append((start + i, start + i + len(chunk)))
        prev = i
    return out


def recursive_spans(doc: Document, size: int) -> list[tuple[int, int]]:
    """The whole document split by LangChain's recursive splitter (``size`` characters, 64 overlap)."""
    return split_span(doc.text, 0, len(doc.text), size)
