"""Evaluate the results of any other retriever against the same ground truth.

A run file is JSON Lines, one query per line, hits in the system's rank order::

    {"query_id": "q01:course", "hits": [{"text": "...", "doc": "svm", "start": 120, "end": 610, "score": 0.31}]}

``doc``, ``start``, ``end`` and ``score`` are optional. A hit holds the needle
when its offsets (in the document ``doc``) contain the needle's span, or,
without offsets, when its text contains the needle (whitespace-normalised).
Queries of the ground truth missing from the run count as misses and are
reported. When scores are cosine distances the abstention sweep works too.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import numpy as np

from ..core.defaults import TOP
from .records import ConfigResult, Evaluation, ExternalKey
from ..core.limits import Limits, read_input
from ..documents.truth import GroundTruth

__all__ = ["ExternalHit", "ExternalRun", "ExternalKey", "RunError", "load_run", "parse_run", "decode_run", "run_result",
           "attach_run", "RANK_RUNGS", "rank_rungs"]

_WS = re.compile(r"\s+")


class RunError(ValueError):
    """A run file that cannot be evaluated; ``problems`` names each bad line."""

    def __init__(self, source: str, problems: list[str], *, count: int | None = None, stopped_at: int | None = None):
        self.source, self.problems = source, problems
        self.count = len(problems) if count is None else count
        self.stopped_at = stopped_at
        shown = problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])
        how_many = (f"at least {self.count:,} problem(s); reading stopped at line {stopped_at:,} (fix these first)"
                    if stopped_at else f"{self.count:,} problem(s)")
        super().__init__(f"run {source} has {how_many}:\n" + "\n".join(f"  - {p}" for p in shown))


@dataclass(frozen=True)
class ExternalHit:
    """One hit of a run: its text, and where it is when known (document id, character offsets), its score."""

    text: str
    doc: str | None = None
    start: int | None = None
    end: int | None = None
    score: float | None = None


@dataclass(frozen=True)
class ExternalRun:
    """A validated run file: each query's hits in rank order, the queries it lacks, what mapping did."""

    name: str
    hits: dict[str, tuple[ExternalHit, ...]]  # query id -> hits in rank order
    missing: tuple[str, ...]  # ground-truth queries absent from the run (counted as misses)
    source: str = ""
    distances: bool = False  # scores are cosine distances (lower = closer)
    notes: tuple[str, ...] = ()  # what mapping did (doc names resolved to corpus ids), shown to the user

    @property
    def key(self) -> ExternalKey:
        """The run's key among an evaluation's results (``ext/NAME``)."""
        return ExternalKey(self.name)


def _normalise(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _parse_hit(raw, where: str, problems: list[str]) -> ExternalHit | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: a hit must be an object with at least 'text'")
        return None
    text = raw.get("text")
    if not isinstance(text, str):
        problems.append(f"{where}: 'text' must be a string")
        return None
    doc = raw.get("doc")
    if doc is not None and not isinstance(doc, str):
        problems.append(f"{where}: 'doc' must be a string")
        return None
    start, end = raw.get("start"), raw.get("end")
    if (start is None) != (end is None):
        problems.append(f"{where}: give both 'start' and 'end', or neither")
        return None
    if start is not None and not (isinstance(start, int) and isinstance(end, int) and not isinstance(start, bool)
                                  and not isinstance(end, bool) and 0 <= start <= end):
        problems.append(f"{where}: 'start' and 'end' must be integers with 0 <= start <= end")
        return None
    score = raw.get("score")
    if score is not None and not isinstance(score, bool) and isinstance(score, (int, float)):
        try:
            score = float(score)
        except OverflowError:  # an integer too large for a float
            score = math.inf
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score)):
        problems.append(f"{where}: 'score' must be a finite number")
        return None
    return ExternalHit(text, doc, start, end, None if score is None else float(score))


