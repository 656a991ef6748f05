"""Numbered citations with exact locators, the grounded prompt, and NO ANSWER.

The model writes [1], [2], never a link: the server knows which document and
offsets each number came from and attaches them. The quote is always exactly
the document text at the locator (the chunk's content), never the header or
anything else. When nothing passes the gate there is no prompt at all.

Locators: :class:`CharLocator` (``#char=from,to``, always) and :class:`PageLocator`
(``#page=N``, PDF).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core.gate import Gate, OnGate
from .chunking import Chunk
from ..documents.corpus import Corpus
from ..core.words import cut_as_given

__all__ = [
    "CharLocator",
    "PageLocator",
    "Locator",
    "Citation",
    "Answer",
    "NoAnswer",
    "cite",
    "build_prompt",
]


@dataclass(frozen=True)
class CharLocator:
    """A character range of the canonical text (RFC 5147 style ``#char=from,to``)."""

    start: int
    end: int

    @property
    def fragment(self) -> str:
        """The URL fragment ``#char=start,end`` (RFC 5147) into the canonical text."""
        return f"#char={self.start},{self.end}"


@dataclass(frozen=True)
class PageLocator:
    """A PDF page, 1-based (PDF open parameters ``#page=N``)."""

    page: int

    @property
    def fragment(self) -> str:
        """The URL fragment ``#page=N`` (PDF open parameters)."""
        return f"#page={self.page}"


Locator = CharLocator | PageLocator


@dataclass(frozen=True)
class Citation:
    """One numbered source: where it is (document, locator), the exact quote there, and its distance."""
    index: int
    doc_id: str
    doc_name: str
    label: str  # section
    locators: tuple[Locator, ...]
    quote: str
    distance: float
    chunk_id: str
    path: str = ""

    @property
    def fragment(self) -> str:
        """The most specific locator for a link: the page for PDFs, else the char range."""
        pages = [loc for loc in self.locators if isinstance(loc, PageLocator)]
        return (pages[0] if pages else self.locators[0]).fragment

    @property
    def url(self) -> str:
        """The document's address with the locator's fragment."""
        return f"{self.path or self.doc_id}{self.fragment}"


@dataclass(frozen=True)
class Answer:
    """The prompt that would be sent: the numbered sources and the question."""
    query: str
    citations: tuple[Citation, ...]
    prompt: str
    cut: float


@dataclass(frozen=True)
class NoAnswer(OnGate):
    """Nothing passed the gate: the pipeline never reaches a model."""

    query: str
    gate: Gate

    @property
    def message(self) -> str:
        """What the user sees instead of an answer: the query and the cut nothing passed."""
        return f"NO ANSWER: no source within cosine distance {cut_as_given(self.cut)} of the query {self.query!r}."


PROMPT_RULES = (
    "Answer the question using only the numbered sources below. "
    "Cite every claim with its source number in brackets, like [1]. "
    "If the sources do not contain the answer, say so and stop."
)


def build_prompt(query: str, citations: Sequence[Citation]) -> str:
    """The grounded prompt: rules, then the numbered sources, then the question."""
    sources = "\n\n".join(f"[{c.index}] {c.doc_name} > {c.label}\n{c.quote}" for c in citations)
    return f"{PROMPT_RULES}\n\nSources:\n\n{sources}\n\nQuestion: {query}"


def cite(query: str, kept: Sequence[tuple[Chunk, float]], corpus: Corpus, gate: Gate) -> Answer | NoAnswer:
    """Citations for the chunks ``gate`` keeps of ``kept`` (``[(chunk, distance)]`` in rank order).

    The gate's own rule applies (:meth:`ragdiag.core.gate.Gate.kept`: its top
    ``Gate.window`` (the smaller of ``k`` and ``keep``), then under the cut), whatever the caller passed.
    """
    mask = gate.kept(np.array([d for _, d in kept], dtype=np.float64))[0] if kept else []
    passed = [ck for ck, ok in zip(kept, mask) if ok]
    if not passed:
        return NoAnswer(query, gate)
    citations = []
    for n, (chunk, distance) in enumerate(passed, 1):
        doc = corpus.document(chunk.doc_id)
        quote = doc.text[chunk.start : chunk.end]
        locators: list[Locator] = [CharLocator(chunk.start, chunk.end)]
        page = doc.page_at(chunk.start)
        if page is not None:
            locators.insert(0, PageLocator(page))
        citations.append(
            Citation(
                index=n,
                doc_id=doc.id,
                doc_name=doc.title,
                label=chunk.section or doc.title,
                locators=tuple(locators),
                quote=quote,
                distance=float(distance),
                chunk_id=chunk.id,
                path=doc.path,
            )
        )
    return Answer(query, tuple(citations), build_prompt(query, citations), gate.cut)
