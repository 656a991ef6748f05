"""Ground truth: questions with verbatim needles, and out-of-domain queries.

File shape (JSON; YAML with the same shape also reads; other keys are ignored)::

    {"questions": [{"id": "q01", "needle": "...",
                    "queries": {"course": "...", "ticket": "..."},
                    "tags": ["multi-hop"]}],
     "ood": [{"id": "o01", "kind": "near", "query": "...", "tags": ["pricing"]}]}

An entry may say where it came from: ``"source": "draft"`` (a question accepted
from a draft), ``"source": "near-miss"`` (a generated off-topic query); it is kept
(:attr:`Question.source`, :attr:`OodQuery.source`) so results can be sliced by it.

A retrieval is correct when a returned chunk holds the needle whole. Loading
validates every rule and reports every broken one at once, naming the question
and the rule.

Optional keys:

- ``tags``: a list of short strings on a question or an out-of-domain query
  (``multi-hop``, ``billing``, a source dataset's category). Slices of the
  results are cut by them (``ragdiag slices --by tag``); they change no result
  and no file's hash (:func:`truth_sha256` leaves them out).
- ``start`` (with ``doc``): where the needle is, for spans taken from a span
  dataset (SQuAD's ``answer_start``): the needle must be exactly
  ``text[start:start + len(needle)]`` of document ``doc``. (``doc`` alone is a
  note for the reader and is ignored, as before.) A located needle may
  be short (one character up to the usual maximum) and may occur elsewhere too:
  the offset says which occurrence answers, so neither the length rule's minimum
  nor the exactly-once rule applies.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterator

from .corpus import Corpus, Document
from ..core.limits import Limits, read_input
from ..core.validate import one_by_id

__all__ = [
    "Question",
    "Query",
    "OodQuery",
    "GroundTruth",
    "TruthError",
    "load_truth",
    "decode_truth",
    "parse_truth",
    "default_truth_path",
    "truth_sha256",
    "NEEDLE_MIN",
    "NEEDLE_MAX",
    "needle_length",
    "TAG_MAX",
]

NEEDLE_MIN, NEEDLE_MAX = 40, 250
OOD_KINDS = ("near", "far")
TAG_MAX = 64  # characters of one tag
WIDE_WEIGHT = 3  # a wide (CJK) character carries about as much as three Latin letters


def needle_length(text: str) -> int:
    """The length the needle rule measures: characters, a wide (CJK, fullwidth) character counting 3.

    Scripts written without spaces pack a sentence into far fewer characters:
    a 14-character Chinese sentence is as long a needle as a 42-character English one.

    >>> needle_length("abc"), needle_length("机器学习"), needle_length("Größe")
    (3, 12, 5)
    """
    return sum(WIDE_WEIGHT if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
_PHRASING = re.compile(r"^[a-z][a-z0-9_-]*$")


class TruthError(ValueError):
    """A ground-truth file that breaks the rules; ``problems`` lists each one."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"ground truth {source} has {len(problems)} problem(s):\n{lines}")


@dataclass(frozen=True)
class Question:
    """A question answered by its needle, located at ``doc_id[start:end]``."""

    id: str
    needle: str
    queries: tuple[tuple[str, str], ...]  # (phrasing, text)
    doc_id: str
    start: int
    end: int
    section: str
    source: str = ""  # where the question came from ("draft": accepted from a draft); "" when not said
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Query:
    """One query to run: an in-domain phrasing (``q01:course``) or an ood query."""

    id: str
    text: str
    phrasing: str  # course | ticket | ... | ood
    question_id: str | None = None
    kind: str | None = None  # near | far for ood queries
    tags: tuple[str, ...] = ()  # its question's tags (or the ood query's)

    @property
    def in_domain(self) -> bool:
        """Whether the query belongs to a question (False for out-of-domain queries)."""
        return self.question_id is not None


@dataclass(frozen=True)
class OodQuery:
    """An out-of-domain query as written in the file: no answer in the corpus, ``kind`` near or far."""

    id: str
    kind: str
    query: str
    source: str = ""  # where it came from ("near-miss": generated, then kept); "" when not said
    tags: tuple[str, ...] = ()


_SOURCE = re.compile(r"^[a-z][a-z0-9_-]*$")


def _source(raw: dict, where: str, problems: list[str]) -> str:
    """The optional ``source`` of an entry (``draft``, ``near-miss``, ...): a lowercase word, or ""."""
    value = raw.get("source", "")
    if value == "" or value is None:
        return ""
    if not isinstance(value, str) or not _SOURCE.match(value):
        problems.append(f"{where}: 'source' must be a lowercase word such as 'draft', got {value!r}")
        return ""
    return value