def _doc_resolver(corpus):
    """``resolve(name) -> (doc id | None, candidates)``: corpus id, or an unambiguous file name / relative path."""
    ids = {d.id for d in corpus.documents}
    by_key: dict[str, set[str]] = {}

    def add(key: str, doc_id: str) -> None:
        by_key.setdefault(key, set()).add(doc_id)

    for d in corpus.documents:
        rel = PurePosixPath(d.path or d.id)
        add(rel.as_posix(), d.id)  # "notes/alpha.md"
        add(rel.name, d.id)  # "alpha.md"
        add(PurePosixPath(d.id).name, d.id)  # "alpha"

    def resolve(name: str) -> tuple[str | None, list[str]]:
        if name in ids:
            return name, []
        clean = name.strip().replace("\\", "/")
        while clean.startswith("./"):
            clean = clean[2:]
        if clean in ids:
            return clean, []
        for key in (clean, clean.lower()):
            found = by_key.get(key)
            if found and len(found) == 1:
                return next(iter(found)), []
            if found:
                return None, sorted(found)
        # an absolute or longer path ending with a document's relative path
        ends = {d.id for d in corpus.documents if clean.endswith("/" + (d.path or d.id))}
        if len(ends) == 1:
            return next(iter(ends)), []
        if ends:
            return None, sorted(ends)
        return None, difflib.get_close_matches(clean, sorted(ids), n=3, cutoff=0.4)

    return resolve


def _map_docs(hits: dict, first_line: dict, corpus, problems: list[str]) -> tuple[dict, tuple[str, ...]]:
    """Hits with ``doc`` mapped to corpus ids and offsets checked against the document."""
    resolve = _doc_resolver(corpus)
    mapped: dict[str, str] = {}
    unmapped: dict[str, list[str]] = {}
    text_differs = 0
    out = {}
    for qid, hs in hits.items():
        new = []
        for i, h in enumerate(hs):
            where = f"line {first_line[qid]}, hit {i + 1}"
            if h.doc is not None:
                doc_id, candidates = resolve(h.doc)
                if doc_id is None:
                    if h.doc not in unmapped:
                        unmapped[h.doc] = candidates
                        hint = (f"closest corpus ids: {', '.join(candidates)}" if candidates
                                else "no corpus id is close")
                        many = " (it matches several documents)" if candidates and h.doc not in candidates else ""
                        problems.append(f"{where}: doc {h.doc!r} is not a document of the corpus{many}; {hint}. "
                                        "Use the corpus ids (ragdiag ingest lists them), or drop 'doc' to match by text")
                    continue
                if doc_id != h.doc:
                    mapped[h.doc] = doc_id
                    h = replace(h, doc=doc_id)
                if h.start is not None:
                    text = corpus.document(doc_id).text
                    if h.end > len(text):
                        problems.append(f"{where}: offsets {h.start}-{h.end} run past the end of document {doc_id!r} "
                                        f"({len(text):,} characters)")
                        continue
                    if h.text.strip() and _normalise(h.text) != _normalise(text[h.start:h.end]):
                        text_differs += 1
            new.append(h)
        out[qid] = tuple(new)
    notes = []
    if mapped:
        shown = ", ".join(f"{a!r} -> {b!r}" for a, b in list(mapped.items())[:5])
        notes.append(f"{len(mapped)} document name(s) mapped to corpus ids: {shown}"
                     + (" ..." if len(mapped) > 5 else ""))
    if text_differs:
        notes.append(f"{text_differs} hit(s) have text that differs from the document at their offsets; "
                     "the offsets decide")
    return out, tuple(notes)


#: The most problems a run keeps as text; the rest are counted (an 18 MB upload of ``{}`` lines is 6 million).
MAX_PROBLEMS = 1000


class _Problems(list):
    """A list of problem strings that keeps the first ``cap`` and counts the others."""

    def __init__(self, cap: int = MAX_PROBLEMS):
        super().__init__()
        self.cap, self.dropped = cap, 0

    def append(self, item: str) -> None:
        if len(self) < self.cap:
            super().append(item)
        else:
            self.dropped += 1

    def extend(self, items) -> None:
        for item in items:
            self.append(item)

    @property
    def count(self) -> int:
        """Every problem found, kept as text or not."""
        return len(self) + self.dropped

    def done(self) -> list[str]:
        return list(self) + ([f"... and {self.dropped:,} more problem(s) of the same kinds"] if self.dropped else [])


