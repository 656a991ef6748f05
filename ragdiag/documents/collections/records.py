"""What a loaded collection is: documents, topics with graded judgments (or span needles), out-of-domain queries.

A collection comes from a format people already have (BEIR, TREC, ``ir_datasets``,
SQuAD-style spans; see :func:`ragdiag.documents.collections.open_collection`).
Its *level* says what its judgments name:

- ``document``: judgments name documents with a grade (BEIR, TREC, ``ir_datasets``).
  A chunk is relevant when its document is judged relevant, with that grade; the
  destroyed-needle analysis and the funnel's chunking rung do not apply
  (:data:`DOCUMENT_LEVEL_NOTE` is the one sentence every surface shows).
- ``span``: every question has a needle at exact offsets (SQuAD answers), so it
  is an ordinary :class:`~ragdiag.documents.truth.GroundTruth` and the whole
  chunk analysis works.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ...core.validate import json_objects
from ..corpus import Corpus, Document, make_document
from ..truth import GroundTruth, OodQuery, TAG_MAX, TruthError

__all__ = ["Topic", "Collection", "CollectionError", "LEVELS", "DOCUMENT_LEVEL_NOTE", "NO_OOD_NOTE",
           "collection_document", "read_text", "read_jsonl", "parse_ood", "load_ood"]

LEVELS = ("document", "span")

#: The one sentence every surface shows for document-level gold.
DOCUMENT_LEVEL_NOTE = ("The judgments name whole documents, not passages: a passage counts as relevant when its "
                       "document is judged relevant, so the chunk analysis (destroyed answers, the chunking rung of "
                       "the funnel) is off for this collection.")

#: Said where out-of-domain queries would be needed and the collection has none.
NO_OOD_NOTE = ("This collection has no off-topic questions (BEIR and TREC ship none): the threshold needs some; add "
               "them with --ood FILE (a JSON list of {\"id\", \"kind\": \"near\"|\"far\", \"query\"}).")


class CollectionError(ValueError):
    """A collection that cannot be read; the message says what to fix."""


@dataclass(frozen=True)
class Topic:
    """One query of a document-level collection, with its judgments (document id -> grade; >= 1 relevant)."""

    id: str
    text: str
    judgments: Mapping[str, int]
    tags: tuple[str, ...] = ()

    @property
    def relevant(self) -> tuple[str, ...]:
        """The documents judged relevant (grade >= 1), best grade first, then by id."""
        return tuple(sorted((d for d, g in self.judgments.items() if g >= 1),
                            key=lambda d: (-self.judgments[d], d)))


@dataclass(frozen=True)
class Collection:
    """A loaded collection: its corpus, its judgments at ``level``, its out-of-domain queries.

    ``topics`` (document level) or ``truth`` (span level) holds the questions;
    ``ood`` the out-of-domain queries (part of ``truth`` too at span level);
    ``notes`` what loading dropped or assumed, for the reader.
    """

    name: str
    format: str
    level: str
    corpus: Corpus
    topics: tuple[Topic, ...] = ()
    truth: GroundTruth | None = None
    ood: tuple[OodQuery, ...] = ()
    notes: tuple[str, ...] = ()
    gain: str = field(default="linear")

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {self.level!r}")
        if self.level == "span" and self.truth is None:
            raise ValueError("a span-level collection needs its ground truth (needles at offsets)")
        if self.level == "document" and not self.topics:
            raise ValueError("a document-level collection needs at least one topic with a relevant document")

    @property
    def document_level(self) -> bool:
        """True when the judgments name documents (the chunk analysis is off)."""
        return self.level == "document"

    @property
    def n_questions(self) -> int:
        """Questions with an answer in the corpus (topics, or the truth's questions)."""
        return len(self.topics) if self.document_level else len(self.truth.questions)

    def with_ood(self, extra: tuple[OodQuery, ...]) -> "Collection":
        """This collection with ``extra`` out-of-domain queries added (ids must not clash)."""
        from dataclasses import replace

        taken = {t.id for t in self.topics} | {o.id for o in self.ood}
        if self.truth is not None:
            taken |= {q.id for q in self.truth.questions}
        clash = sorted(o.id for o in extra if o.id in taken)
        if clash:
            raise CollectionError(f"out-of-domain ids already used by the collection: {', '.join(clash[:5])}; "
                                  "rename them in the --ood file")
        ood = self.ood + tuple(extra)
        truth = replace(self.truth, ood=self.truth.ood + tuple(extra)) if self.truth is not None else None
        return replace(self, ood=ood, truth=truth)


_HEADING_UNSAFE = re.compile(r"[\r\n]+")


def collection_document(doc_id: str, text: str, title: str = "") -> tuple[Document, int]:
    """A corpus document from a collection's record, and the offset where ``text`` starts in it.

    The title becomes the document's ``# `` heading (so strategies with a header
    carry it); the text follows after a blank line, unchanged, so a span's
    offset in ``text`` is ``offset + shift`` in the document.

    >>> doc, shift = collection_document("d1", "Paris is the capital.", "France")
    >>> doc.title, doc.text[shift:shift + 5], shift
    ('France', 'Paris', 10)
    """
    title = _HEADING_UNSAFE.sub(" ", title or "").strip()
    if not text.strip() and not title:
        raise CollectionError(f"document {doc_id!r} has neither title nor text")
    head = f"# {title}\n\n" if title else ""
    return make_document(doc_id, head + text, title=title or doc_id), len(head)


def jsonl_documents(rows, id_of, duplicate, notes: list[str]) -> list[Document]:
    """The documents of a JSON Lines collection file: ``id_of(row)`` gives a line's id, ``duplicate(n, id)``
    the error for a missing or repeated one; a record with neither title nor text is skipped with a note."""
    docs, seen = [], set()
    for n, row in enumerate(rows, 1):
        doc_id = id_of(row)
        if not doc_id or doc_id in seen:
            raise CollectionError(duplicate(n, doc_id))
        seen.add(doc_id)
        title, text = str(row.get("title") or ""), str(row.get("text") or "")
        if not (title.strip() or text.strip()):
            notes.append(f"document {doc_id} has no text and was skipped")
            continue
        docs.append(collection_document(doc_id, text, title)[0])
    return docs


def read_text(path: Path, what: str) -> str:
    """A collection file's text (UTF-8, a BOM accepted), within the corpus file limit."""
    from ...core.limits import read_input

    try:
        raw = read_input(path, "max_file_bytes", what=what)
    except ValueError as exc:
        raise CollectionError(f"{what} {str(path)!r}: {exc}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CollectionError(f"{what} {str(path)!r} is not UTF-8 (byte {exc.start}); re-save it as UTF-8") from None


def read_jsonl(path: Path, what: str) -> list[dict]:
    """The objects of a JSON Lines file (blank lines skipped); a bad line is named."""
    lines = read_text(path, what).splitlines()
    return [row for _, row in json_objects(lines, lambda n: f"{what} {path.name} line {n}",
                                           expected="a JSON object on each line", error=CollectionError)]


def tags_of(value, where: str) -> tuple[str, ...]:
    """Tags from a metadata value: a string, or a list of strings (others are an error naming ``where``)."""
    if value is None:
        return ()
    values = [value] if isinstance(value, (str, int, float)) and not isinstance(value, bool) else value
    if not isinstance(values, list) or not all(isinstance(v, (str, int, float)) for v in values):
        raise CollectionError(f"{where}: a tag field must hold a string or a list of strings")
    tags = [str(v).strip() for v in values if str(v).strip()]
    if any(len(t) > TAG_MAX for t in tags):
        raise CollectionError(f"{where}: a tag is over {TAG_MAX} characters")
    return tuple(dict.fromkeys(tags))


def parse_ood(data, source: str) -> tuple[OodQuery, ...]:
    """Out-of-domain queries from a JSON list (or ``{"ood": [...]}``) of ``{"id", "kind", "query", "tags"?}``."""
    from ..truth import _entry_id, _tags, OOD_KINDS

    rows = data.get("ood") if isinstance(data, dict) else data
    if not isinstance(rows, list) or not rows:
        raise CollectionError(f"{source}: write a JSON list of {{\"id\", \"kind\": \"near\"|\"far\", \"query\"}}")
    problems: list[str] = []
    out, seen = [], set()
    for n, raw in enumerate(rows, 1):
        named = _entry_id(raw, "ood", n, "id, kind and query", problems)
        if named is None:
            continue
        oid, where = named
        if oid in seen or ":" in oid:
            problems.append(f"{where}: duplicate id" if oid in seen else f"{where}: ids must not contain ':'")
        seen.add(oid)
        kind, text = raw.get("kind"), raw.get("query")
        if kind not in OOD_KINDS:
            problems.append(f"{where}: kind must be 'near' or 'far', got {kind!r}")
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{where}: query must be a non-empty string")
            continue
        out.append(OodQuery(oid, str(kind), text.strip(), tags=_tags(raw, where, problems)))
    if problems:
        raise CollectionError(str(TruthError(source, problems)))
    return tuple(out)


def load_ood(path: str | Path) -> tuple[OodQuery, ...]:
    """The out-of-domain queries of ``--ood FILE`` (JSON, see :func:`parse_ood`)."""
    path = Path(path)
    text = read_text(path, "out-of-domain file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CollectionError(f"out-of-domain file {path.name}: invalid JSON at line {exc.lineno} ({exc.msg})") from None
    return parse_ood(data, path.name)