@dataclass(frozen=True)
class GroundTruth:
    """A validated ground truth: its questions and out-of-domain queries, and the file it came from."""

    questions: tuple[Question, ...]
    ood: tuple[OodQuery, ...]
    source: str = ""

    @property
    def queries(self) -> tuple[Query, ...]:
        """In-domain queries (question order, phrasing order), then ood queries."""
        return tuple(self._iter_queries())

    def _iter_queries(self) -> Iterator[Query]:
        for q in self.questions:
            for phrasing, text in q.queries:
                yield Query(f"{q.id}:{phrasing}", text, phrasing, question_id=q.id, tags=q.tags)
        for o in self.ood:
            yield Query(o.id, o.query, "ood", kind=o.kind, tags=o.tags)

    @property
    def phrasings(self) -> tuple[str, ...]:
        """The phrasing names used, first seen first (``course``, ``ticket``, ...)."""
        return tuple(dict.fromkeys(p for q in self.questions for p, _ in q.queries))

    @cached_property
    def _by_id(self) -> dict[str, Question]:
        return {q.id: q for q in self.questions}

    def question(self, question_id: str) -> Question:
        """The question with id ``question_id`` (KeyError naming some known ids otherwise)."""
        return one_by_id(self._by_id, question_id, "question")

    def needles(self) -> list[tuple[str, str, int, int]]:
        """``(question_id, doc_id, start, end)`` for every question."""
        return [(q.id, q.doc_id, q.start, q.end) for q in self.questions]


def default_truth_path(corpus_root: str | Path) -> Path:
    """Where a corpus's ground truth lives by convention: ``<folder>.truth.json`` beside it."""
    root = Path(corpus_root)
    if not root.name:  # "." or "..": name the folder itself, not ".truth.json"
        root = root.resolve()
    for suffix in (".truth.json", ".truth.yaml", ".truth.yml"):
        candidate = root.parent / f"{root.name}{suffix}"
        if candidate.exists():
            return candidate
    return root.parent / f"{root.name}.truth.json"


def _occurrences(doc: Document, needle: str) -> list[int]:
    out, i = [], doc.text.find(needle)
    while i != -1:
        out.append(i)
        i = doc.text.find(needle, i + 1)
    return out


def _heading_problem(doc: Document, start: int, end: int, needle: str) -> str | None:
    for hs, he in doc.heading_spans():
        if start < he and hs < end:
            line = doc.text[hs:he].strip()
            if needle.strip() == line.lstrip("#").strip():
                return f"is the text of the heading {line!r}"
            return f"overlaps the heading line {line!r}"
    return None


def _entry_id(raw: object, label: str, n: int, fields: str, problems: list[str]) -> tuple[str, str] | None:
    """The id of entry ``n`` of a list and how messages name it (``question q01``); None after noting why not."""
    where = f"{label} #{n}"
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be an object with {fields}")
        return None
    entry_id = raw.get("id")
    if not isinstance(entry_id, str) or not entry_id.strip():
        problems.append(f"{where}: 'id' must be a non-empty string")
        return None
    return entry_id, f"{label} {entry_id}"


def _tags(raw: dict, where: str, problems: list[str]) -> tuple[str, ...]:
    """The entry's ``tags`` (absent: none), each a non-empty string of at most :data:`TAG_MAX` characters."""
    tags = raw.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
        problems.append(f"{where}: 'tags' must be a list of non-empty strings, like [\"multi-hop\"]")
        return ()
    long = [t for t in tags if len(t.strip()) > TAG_MAX]
    if long:
        problems.append(f"{where}: tag {long[0][:20]!r}... is over {TAG_MAX} characters; use a short name")
        return ()
    return tuple(dict.fromkeys(t.strip() for t in tags))


def _located(raw: dict, corpus: Corpus, needle: str, where: str, problems: list[str]):
    """``(doc, start)`` of a needle placed by ``doc`` and ``start``; None after noting why not."""
    doc_id, start = raw.get("doc"), raw.get("start")
    if not isinstance(doc_id, str) or doc_id not in corpus:
        problems.append(f"{where}: 'doc' must name a document of the corpus, got {doc_id!r}")
        return None
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        problems.append(f"{where}: 'start' must be a character offset (an integer >= 0), got {start!r}")
        return None
    doc = corpus.document(doc_id)
    if doc.text[start:start + len(needle)] != needle:
        problems.append(f"{where}: the needle is not at {doc_id} @{start} (the text there is "
                        f"{doc.text[start:start + min(len(needle), 60)]!r}); fix 'start', or drop 'doc' and "
                        "'start' to find it by its text")
        return None
    return doc, start


