"""Documents, their canonical text and their sections.

The canonical text of a document is what extraction produced (for Markdown and
plain text, the file's text exactly). Every offset in ragdiag (sections,
chunks, needles, citation locators) indexes into it.

Sections start at ``## `` lines that are not inside fenced code blocks. The text
before the first ``## `` line is a section too, named by the document title
alone, so no text is lost.

Walking a corpus folder within its limits (:func:`walk_corpus`, :class:`CorpusError`)
lives in :mod:`ragdiag.documents.walk`; both are importable from here.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .walk import CorpusError, walk_corpus
from .extract import SUPPORTED_SUFFIXES, extract
from .extract.base import DEFAULT_MAX_PAGES, DEFAULT_TIME_LIMIT_S, ExtractOptions, ExtractionError
from ..core.limits import ENV as LIMIT_ENV, LimitError, Limits, read_limited
from ..core.bundle import bundle_root
from ..core.validate import one_by_id

__all__ = [
    "Section",
    "Document",
    "LoadFailure",
    "Corpus",
    "CorpusError",
    "load_corpus",
    "make_document",
    "split_sections",
    "walk_corpus",
    "DEFAULT_CORPUS",
]

#: The bundled corpus: in the checkout's ``data/``, or in the installed wheel's ``ragdiag_bundle`` (:mod:`ragdiag.core.bundle`).
DEFAULT_CORPUS = bundle_root() / "data" / "sklearn-user-guide"

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_H1 = re.compile(r"^# +(.+?)\s*#*\s*$")
_H2 = re.compile(r"^## +(.*?)\s*#*\s*$")
# Markdown line endings only (str.splitlines also breaks at \f, \v, \x85, \u2028...).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
# An optional closing run of #s must follow a space (CommonMark): "# C#" is titled "C#".
_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")


@dataclass(frozen=True)
class Section:
    """A ``## `` section: ``text[start:end]`` includes its heading line.

    ``title`` is empty for the text before the first ``## `` heading.
    ``heading_end`` is the offset just past the heading line (== start when
    there is no heading line).
    """

    title: str
    start: int
    end: int
    heading_end: int


@dataclass(frozen=True)
class Document:
    """One loaded document. ``text`` is canonical: every offset indexes into it."""

    id: str
    title: str
    text: str
    sections: tuple[Section, ...]
    path: str = ""
    kind: str = "markdown"
    extractor: str = "markdown/1"
    page_starts: tuple[int, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        """``warning`` when extraction noticed something odd (see ``warnings``), else ``ok``."""
        return "warning" if self.warnings else "ok"

    @cached_property
    def _section_starts(self) -> list[int]:
        return [s.start for s in self.sections]

    def section_at(self, offset: int) -> Section:
        """The section holding character ``offset``."""
        i = bisect.bisect_right(self._section_starts, offset) - 1
        return self.sections[max(i, 0)]

    def header(self, section: Section) -> str:
        """``Doc title > Section title``, or the doc title alone for the preamble."""
        return f"{self.title} > {section.title}" if section.title else self.title

    def page_at(self, offset: int) -> int | None:
        """1-based page number holding ``offset`` (None for formats without pages)."""
        if not self.page_starts:
            return None
        return max(bisect.bisect_right(self.page_starts, offset), 1)

    def heading_spans(self) -> list[tuple[int, int]]:
        """Spans of heading lines (``#`` to ``######``, outside code fences)."""
        return list(self._heading_spans)

    @cached_property
    def _heading_spans(self) -> tuple[tuple[int, int], ...]:
        return tuple((s, e) for s, e, _ in _heading_lines(self.text, levels=6))

    @property
    def sha256(self) -> str:
        """sha256 of the canonical text (what chunks and citations point into)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LoadFailure:
    """A file that could not be loaded, with the reason shown to the user."""

    path: str
    reason: str


@dataclass(frozen=True)
class Corpus:
    """The documents that were loaded, and the files that were not."""

    root: str
    documents: tuple[Document, ...]
    failures: tuple[LoadFailure, ...] = ()
    name: str = field(default="")

    @cached_property
    def _by_id(self) -> dict[str, Document]:
        return {d.id: d for d in self.documents}

    def document(self, doc_id: str) -> Document:
        """The document with id ``doc_id`` (KeyError naming some known ids otherwise)."""
        return one_by_id(self._by_id, doc_id, "document", f" in corpus {self.root}")

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._by_id

    @property
    def n_chars(self) -> int:
        """Characters of canonical text over all documents."""
        return sum(len(d.text) for d in self.documents)

    @property
    def n_sections(self) -> int:
        """``## `` sections (the untitled preamble of each document is not counted)."""
        return sum(1 for d in self.documents for s in d.sections if s.title)

    @cached_property
    def sha256(self) -> str:
        """Content hash of the corpus: ids and canonical texts, order-independent."""
        h = hashlib.sha256()
        for d in sorted(self.documents, key=lambda d: d.id):
            h.update(d.id.encode("utf-8") + b"\0" + d.sha256.encode() + b"\0")
        return h.hexdigest()


def _heading_lines(text: str, *, levels: int = 2):
    """Yield (start, end_of_line, match) for ``#``..``#*levels`` headings outside fences."""
    pos = 0
    fence: str | None = None
    pattern = re.compile(r"^(#{1,%d}) +(.*?)\s*$" % levels)
    for line in (m.group() for m in _LINE.finditer(text)):
        start, pos = pos, pos + len(line)
        stripped = line.rstrip("\r\n")
        m = _FENCE.match(stripped)
        if m:
            marker = m.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not stripped[m.end():].strip():
                fence = None
            continue
        if fence is not None:
            continue
        hm = pattern.match(stripped)
        if hm:
            yield start, pos, hm


def _heading_title(raw: str) -> str:
    return _CLOSING.sub("", raw).strip()


def split_sections(text: str) -> tuple[Section, ...]:
    """Split canonical text at ``## `` lines outside code fences; lose nothing.

    >>> [(s.title, s.start, s.end) for s in split_sections("# T\\nintro\\n## A\\nx\\n")]
    [('', 0, 10), ('A', 10, 17)]
    """
    cuts: list[tuple[int, int, str]] = []
    for start, line_end, m in _heading_lines(text, levels=2):
        if len(m.group(1)) == 2:
            cuts.append((start, line_end, _heading_title(m.group(2))))
    sections: list[Section] = []
    if not cuts or cuts[0][0] > 0:
        first_end = cuts[0][0] if cuts else len(text)
        sections.append(Section("", 0, first_end, 0))
    for i, (start, line_end, title) in enumerate(cuts):
        end = cuts[i + 1][0] if i + 1 < len(cuts) else len(text)
        sections.append(Section(title, start, end, line_end))
    return tuple(sections)


def _title_of(text: str, default: str) -> str:
    for _, _, m in _heading_lines(text, levels=1):
        title = _heading_title(m.group(2))
        if title:
            return title
    return default


def make_document(doc_id: str, text: str, *, title: str | None = None, **extra) -> Document:
    """Build a :class:`Document` from canonical text (title from the first ``# `` line)."""
    if not text.strip():
        raise ValueError(f"document {doc_id!r} has no text")
    return Document(
        id=doc_id,
        title=title or _title_of(text, doc_id),
        text=text,
        sections=split_sections(text),
        **extra,
    )


def load_corpus(
    root: str | Path | None = None,
    *,
    max_bytes: int | None = None,
    strip_page_furniture: bool = False,
    max_pages: int | None = DEFAULT_MAX_PAGES,
    time_limit_s: float | None = DEFAULT_TIME_LIMIT_S,
    limits: Limits | None = None,
) -> Corpus:
    """Load every supported file under ``root`` (recursively, sorted, hidden files skipped).

    A file that cannot be loaded is recorded in ``Corpus.failures`` with its
    reason; the others load. ``strip_page_furniture`` removes repeated page
    headers/footers (PDF) before the text is used; they are reported in the
    document's ``warnings`` either way. ``max_pages`` and ``time_limit_s``
    guard against one huge or pathological file (it fails; the rest load). ``limits`` bound the folder
    (files, total bytes, depth; default :meth:`Limits.from_env`); ``max_bytes`` (default
    ``limits.max_file_bytes``) bounds one file. Only regular files are read. Raises :class:`CorpusError`
    when the folder is missing, over a limit, or nothing in it could be loaded.
    """
    try:
        limits = limits or Limits.from_env()
    except LimitError as exc:
        raise CorpusError(str(exc)) from None
    max_bytes = limits.max_file_bytes if max_bytes is None else max_bytes
    root = Path(root) if root is not None else DEFAULT_CORPUS
    if not root.exists():
        raise CorpusError(f"corpus folder {str(root)!r} does not exist; pass a folder of documents (.md, .txt, .html, .pdf)")
    if not root.is_dir():
        raise CorpusError(f"corpus path {str(root)!r} is not a folder; pass a folder of documents (.md, .txt, .html, .pdf)")
    options = ExtractOptions(strip_repeated=strip_page_furniture, max_pages=max_pages, time_limit_s=time_limit_s)
    docs: list[Document] = []
    failures: list[LoadFailure] = []
    seen: dict[str, str] = {}
    for entry in walk_corpus(root, limits):
        if entry.reason:
            failures.append(LoadFailure(entry.rel, entry.reason))
            continue
        path, rel = entry.path, Path(entry.rel)
        try:
            if entry.size > max_bytes:
                raise ExtractionError(f"too large ({entry.size:,} bytes; limit {max_bytes:,}; "
                                      f"set {LIMIT_ENV['max_file_bytes']} to raise it)")
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                ex = extract(path, b"")  # raises: unsupported type, with the reason
            else:
                ex = extract(path, read_limited(path, max_bytes, what="file"), options=options)
        except (ExtractionError, LimitError) as exc:
            failures.append(LoadFailure(rel.as_posix(), getattr(exc, "reason", None) or str(exc)))
            continue
        except OSError as exc:
            failures.append(LoadFailure(rel.as_posix(), f"cannot read: {exc.strerror or exc}"))
            continue
        doc_id = rel.with_suffix("").as_posix()
        if doc_id in seen:
            failures.append(LoadFailure(rel.as_posix(), f"duplicate document id {doc_id!r} (also {seen[doc_id]})"))
            continue
        seen[doc_id] = rel.as_posix()
        docs.append(
            make_document(
                doc_id,
                ex.text,
                title=ex.title or None,
                path=rel.as_posix(),
                kind=ex.kind,
                extractor=ex.extractor,
                page_starts=ex.page_starts,
                warnings=ex.warnings,
            )
        )
    if not docs:
        detail = "; ".join(f"{f.path}: {f.reason}" for f in failures[:5]) or "no supported files (.md, .txt, .html, .pdf) found"
        raise CorpusError(f"nothing could be loaded from {str(root)!r} ({detail})", failures)
    name = root.name or root.resolve().name  # `--corpus .` is named after the folder, not ""
    return Corpus(root=str(root), documents=tuple(docs), failures=tuple(failures), name=name)
