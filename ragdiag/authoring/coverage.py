"""Coverage of a ground truth: where its questions are, what is missing, what it can resolve."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..documents.corpus import Corpus
from ..core.defaults import ALPHA, PRIMARY_K
from ..core.tables import align
from .checks import check_needle
from ..analyses.compare.power import Resolution, resolvable, resolution_sentence, resolvable_difference

__all__ = ["Coverage", "SectionRow", "coverage", "format_coverage", "DEFAULT_PHRASINGS"]

#: Phrasing names a new ground truth starts with.
DEFAULT_PHRASINGS = ("course", "ticket")


@dataclass(frozen=True)
class SectionRow:
    """One section of the corpus: its size in characters and how many valid needles lie in it."""

    doc_id: str
    section: str  # "" for the text before the first ## heading
    chars: int
    questions: int


@dataclass(frozen=True)
class Coverage:
    """Where a ground truth's questions are, which phrasings are missing, near/far balance, resolution."""

    sections: tuple[SectionRow, ...]
    n_questions: int  # questions whose needle passes the loader's rules
    n_entries: int
    phrasings: tuple[str, ...]
    missing: tuple[tuple[str, str], ...]  # (question id, phrasing) with no text
    near: int
    far: int
    resolvable: float | None  # points of R@k, see power.resolvable_difference
    sentence: str
    resolution: Resolution | None = None  # alone and within the family, with the phrasings (power.resolvable)

    def as_json(self) -> dict:
        """The ``truth stats --json`` document."""
        return {"questions": self.n_questions, "entries": self.n_entries, "phrasings": list(self.phrasings),
                "missing": [list(m) for m in self.missing], "ood": {"near": self.near, "far": self.far},
                "resolvable": None if self.resolution is None else self.resolution.as_json(),
                "sentence": self.sentence,
                "documents": [{"document": d, "chars": c, "sections": n, "questions": q}
                              for d, c, n, q in self.by_document()]}

    def by_document(self) -> list[tuple[str, int, int, int]]:
        """``(doc_id, chars, sections, questions)`` per document."""
        out: dict[str, list[int]] = {}
        for r in self.sections:
            row = out.setdefault(r.doc_id, [0, 0, 0])
            row[0] += r.chars
            row[1] += 1
            row[2] += r.questions
        return [(d, c, s, q) for d, (c, s, q) in out.items()]


def phrasing_names(data: dict) -> tuple[str, ...]:
    """The ground truth's own phrasing names (first seen first), or ``course``, ``ticket``."""
    names = [str(p) for q in data.get("questions") or [] if isinstance(q, dict)
             for p in (q.get("queries") or {}) if isinstance(q.get("queries"), dict)]
    return tuple(dict.fromkeys(names)) or DEFAULT_PHRASINGS


def coverage(data: dict, corpus: Corpus, *, k: int = PRIMARY_K, alpha: float = ALPHA,
             family_size: int | None = None) -> Coverage:
    """Questions per document and section, missing phrasings, near/far balance, and the resolvable difference.

    The resolvable difference is that of the test actually used: the phrasings
    per question, alone and within a family of ``family_size`` comparisons
    (default: every pair of the default configurations).
    """
    counts: Counter = Counter()
    valid = 0
    questions = [q for q in data.get("questions") or [] if isinstance(q, dict)]
    for q in questions:
        if isinstance(q.get("needle"), str):
            chk = check_needle(q["needle"], corpus, strategies=())
            if chk.ok:
                valid += 1
                counts[(chk.doc_id, chk.section_title)] += 1
    rows = []
    for d in corpus.documents:
        for s in d.sections:
            rows.append(SectionRow(d.id, s.title, s.end - s.start, counts.get((d.id, s.title), 0)))
    names = phrasing_names(data)
    missing = []
    for n, q in enumerate(questions, 1):
        texts = q.get("queries") if isinstance(q.get("queries"), dict) else {}
        for p in names:
            if not (isinstance(texts.get(p), str) and texts[p].strip()):
                missing.append((str(q.get("id") or f"#{n}"), p))
    ood = [o for o in data.get("ood") or [] if isinstance(o, dict)]
    resolution = resolvable(valid, max(1, len(names)), k=k, family_size=family_size, alpha=alpha)
    return Coverage(
        sections=tuple(rows),
        n_questions=valid,
        n_entries=len(questions),
        phrasings=names,
        missing=tuple(missing),
        near=sum(o.get("kind") == "near" for o in ood),
        far=sum(o.get("kind") == "far" for o in ood),
        resolvable=resolvable_difference(valid, alpha=alpha) if valid else None,
        sentence=resolution.words() if valid else resolution_sentence(valid, k, alpha=alpha),
        resolution=resolution,
    )


def format_coverage(cov: Coverage) -> str:
    """The text report of ``truth stats``: totals, a table per document, sections, missing phrasings."""
    lines = [f"{cov.n_questions} valid questions of {cov.n_entries}; phrasings {', '.join(cov.phrasings)}; "
             f"out-of-domain: {cov.near} near, {cov.far} far", cov.sentence, "", "per document:"]
    by_doc: dict[str, int] = Counter()
    for r in cov.sections:
        by_doc[r.doc_id] += r.questions > 0
    table = [["document", "chars", "sections", "with questions", "questions"]]
    table += [[d, f"{chars:,}", str(n_sec), str(by_doc[d]), str(q)] for d, chars, n_sec, q in cov.by_document()]
    lines += ["  " + ln for ln in align(table, right=(1, 2, 3), last_free=True, min_width=(0, 8, 8, 14))]
    lines += ["", "sections with questions:"]
    lines += [f"  {r.doc_id} > {r.section or '(preamble)'}: {r.questions}" for r in cov.sections if r.questions]
    if cov.missing:
        lines += ["", f"phrasings missing ({len(cov.missing)}):"]
        lines += [f"  {qid}: {p}" for qid, p in cov.missing]
    else:
        lines += ["", "phrasings missing: none"]
    if cov.near == 0 or cov.far == 0:
        lines.append(f"out-of-domain balance: {cov.near} near, {cov.far} far; write both kinds "
                     "(near: the corpus's own vocabulary, no answer; far: another domain)")
    return "\n".join(lines)