def parse_truth(data: dict, corpus: Corpus, *, source: str = "<data>") -> GroundTruth:
    """Validate a parsed ground-truth mapping against ``corpus``."""
    from ..core.validate import require_type

    require_type(corpus, Corpus, "corpus", hint="load it with ragdiag.documents.corpus.load_corpus")
    problems: list[str] = []
    if not isinstance(data, dict):
        raise TruthError(source, ["top level must be an object with 'questions' and 'ood' lists"])
    if data.get("level") == "document":
        raise TruthError(source, ["it judges whole documents (\"level\": \"document\"), not needles: evaluate it "
                                  "with --collection ragdiag:<documents folder>"])
    raw_questions = data.get("questions")
    raw_ood = data.get("ood", [])
    if not isinstance(raw_questions, list) or not raw_questions:
        raise TruthError(source, ["'questions' must be a non-empty list"])
    if not isinstance(raw_ood, list):
        raise TruthError(source, ["'ood' must be a list (it may be empty)"])

    seen_ids: set[str] = set()
    questions: list[Question] = []
    for n, raw in enumerate(raw_questions, 1):
        named = _entry_id(raw, "question", n, "id, needle and queries", problems)
        if named is None:
            continue
        qid, where = named
        if qid in seen_ids:
            problems.append(f"{where}: duplicate id")
        seen_ids.add(qid)
        needle = raw.get("needle")
        queries = raw.get("queries")
        tags = _tags(raw, where, problems)
        placed = "start" in raw  # a "doc" alone is a note for the reader (older files carry one); "start" places
        ok = True
        if not isinstance(needle, str):
            problems.append(f"{where}: 'needle' must be a string")
            ok = False
        elif placed and not 1 <= needle_length(needle) <= NEEDLE_MAX:
            problems.append(f"{where}: needle is {needle_length(needle)} characters; a located needle must be 1 to "
                            f"{NEEDLE_MAX}")
            ok = False
        elif not placed and not NEEDLE_MIN <= needle_length(needle) <= NEEDLE_MAX:
            wide = " (a CJK character counts 3)" if needle_length(needle) != len(needle) else ""
            problems.append(
                f"{where}: needle is {needle_length(needle)} characters{wide}; it must be {NEEDLE_MIN} to "
                f"{NEEDLE_MAX} (a short verbatim sentence that answers the question)"
            )
            ok = False
        if not isinstance(queries, dict) or not queries:
            problems.append(f"{where}: 'queries' must be an object like {{\"course\": \"...\", \"ticket\": \"...\"}}")
            ok = False
        else:
            for phrasing, text in queries.items():
                if not _PHRASING.match(str(phrasing)) or phrasing == "ood":
                    problems.append(f"{where}: phrasing name {phrasing!r} must be lowercase letters (not 'ood')")
                    ok = False
                if not isinstance(text, str):
                    problems.append(f"{where}: query {phrasing!r} must be a string, got {type(text).__name__}")
                    ok = False
                elif not text.strip():
                    problems.append(f"{where}: query {phrasing!r} is empty")
                    ok = False
        if not isinstance(needle, str):
            continue
        if placed:
            hits = [_located(raw, corpus, needle, where, problems)]
            if hits[0] is None:
                continue
        else:
            hits = [(d, i) for d in corpus.documents for i in _occurrences(d, needle)]
        if not hits:
            problems.append(f"{where}: needle not found verbatim in the corpus: {needle[:80]!r}")
            continue
        if len(hits) > 1:
            spots = ", ".join(f"{d.id} @{i} ({d.section_at(i).title or d.title})" for d, i in hits[:10])
            problems.append(f"{where}: needle occurs {len(hits)} times, it must occur exactly once: {spots}")
            continue
        origin = _source(raw, where, problems)
        doc, start = hits[0]
        end = start + len(needle)
        heading = _heading_problem(doc, start, end, needle)
        if heading:
            problems.append(f"{where}: needle {heading}; a needle must not be a heading")
            continue
        if ok:
            questions.append(
                Question(
                    id=qid,
                    needle=needle,
                    queries=tuple((str(p), t.strip()) for p, t in queries.items()),
                    doc_id=doc.id,
                    start=start,
                    end=end,
                    section=doc.section_at(start).title or doc.title,
                    source=origin,
                    tags=tags,
                )
            )

    ood: list[OodQuery] = []
    for n, raw in enumerate(raw_ood, 1):
        named = _entry_id(raw, "ood", n, "id, kind and query", problems)
        if named is None:
            continue
        (oid, where), kind, text = named, raw.get("kind"), raw.get("query")
        tags = _tags(raw, where, problems)
        if oid in seen_ids or ":" in oid:
            problems.append(f"{where}: duplicate id" if oid in seen_ids else f"{where}: ids must not contain ':'")
        seen_ids.add(oid)
        if kind not in OOD_KINDS:
            problems.append(f"{where}: kind must be 'near' or 'far', got {kind!r}")
        if not isinstance(text, str):
            problems.append(f"{where}: query must be a string, got {type(text).__name__}")
            continue
        if not text.strip():
            problems.append(f"{where}: query is empty")
            continue
        ood.append(OodQuery(oid, str(kind), text.strip(), _source(raw, where, problems), tags))

    if problems:
        raise TruthError(source, problems)
    return GroundTruth(tuple(questions), tuple(ood), source)


