"""Every problem of a ground-truth file, as records naming the entry and the field.

The loader's rules are :func:`ragdiag.documents.truth.parse_truth`'s: they are run, never
re-implemented, and each message it reports becomes a :class:`Problem` (errors).
On top come the authoring warnings the loader does not know:

- leakage: a query copying its needle's content words (:mod:`.leakage`);
- a near out-of-domain query whose content words one sentence of the corpus
  holds almost all of (:data:`NEAR_OOD_WARN`): a chunk may answer it verbatim,
  so the author must confirm it does not;
- a phrasing still equal to the draft ``truth suggest`` wrote.

:func:`check_needle` is the live check of one candidate needle: the loader's
rules, where it lies, and which chunking strategies cut it (and where).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from ..index.chunking import STRATEGIES, Chunk, Strategy, chunk_document, destroyed_needles, parse_strategies
from ..documents.corpus import Corpus, Document, make_document
from ..documents.truth import TruthError, parse_truth
from .leakage import Leakage, leakage
from .text import Sentence, content_words, corpus_sentences
from ..core.words import pct

__all__ = [
    "Problem",
    "NeedleCheck",
    "StrategyCut",
    "OodMatch",
    "check_truth",
    "check_needle",
    "loader_problems",
    "near_ood_matches",
    "closest_chunks",
    "NEAR_OOD_WARN",
]

#: Warn when one corpus sentence holds at least this share of a near ood query's content words...
NEAR_OOD_WARN = 0.6
#: ... and at least this many of them. (The bundled near ood queries peak at 0.33 against any
#: sentence; 17 of the 32 course phrasings of its answerable questions reach 0.6.)
NEAR_OOD_MIN_WORDS = 3


@dataclass(frozen=True)
class Problem:
    """One problem: ``severity`` error (the loader refuses the file) or warning (it loads)."""

    severity: str
    item: str  # "question q01", "ood o3", "question #4" (no id), or "file"
    field: str  # "id", "needle", "queries", "queries.course", "kind", "query", "" (the whole entry)
    message: str

    def __str__(self) -> str:
        where = f"{self.item}, {self.field}" if self.field else self.item
        return f"{self.severity}: {where}: {self.message}"


_WHERE = re.compile(r"^((?:question|ood) \S+): (.*)$", re.S)
_PHRASING_FIELD = re.compile(r"(?:query|phrasing name) '([^']*)'")


def _field_of(message: str) -> str:
    m = _PHRASING_FIELD.search(message)
    if m:
        return f"queries.{m.group(1)}"
    for prefix, field in (("'id'", "id"), ("duplicate id", "id"), ("ids must", "id"), ("'queries'", "queries"),
                          ("'needle'", "needle"), ("needle", "needle"), ("kind", "kind"), ("query", "query")):
        if message.startswith(prefix):
            return field
    return ""


def _record(problem: str) -> Problem:
    m = _WHERE.match(problem)
    if not m:
        return Problem("error", "file", "", problem)
    return Problem("error", m.group(1), _field_of(m.group(2)), m.group(2))


_STUB_NEEDLE = "This stub sentence is long enough to be a valid needle here."


def _stub_corpus() -> Corpus:
    return Corpus("stub", (make_document("stub", f"# Stub\n\n{_STUB_NEEDLE}\n"),))


def loader_problems(data: object, corpus: Corpus, *, source: str = "<data>") -> list[Problem]:
    """The loader's problems with ``data``, all of them, as records.

    The loader stops early on a file-level problem (no question list) and skips
    the needle of an entry without an id; those parts are checked separately
    here (the ood list against a one-sentence stub corpus, the needle under a
    ``#n`` id) so one pass reports everything.
    """
    out: list[Problem] = []
    try:
        parse_truth(data, corpus, source=source)
    except TruthError as exc:
        out.extend(_record(p) for p in exc.problems)
    if not isinstance(data, dict):
        return out
    questions = data.get("questions")
    if (not isinstance(questions, list) or not questions) and isinstance(data.get("ood"), list) and data["ood"]:
        stub = {"questions": [{"id": "stub", "needle": _STUB_NEEDLE, "queries": {"course": "stub"}}],
                "ood": data["ood"]}
        try:
            parse_truth(stub, _stub_corpus(), source=source)
        except TruthError as exc:
            out.extend(_record(p) for p in exc.problems)
    if isinstance(questions, list):
        for n, raw in enumerate(questions, 1):
            if isinstance(raw, dict) and not (isinstance(raw.get("id"), str) and raw["id"].strip()):
                probe = {**raw, "id": f"#{n}", "queries": raw.get("queries") or {"course": "x"}}
                try:
                    parse_truth({"questions": [probe], "ood": []}, corpus, source=source)
                except TruthError as exc:
                    out.extend(_record(p) for p in exc.problems)
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class StrategyCut:
    """Whether ``strategy`` keeps a needle whole; ``cuts``: offsets inside the needle where a chunk ends or starts."""

    strategy: str
    description: str
    whole: bool
    cuts: tuple[int, ...]


@dataclass(frozen=True)
class NeedleCheck:
    """The live check of one needle: the loader's problems, where it lies, what chunking does to it."""

    needle: str
    problems: tuple[str, ...]
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None
    section: str | None = None  # the section's display name (the document title for the preamble)
    section_title: str | None = None  # the section's own title ("" for the preamble)
    chunking: tuple[StrategyCut, ...] = ()

    @property
    def ok(self) -> bool:
        """The needle passes every loader rule."""
        return not self.problems


@lru_cache(maxsize=512)
def _chunks(doc: Document, strategy: Strategy) -> tuple[Chunk, ...]:
    return tuple(chunk_document(doc, strategy))


def check_needle(needle: str, corpus: Corpus, strategies: Iterable[Strategy] | None = None) -> NeedleCheck:
    """The loader's rules for ``needle`` (occurs once, 40-250 characters, not a heading) and its chunking."""
    probe = {"questions": [{"id": "needle", "needle": needle, "queries": {"course": "x"}}], "ood": []}
    try:
        truth = parse_truth(probe, corpus, source="needle")
    except TruthError as exc:
        return NeedleCheck(needle, tuple(p.removeprefix("question needle: ") for p in exc.problems))
    q = truth.questions[0]
    doc = corpus.document(q.doc_id)
    cuts = []
    for strategy in strategies if strategies is not None else parse_strategies(None):
        destroyed = destroyed_needles(_chunks(doc, strategy), [(q.id, q.doc_id, q.start, q.end)])
        offsets = tuple(c - q.start for c in destroyed[0].cuts) if destroyed else ()
        cuts.append(StrategyCut(strategy.name, strategy.description, not destroyed, offsets))
    return NeedleCheck(needle, (), q.doc_id, q.start, q.end, q.section, doc.section_at(q.start).title, tuple(cuts))


@dataclass(frozen=True)
class OodMatch:
    """A corpus sentence holding ``share`` of an ood query's content words (``shared``)."""

    sentence: Sentence
    share: float
    shared: tuple[str, ...]

    @property
    def warn(self) -> bool:
        """Worth a warning: at least ``NEAR_OOD_WARN`` of the words, and ``NEAR_OOD_MIN_WORDS`` or more of them."""
        return self.share >= NEAR_OOD_WARN and len(self.shared) >= NEAR_OOD_MIN_WORDS


@lru_cache(maxsize=8)
def _sentence_words(corpus: Corpus) -> tuple[tuple[Sentence, frozenset[str]], ...]:
    return tuple((s, frozenset(content_words(s.text))) for s in corpus_sentences(corpus))


def near_ood_matches(query: str, corpus: Corpus, *, top: int = 3) -> list[OodMatch]:
    """The corpus sentences sharing the most of ``query``'s content words, best first."""
    words = content_words(query)
    if not words:
        return []
    scored = []
    for s, sw in _sentence_words(corpus):
        shared = words & sw
        if shared:
            scored.append(OodMatch(s, len(shared) / len(words), tuple(sorted(shared))))
    scored.sort(key=lambda m: (-m.share, m.sentence.doc_id, m.sentence.start))
    return scored[:top]


@lru_cache(maxsize=8)
def _bm25(corpus: Corpus, strategy: str):
    from ..retrieval.bm25 import BM25Index

    chunks = tuple(c for d in corpus.documents for c in _chunks(d, STRATEGIES[strategy]))
    return chunks, BM25Index([c.embed_text for c in chunks])


def closest_chunks(query: str, corpus: Corpus, *, strategy: str = "E", k: int = 3) -> list[tuple[Chunk, float]]:
    """The ``k`` chunks of ``strategy`` BM25 ranks highest for ``query`` (no model needed)."""
    chunks, index = _bm25(corpus, strategy)
    scores = index.scores([query])[0]
    order = [int(i) for i in scores.argsort()[::-1][:k] if scores[i] > 0]
    return [(chunks[i], float(scores[i])) for i in order]


def question_leakage(raw: dict) -> dict[str, Leakage]:
    """Leakage of each phrasing of a raw question entry (needs a string needle and a queries object)."""
    needle, queries = raw.get("needle"), raw.get("queries")
    if not isinstance(needle, str) or not isinstance(queries, dict):
        return {}
    return {str(p): leakage(t, needle) for p, t in queries.items() if isinstance(t, str) and t.strip()}


def check_truth(data: object, corpus: Corpus, *, source: str = "<data>") -> list[Problem]:
    """Every problem of a parsed ground-truth mapping: the loader's errors, then the authoring warnings."""
    problems = loader_problems(data, corpus, source=source)
    if not isinstance(data, dict):
        return problems
    for n, raw in enumerate(data.get("questions") or [], 1):
        if not isinstance(raw, dict):
            continue
        item = f"question {raw.get('id') or f'#{n}'}"
        for phrasing, leak in question_leakage(raw).items():
            if leak.warn:
                problems.append(Problem("warning", item, f"queries.{phrasing}",
                                        f"leakage: {leak}: {', '.join(leak.copied)}; rewrite it in other words "
                                        "(a query that copies its answer measures string matching, not retrieval)"))
        drafts = raw.get("draft")
        queries = raw.get("queries")
        if isinstance(drafts, dict) and isinstance(queries, dict):
            for phrasing, text in queries.items():
                if isinstance(text, str) and text.strip() and text.strip() == str(drafts.get(phrasing, "")).strip():
                    problems.append(Problem("warning", item, f"queries.{phrasing}",
                                            "still the suggested draft; rewrite it as a person would ask"))
    for n, raw in enumerate(data.get("ood") or [], 1) if isinstance(data.get("ood"), list) else ():
        if not isinstance(raw, dict) or raw.get("kind") != "near" or not isinstance(raw.get("query"), str):
            continue
        matches = near_ood_matches(raw["query"], corpus, top=1)
        if matches and matches[0].warn:
            m = matches[0]
            s = m.sentence
            problems.append(Problem("warning", f"ood {raw.get('id') or f'#{n}'}", "query",
                                    f"{pct(m.share)} of its content words ({', '.join(m.shared)}) are in one sentence "
                                    f"of {s.doc_id} @{s.start} ({s.section or 'preamble'}): {s.text[:100]!r}; "
                                    "confirm that it does not answer the query, or it is not out of domain"))
    return problems