def parse_run(lines, truth: GroundTruth, *, name: str = "external", source: str = "<run>",
              distances: bool = False, corpus=None) -> ExternalRun:
    """Validate run lines against ``truth``; every problem is reported with its line number.

    With ``corpus``, each hit's ``doc`` is mapped to a corpus id (an id, or a file name / relative
    path that names one document); a name that maps to none or to several is a problem, listed with
    the closest ids, and offsets past the end of their document are problems too.
    """
    known = {q.id for q in truth.queries}
    problems = _Problems()  # bounded: the first MAX_PROBLEMS as text, the rest counted
    hits: dict[str, tuple[ExternalHit, ...]] = {}
    first_line: dict[str, int] = {}
    unknown = _Problems()
    stopped_at = None
    for n, line in enumerate(lines, 1):
        if problems.count + unknown.count >= MAX_PROBLEMS:  # a cap on work, not only on messages
            stopped_at = n
            break
        if not line.strip():
            continue
        if n == 1:
            line = line.lstrip("\ufeff")  # a byte-order mark
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        except RecursionError:
            problems.append(f"line {n}: nested too deeply to read")
            continue
        except ValueError as exc:  # e.g. an integer of thousands of digits
            problems.append(f"line {n}: not valid JSON ({str(exc).split(';')[0]})")
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("query_id"), str) or not isinstance(obj.get("hits"), list):
            problems.append(f"line {n}: expected {{\"query_id\": \"...\", \"hits\": [...]}}")
            continue
        qid = obj["query_id"]
        if qid not in known:
            unknown.append(f"line {n}: unknown query id {qid!r}")
            continue
        if qid in first_line:
            problems.append(f"line {n}: duplicate query id {qid!r} (first on line {first_line[qid]})")
            continue
        first_line[qid] = n
        parsed = [_parse_hit(h, f"line {n}, hit {i + 1}", problems) for i, h in enumerate(obj["hits"])]
        hits[qid] = tuple(h for h in parsed if h is not None)
    if unknown:
        sample = ", ".join(sorted(known)[:4])
        problems.extend(unknown)
        problems.dropped += unknown.dropped
        hint = f"query ids must be those of the ground truth ({truth.source}), e.g. {sample}"
    if not first_line and not problems:
        problems.append("no queries in the run (empty file?)")
    if distances:
        for qid, hs in hits.items():
            if any(h.score is None for h in hs):
                problems.append(f"query {qid!r}: --distances needs a 'score' on every hit")
                break
            bad = next((h.score for h in hs if not 0.0 <= h.score <= 2.0), None)
            if bad is not None:  # a cosine distance is 1 - cos, in [0, 2]; anything else is another kind of score
                problems.append(f"query {qid!r}: score {bad:g} is not a cosine distance (they lie in [0, 2]); "
                                "without --distances scores are only ranked")
                break
    notes: tuple[str, ...] = ()
    if corpus is not None and not problems:
        hits, notes = _map_docs(hits, first_line, corpus, problems)
    if problems or problems.dropped:
        count = problems.count
        found = problems.done() + ([hint] if unknown else [])
        raise RunError(source, found, count=count, stopped_at=stopped_at)
    missing = tuple(q.id for q in truth.queries if q.id not in hits)
    return ExternalRun(name, hits, missing, source, distances, notes)


def decode_run(raw: bytes, source: str) -> list[str]:
    """The lines of a run file's bytes (UTF-8, a byte-order mark accepted); :class:`RunError` otherwise."""
    try:
        return raw.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise RunError(source, [f"cannot read it as UTF-8 text (invalid byte at position {exc.start})"]) from None


def load_run(path: str | Path, truth: GroundTruth, *, name: str | None = None, distances: bool = False,
             corpus=None, limits: Limits | None = None) -> ExternalRun:
    """Read (a regular file of at most ``limits.max_run_bytes``) and validate a run file.

    ``name`` defaults to the file's stem; ``distances``: the scores are cosine distances.
    Raises :class:`RunError` listing every problem (see :func:`parse_run`).
    """
    path = Path(path)
    try:
        raw = read_input(path, "max_run_bytes", what="run file", limits=limits)
    except ValueError as exc:
        raise RunError(str(path), [str(exc)]) from None
    return parse_run(decode_run(raw, path.name), truth, name=name or path.stem, source=path.name,
                     distances=distances, corpus=corpus)


