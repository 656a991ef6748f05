"""Sentences of the canonical text and content words, shared by checks and suggestions.

Sentences are found inside paragraphs (blank-line separated) outside code
fences, heading lines and table rows; a leading list marker is not part of a
sentence. A sentence ends at ``.``, ``!`` or ``?`` (optionally followed by a
closing quote or bracket) followed by whitespace and then a capital letter,
digit, quote, bracket or backtick, so ``e.g. the`` does not end one, and
never after a common abbreviation (``e.g.``, ``i.e.``, ``et al.``, ``z.B.``) or
an initial (``F. Pedregosa``). Offsets
index the document's canonical text: ``doc.text[s.start:s.end] == s.text``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..documents.corpus import Corpus, Document

__all__ = ["Sentence", "sentences", "document_sentences", "corpus_sentences", "content_words", "STOPWORDS"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_TABLE = re.compile(r"^\s*\|")
# Anchored by .match (at a line start or at a paragraph's start offset).
_QUOTE = re.compile(r"(?:[ \t]*>)+ ?")
_LIST = re.compile(r"(?:[ \t]*>)*[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")
_END = re.compile(r"[.!?][\"'\)\]\u201d\u2019]*\s+(?=[A-Z0-9\"'`(\[\u201c\u00c0-\u00de])")
_WORD = re.compile(r"\w+", re.UNICODE)
# A period after one of these does not end a sentence ("e.g. `max_features`", "Smith et al. 2001").
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|cf|vs|al|approx|resp|Fig|Eq|Sec|No|z\.B|bzw|d\.h|u\.a|ca|vgl)|\b[A-Z])\.$")

# Function words of English and German: they carry no topic, so they never count as copied.
STOPWORDS = frozenset("""
a an the and or but if then else of to in on at by for with from into onto over under about as is are was were be
been being am do does did doing done have has had having can could may might must shall should will would not no nor
it its it's this that these those there here what which who whom whose when where why how i you he she we they me him
her us them my your our their mine yours than so such too very also just only more most less least much many some any
each every all both few other another own same up down out off again further once s t don doesn isn aren wasn weren
use used using get gets make makes one two e g eg ie i.e etc vs via per
der die das den dem des ein eine einer eines einem einen und oder aber wenn dann sonst von zu im in am an auf bei mit
aus nach ist sind war waren sein wird werden wurde kann können muss müssen soll sollte nicht kein keine es sie er wir
ihr ich du man wie was wer wo warum welche welcher welches dass daß als auch nur noch schon sehr so für über unter
""".split())


@dataclass(frozen=True)
class Sentence:
    """One sentence of a document's canonical text, ``text == doc.text[start:end]``."""

    doc_id: str
    section: str  # section title ("" for the text before the first ## heading)
    start: int
    end: int
    text: str


def _trim(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def _paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Prose paragraphs: runs of lines that are not blank, fenced, headings or table rows."""
    spans: list[tuple[int, int]] = []
    fence: str | None = None
    start: int | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        ls, pos = pos, pos + len(line)
        stripped = line.rstrip("\r\n")
        m = _FENCE.match(stripped)
        q = _QUOTE.match(stripped)
        bare = stripped[q.end():] if q else stripped
        breaks = not bare.strip() or m or fence is not None or _HEADING.match(stripped) or _TABLE.match(stripped)
        if m:
            fence = None if fence is not None and m.group(1)[0] == fence[0] else (fence or m.group(1))
        if breaks or _LIST.match(stripped):  # a list item starts a new paragraph
            if start is not None:
                spans.append((start, ls))
                start = None
            if breaks:
                continue
        if start is None:
            start = ls
    if start is not None:
        spans.append((start, pos))
    return spans


def sentences(doc: Document) -> list[Sentence]:
    """Every prose sentence of ``doc`` in text order."""
    text = doc.text
    out: list[Sentence] = []
    for ps, pe in _paragraph_spans(text):
        for prefix in (_LIST, _QUOTE):
            m = prefix.match(text, ps)
            if m and m.end() < pe:
                ps = m.end()
        pos = ps
        bounds = [m.end() for m in _END.finditer(text, ps, pe)
                  if not _ABBREV.search(text, max(ps, m.start() - 12), m.start() + 1)] + [pe]
        for b in bounds:
            s, e = _trim(text, pos, b)
            pos = b
            if e > s:
                out.append(Sentence(doc.id, doc.section_at(s).title, s, e, text[s:e]))
    return out


def corpus_sentences(corpus: Corpus) -> list[Sentence]:
    """Every sentence of every document, in corpus order (see :func:`sentences`)."""
    return [s for d in corpus.documents for s in document_sentences(d)]


@lru_cache(maxsize=256)
def document_sentences(doc: Document) -> tuple[Sentence, ...]:
    """:func:`sentences`, computed once per document."""
    return tuple(sentences(doc))


def _norm(word: str) -> str:
    # light stemming: plural / third-person s (not "ss", not short words)
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """Lowercased words that carry content: not function words, not single characters, not pure numbers.

    >>> sorted(content_words("What is the default value of C in SVMs?"))
    ['default', 'svm', 'value']
    """
    out = set()
    for w in _WORD.findall(text.lower().replace("_", " ")):
        if len(w) < 2 or w in STOPWORDS or w.isdigit():
            continue
        out.add(_norm(w))
    return out