class DuplicateKeyError(ValueError):
    """A key written twice in one object or mapping of a ground-truth file."""


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"duplicate key {key!r} in one object (the later value would silently win)")
        out[key] = value
    return out


def _yaml_load(text: str):
    import yaml

    from ..core.safe_yaml import limited_loader

    class Loader(limited_loader(yaml.SafeLoader)):  # no recursive alias, no alias bomb (YamlLimitError)
        pass

    def mapping(loader, node, deep=False):
        loader.flatten_mapping(node)
        keys = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            try:
                seen = key in keys
            except TypeError:
                raise DuplicateKeyError(f"line {key_node.start_mark.line + 1}: a key must be text") from None
            if seen:
                raise DuplicateKeyError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r} in one mapping "
                                        "(the later value would silently win)")
            keys.add(key)
        return loader.construct_mapping(node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass


def decode_truth(raw: bytes, path: str | Path):
    """The data of a ground-truth file's bytes (JSON, or YAML by ``path``'s suffix), not yet validated.

    UTF-8 with or without a byte-order mark; a key written twice in one object is an error (never "the last
    one wins"). Raises :class:`TruthError` with one problem naming the format that failed.
    """
    path = Path(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TruthError(str(path), [f"cannot read it as UTF-8 text (invalid byte at position {exc.start}); re-save it as UTF-8"]) from None
    is_yaml = path.suffix.lower() in (".yaml", ".yml")
    try:
        if is_yaml:
            try:
                import yaml  # noqa: F401
            except ImportError:
                raise TruthError(str(path), ["reading YAML needs PyYAML: pip install pyyaml"]) from None
            data = _yaml_load(text)
        else:
            data = json.loads(text, object_pairs_hook=_no_duplicates)
    except TruthError:
        raise
    except DuplicateKeyError as exc:
        raise TruthError(str(path), [str(exc)]) from None
    except json.JSONDecodeError as exc:
        raise TruthError(str(path), [f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]) from None
    except RecursionError:
        raise TruthError(str(path), ["nested too deeply to read (thousands of levels of brackets)"]) from None
    except ValueError as exc:  # e.g. a number with too many digits
        raise TruthError(str(path), [f"invalid {'YAML' if is_yaml else 'JSON'}: {exc}"]) from None
    except Exception as exc:  # yaml.YAMLError and friends
        if not is_yaml:
            raise
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise TruthError(str(path), [f"invalid YAML{where}: {problem}"]) from None
    return data


def load_truth(path: str | Path, corpus: Corpus, *, limits: Limits | None = None) -> GroundTruth:
    """Read and validate a ground-truth file (``.json``, or ``.yaml``/``.yml``; UTF-8, a BOM is accepted).

    Only a regular file of at most ``limits.max_truth_bytes`` is read; duplicate keys are errors.
    """
    path = Path(path)
    try:
        raw = read_input(path, "max_truth_bytes", what="ground-truth file", limits=limits,
                         hint="pass --truth with a ground-truth JSON file")
    except ValueError as exc:
        raise TruthError(str(path), [str(exc)]) from None
    data = decode_truth(raw, path)
    return parse_truth(data, corpus, source=path.name)


def truth_sha256(truth: GroundTruth) -> str:
    """sha256 of what a ground truth asks: question ids, needles, phrasings, out-of-domain queries.

    Two runs can be compared query by query only when this matches. Needle
    offsets are left out (they follow the corpus, which a compared run may
    change), and so are the file's name and formatting.

    >>> t = GroundTruth((Question("q1", "A needle.", (("course", "Why?"),), "d", 0, 9, ""),), ())
    >>> truth_sha256(t) == truth_sha256(GroundTruth(t.questions, (), source="renamed.json"))
    True
    """
    import hashlib

    data = {"questions": [{"id": q.id, "needle": q.needle, "queries": [list(x) for x in q.queries]}
                          for q in truth.questions],
            "ood": [{"id": o.id, "kind": o.kind, "query": o.query} for o in truth.ood]}
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