def _holds(hit: ExternalHit, doc_id: str, start: int, end: int, needle: str) -> bool:
    if hit.start is not None and hit.doc is not None:
        return hit.doc == doc_id and hit.start <= start and end <= hit.end
    return _normalise(needle) in _normalise(hit.text)


#: The rungs an external run's ranks can tell (it has no chunks of ragdiag's, so no gate rungs): the run lacks the
#: query, no hit holds the needle, the first holder ranks past k, or within it.
RANK_RUNGS = ("missing", "not-in-pool", "ranked-low", "found")


def rank_rungs(ev: Evaluation, run: ExternalRun, k: int) -> tuple[str | None, ...]:
    """Per query of ``ev`` (the run attached), its rung of :data:`RANK_RUNGS` at rank ``k``; None out of domain.

    >>> from types import SimpleNamespace as NS
    >>> ev = NS(queries=[NS(id=q, in_domain=d) for q, d in (("a", 1), ("b", 1), ("c", 1), ("d", 1), ("o", 0))],
    ...         results={"ext/x": NS(needle_rank=np.array([1, 7, 0, 0, 0]))})
    >>> rank_rungs(ev, NS(key="ext/x", missing=("d",)), k=4)
    ('found', 'ranked-low', 'not-in-pool', 'missing', None)
    """
    ranks = ev.results[run.key].needle_rank
    missing = set(run.missing)
    return tuple(None if not q.in_domain else "missing" if q.id in missing else "not-in-pool" if r == 0
                 else "ranked-low" if r > k else "found" for q, r in zip(ev.queries, ranks))


def run_result(ev: Evaluation, run: ExternalRun) -> ConfigResult:
    """The run as a :class:`ConfigResult` aligned with ``ev.queries`` (top positions index the run's hits)."""
    nq = len(ev.queries)
    needle_rank = np.zeros(nq, dtype=np.int64)
    needle_distance = np.full(nq, np.nan)
    top1 = np.full(nq, np.nan)
    top_order = np.full((nq, TOP), -1, dtype=np.int64)
    top_scores = np.full((nq, TOP), np.nan)
    top_distance = np.full((nq, TOP), np.inf)
    top_holds = np.zeros((nq, TOP), dtype=bool)
    for i, q in enumerate(ev.queries):
        hs = run.hits.get(q.id, ())
        n = min(len(hs), TOP)
        top_order[i, :n] = np.arange(n)
        top_scores[i, :n] = [np.nan if h.score is None else h.score for h in hs[:n]]
        if run.distances and hs:
            top_distance[i, :n] = [h.score for h in hs[:n]]
            top1[i] = hs[0].score
        if not q.in_domain:
            continue
        question = ev.truth.question(q.question_id)
        holds = [_holds(h, question.doc_id, question.start, question.end, question.needle) for h in hs]
        top_holds[i, :n] = holds[:n]
        if any(holds):
            needle_rank[i] = holds.index(True) + 1
            if run.distances:
                needle_distance[i] = min(h.score for h, ok in zip(hs, holds) if ok)
    return ConfigResult(
        config=run.key,
        needle_rank=needle_rank,
        needle_distance=needle_distance,
        top1_distance=top1,
        top_order=top_order,
        top_scores=top_scores,
        top_distance=top_distance,
        top_holds=top_holds,
    )


def attach_run(ev: Evaluation, run: ExternalRun) -> Evaluation:
    """A new evaluation: ``ev`` with the run beside ragdiag's configurations (tables, paired tests, sweeps).

    ``ev`` itself is left as it was; the run's results are under ``run.key`` (``ext/NAME``),
    replacing an earlier run of the same name.
    """
    result = run_result(ev, run)
    return replace(ev, results={**ev.results, result.config: result}, external={**ev.external, run.name: run})
