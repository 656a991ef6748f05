"""Six chunking strategies from three switches, with offsets from birth.

============  ==========  ======  =======
strategy      cuts        header  overlap
============  ==========  ======  =======
A             blind       no      no
B             blind       no      yes
C             boundaries  no      no
D             boundaries  no      yes
E             boundaries  yes     no
F             boundaries  yes     yes
============  ==========  ======  =======

*Blind* cuts every ``size`` characters from the start of the document.
*Boundaries* never cuts inside a paragraph: whole paragraphs of a section are
packed up to ``size`` characters; a longer paragraph is split at sentence ends
and its sentences packed; a single sentence longer than ``size`` is cut at the
last whitespace before the limit (or hard at the limit).
Other cutting algorithms plug in with :func:`register_spanner` (a function
``(doc, size) -> [(start, end), ...]``) and new strategies with
:func:`register_strategy`, without editing this module.
The splitters teams use are registered beside them, evaluated only when named
(``--strategies R,M,W,S``; :mod:`ragdiag.index.splitters`, one module each):
R recursive character splitting (LangChain's), M Markdown headers, W sentence
windows, S semantic breakpoints.
*Header* prefixes the embedded text with ``[Doc title > Section]``.
*Overlap* starts each chunk ``overlap`` characters before the end of the
previous chunk of the same document, so the copied tail is part of the span and
the quote is still exactly the text at the locator.

Every chunk satisfies ``doc.text[c.start:c.end] == c.content``; content is
trimmed and its offsets follow the trim. Offsets are found in the document,
never accumulated from lengths.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ..documents.corpus import Corpus, Document
from .splitters import markdown_header_spans, recursive_spans, semantic_spans, sentence_window_spans
from .splitters._text import BLANK_LINES, SENTENCE_END, pack, split_at, trim
from .splitters.sentences import fit

__all__ = [
    "Strategy",
    "STRATEGIES",
    "SPANNERS",
    "DEFAULT_STRATEGIES",
    "register_spanner",
    "register_strategy",
    "Chunk",
    "chunk_document",
    "chunk_corpus",
    "parse_strategies",
    "Span",
    "destroyed_needles",
    "Destroyed",
]


@dataclass(frozen=True)
class Strategy:
    """A chunking configuration: three switches and two sizes."""

    name: str
    boundaries: bool
    header: bool
    overlap: bool
    size: int = 512
    overlap_chars: int = 64
    #: The span algorithm in :data:`SPANNERS`; None means ``"boundaries"`` or ``"blind"`` by the switch.
    cuts: str | None = None
    #: Imported context: ``(doc_id, start, end, prefix)``; a chunk at exactly that span embeds ``prefix`` before
    #: its text (:mod:`ragdiag.index.prefixes`), its quote unchanged. Empty for every built-in strategy.
    prefixes: tuple[tuple[str, int, int, str], ...] = field(default=(), repr=False)
    #: Late chunking (:mod:`ragdiag.index.late`): each chunk's vector pooled from its own wordpieces, read in a
    #: window of its neighbours; its chunks, quotes and citations unchanged. False for every built-in strategy.
    late: bool = False

    def __post_init__(self):
        if self.cuts is not None and self.cuts not in SPANNERS:
            raise ValueError(f"unknown span algorithm {self.cuts!r}; registered: {', '.join(SPANNERS)} "
                             "(add one with ragdiag.index.chunking.register_spanner)")
        if self.size < 16:
            raise ValueError(f"chunk size must be at least 16 characters, got {self.size}")
        if self.overlap and not 0 < self.overlap_chars < self.size:
            raise ValueError(
                f"overlap must be between 1 and size-1 ({self.size - 1}) characters, got {self.overlap_chars}"
            )

    @property
    def spanner(self) -> str:
        """The name of the span algorithm this strategy cuts with."""
        return self.cuts or ("boundaries" if self.boundaries else "blind")

    @property
    def description(self) -> str:
        """The switches in words, e.g. ``boundaries + header``."""
        builtin = {"boundaries": "boundaries", "blind": f"blind {self.size}"}
        parts = [builtin.get(self.spanner, f"{self.spanner} {self.size}")]
        if self.header:
            parts.append("header")
        if self.overlap:
            parts.append(f"overlap {self.overlap_chars}")
        if self.prefixes:
            parts.append(f"imported prefixes ({len(self.prefixes)})")
        if self.late:
            parts.append("late chunking")
        return " + ".join(parts)

    def params(self) -> dict:
        """What determines the chunks (stamped into indexes)."""
        return {
            "name": self.name,
            "boundaries": self.boundaries,
            "header": self.header,
            "overlap": self.overlap,
            "size": self.size,
            "overlap_chars": self.overlap_chars if self.overlap else 0,
            # Only a plugged-in algorithm adds a key, so the built-in strategies' stamps are unchanged.
            **({"cuts": self.cuts} if self.spanner not in ("blind", "boundaries") else {}),
            # Only imported prefixes add these: what is embedded changes with every prefix.
            **({"prefixes": len(self.prefixes), "prefixes_sha256": _prefixes_digest(self.prefixes)}
               if self.prefixes else {}),
            # Only late chunking adds this: the same chunks, other vectors.
            **({"late": True} if self.late else {}),
        }


def _prefixes_digest(prefixes) -> str:
    import hashlib
    import json

    return hashlib.sha256(json.dumps(sorted(prefixes), ensure_ascii=False).encode("utf-8")).hexdigest()


STRATEGIES: dict[str, Strategy] = {
    "A": Strategy("A", boundaries=False, header=False, overlap=False),
    "B": Strategy("B", boundaries=False, header=False, overlap=True),
    "C": Strategy("C", boundaries=True, header=False, overlap=False),
    "D": Strategy("D", boundaries=True, header=False, overlap=True),
    "E": Strategy("E", boundaries=True, header=True, overlap=False),
    "F": Strategy("F", boundaries=True, header=True, overlap=True),
}


#: Strategies evaluated when none are named (a registered strategy joins them with ``default=True``).
DEFAULT_STRATEGIES: list[str] = list(STRATEGIES)


def register_strategy(strategy: Strategy, *, replace: bool = False, default: bool = False) -> Strategy:
    """Make ``strategy`` selectable by name in the CLI, the dashboard and :func:`parse_strategies`.

    Names are upper-case; re-registering a name needs ``replace=True``.
    ``default``: also evaluate it when no strategies are named.
    """
    name = strategy.name.upper()
    if not name or "/" in name or "," in name or "@" in name:
        raise ValueError(f"strategy name {strategy.name!r} must be non-empty and contain no '/', ',' or '@'")
    if name != strategy.name:
        raise ValueError(f"strategy names are upper-case: register {name!r}, not {strategy.name!r}")
    if name in STRATEGIES and not replace and STRATEGIES[name] != strategy:
        raise ValueError(f"strategy {name!r} is already registered; pass replace=True to redefine it")
    STRATEGIES[name] = strategy
    if default and name not in DEFAULT_STRATEGIES:
        DEFAULT_STRATEGIES.append(name)
    return strategy


def parse_strategies(spec: str | Iterable[str] | None) -> list[Strategy]:
    """``"A,C,E"`` -> strategies; None -> the default ones (A-F). Unknown names raise ValueError."""
    if spec is None:
        return [STRATEGIES[n] for n in DEFAULT_STRATEGIES]
    names = [s.strip().upper() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown or not names:
        raise ValueError(f"unknown strategy {', '.join(unknown) or '(none)'}; choose from {','.join(STRATEGIES)}")
    return [STRATEGIES[n] for n in dict.fromkeys(names)]


@dataclass(frozen=True)
class Chunk:
    """A span of a document's canonical text, and what the encoder sees of it.

    ``content`` is exactly ``doc.text[start:end]`` (the quote); ``embed_text``
    is what is embedded (``[header]`` line + content for header strategies).
    """

    id: str
    doc_id: str
    section: str
    header: str
    start: int
    end: int
    content: str = field(repr=False)
    embed_text: str = field(repr=False)

    @property
    def header_prefix_len(self) -> int:
        """Characters of ``embed_text`` before ``content``."""
        return len(self.embed_text) - len(self.content)

    def contains(self, start: int, end: int) -> bool:
        """Does this chunk hold the span ``[start, end)`` of its document whole?"""
        return self.start <= start and end <= self.end


Span = tuple[int, int]


def _paragraphs(text: str, start: int, end: int) -> list[Span]:
    return split_at(text, start, end, BLANK_LINES, keep_match=False)


def _sentences(text: str, start: int, end: int, size: int) -> list[Span]:
    out: list[Span] = []
    for s, e in split_at(text, start, end, SENTENCE_END, keep_match=True):
        out.extend(fit(text, s, e, size) if e - s > size else [(s, e)])
    return out


def _boundary_spans(doc: Document, size: int) -> list[Span]:
    spans: list[Span] = []
    for section in doc.sections:
        units: list[Span] = []
        for s, e in _paragraphs(doc.text, section.start, section.end):
            units.extend(_sentences(doc.text, s, e, size) if e - s > size else [(s, e)])
        spans.extend(pack(units, size))
    return spans


def _blind_spans(doc: Document, size: int) -> list[Span]:
    n = len(doc.text)
    return [s for i in range(0, n, size) if (s := trim(doc.text, i, min(i + size, n))) is not None]


Spanner = Callable[[Document, int], list[Span]]

#: Span algorithms by name: ``(doc, size) -> [(start, end), ...]`` in document order, spans trimmed.
SPANNERS: dict[str, Spanner] = {"boundaries": _boundary_spans, "blind": _blind_spans,
                                 "recursive": recursive_spans, "markdown-headers": markdown_header_spans,
                                 "sentence-windows": sentence_window_spans, "semantic": semantic_spans}


#: The splitters teams use (:mod:`ragdiag.index.splitters`): registered, never evaluated unless named.
for _strategy in (Strategy("R", boundaries=True, header=False, overlap=False, cuts="recursive"),
                  Strategy("M", boundaries=True, header=False, overlap=False, cuts="markdown-headers"),
                  Strategy("W", boundaries=True, header=False, overlap=False, cuts="sentence-windows"),
                  Strategy("S", boundaries=True, header=False, overlap=False, cuts="semantic")):
    STRATEGIES[_strategy.name] = _strategy


def register_spanner(name: str, spanner: Spanner, *, replace: bool = False) -> None:
    """Add a span algorithm; a :class:`Strategy` with ``cuts=name`` then cuts with it.

    The spans must lie inside the document and be in order; :func:`chunk_document`
    checks both, so a faulty algorithm fails loudly instead of producing bad offsets.
    """
    if name in SPANNERS and not replace and SPANNERS[name] is not spanner:
        raise ValueError(f"span algorithm {name!r} is already registered; pass replace=True to redefine it")
    SPANNERS[name] = spanner


def _checked(spans: Sequence[Span], doc: Document, name: str) -> Sequence[Span]:
    prev = -1
    for s, e in spans:
        if not (0 <= s < e <= len(doc.text)) or s < prev:
            raise ValueError(f"span algorithm {name!r} returned ({s}, {e}) for {doc.id!r}: spans must be "
                             f"non-empty, inside the document (0..{len(doc.text)}) and in order")
        prev = s
    return spans


def chunk_document(doc: Document, strategy: Strategy) -> list[Chunk]:
    """Chunk one document with ``strategy``.

    >>> from ragdiag.documents.corpus import make_document
    >>> doc = make_document("d", "# T\\n\\nOne. Two.\\n\\n## S\\n\\nThree.\\n")
    >>> [(c.start, c.end, c.content) for c in chunk_document(doc, STRATEGIES["C"])]
    [(0, 14, '# T\\n\\nOne. Two.'), (16, 28, '## S\\n\\nThree.')]
    >>> chunk_document(doc, STRATEGIES["E"])[1].embed_text
    '[T > S]\\n## S\\n\\nThree.'
    """
    text = doc.text
    name = strategy.spanner
    base = SPANNERS[name](doc, strategy.size)
    if name not in ("blind", "boundaries"):
        base = _checked(base, doc, name)
    chunks: list[Chunk] = []
    prev_end: int | None = None
    imported = {(s, e): p for d, s, e, p in strategy.prefixes if d == doc.id} if strategy.prefixes else {}
    for s, e in base:
        # A chunk belongs to the section of its own (non-copied) start.
        section = doc.section_at(s)
        if strategy.overlap and prev_end is not None:
            # The copied tail is part of the span: the quote stays the text at the locator.
            trimmed = trim(text, max(prev_end - strategy.overlap_chars, 0), e)
            if trimmed is not None and trimmed[0] < s:
                s = trimmed[0]
        prev_end = e
        header = doc.header(section)
        content = text[s:e]
        embed = f"[{header}]\n{content}" if strategy.header else content
        if (s, e) in imported:  # context computed elsewhere: embedded before the chunk, never quoted
            embed = f"{imported[(s, e)]}\n{embed}"
        chunks.append(
            Chunk(
                id=f"{strategy.name}:{doc.id}:{len(chunks):04d}",
                doc_id=doc.id,
                section=section.title,
                header=header,
                start=s,
                end=e,
                content=content,
                embed_text=embed,
            )
        )
    return chunks


def chunk_corpus(corpus: Corpus, strategy: Strategy) -> tuple[Chunk, ...]:
    """All chunks of all documents, in document order."""
    from ..core.validate import require_type

    require_type(corpus, Corpus, "corpus", hint="load it with ragdiag.documents.corpus.load_corpus")
    require_type(strategy, Strategy, "strategy", hint="e.g. ragdiag.index.chunking.STRATEGIES['E']")
    return tuple(c for doc in corpus.documents for c in chunk_document(doc, strategy))


@dataclass(frozen=True)
class Destroyed:
    """A needle no chunk holds whole, and where the cuts fell inside it."""

    question_id: str
    doc_id: str
    start: int
    end: int
    cuts: tuple[int, ...]


def destroyed_needles(chunks: Sequence[Chunk], needles: Iterable[tuple[str, str, int, int]]) -> list[Destroyed]:
    """Needles ``(question_id, doc_id, start, end)`` contained in no chunk.

    ``cuts`` lists the chunk boundaries (starts and ends) that fall strictly
    inside the needle: where the strategy cut the answer.
    """
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    out = []
    for qid, doc_id, s, e in needles:
        doc_chunks = by_doc.get(doc_id, [])
        if any(c.contains(s, e) for c in doc_chunks):
            continue
        cuts = sorted({b for c in doc_chunks for b in (c.start, c.end) if s < b < e})
        out.append(Destroyed(qid, doc_id, s, e, tuple(cuts)))
    return out
