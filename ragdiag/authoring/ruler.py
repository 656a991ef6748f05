"""Can this ground truth tell? The ruler checked before any verdict is read from it.

An evaluation's verdicts are honest about their intervals, but they are only as
good as the questions they are measured with. :func:`ruler` reads one
evaluation (the configurations it ran) and says, with the questions as the unit:

* **Headroom**, per recall at k: the measure is **saturated** at that k when the
  smallest difference the family resolves (below) is larger than the distance
  from the best configuration's rate to the ceiling (nothing could be shown
  better than it), or from it to the floor, or than the share of queries on
  which the configurations differ at all (a question every configuration finds
  in every phrasing, or none finds, separates no two of them): "R@20 is
  saturated: 30 of 32 questions are found by every configuration; it cannot rank
  them". The resolvable difference is the primary k's (the studentized family's
  critical value barely moves with k; one permutation is run, not one per k).
* **Shortcuts**: the share of queries BM25 alone ranks a needle chunk first at
  (a string match suffices for them), the distribution of query-to-needle word
  overlap (:func:`ragdiag.authoring.leakage.leakage`), and the queries that copy
  their needle's words (its warning: at least 80% of at least three content
  words), by id.
* **Leakage**: queries whose content words are (nearly) those of a chunk (Jaccard
  at least :data:`NEAR_COPY`), and queries that name their needle's document (its
  file name, e.g. ``svm.md``, or a distinctive stem such as ``feature_selection``).
* **Discrimination**: how many pairs of the configurations the all-pairs family
  separates at this size (the studentized max-T of
  :func:`ragdiag.analyses.compare.family`, the test the Compare page uses), and the
  smallest difference in recall it resolves with 80% power at the family's own
  critical value (:func:`ragdiag.analyses.compare.power.resolvable`: the most
  favourable case, every disagreement one way; a smaller difference cannot be
  told apart).

The verdict is the first of: ``too easy`` (half the queries or more copy their
needle, or BM25 alone finds :data:`EASY_BM25` of them at rank 1), ``leaky``
(:data:`LEAKY_SHARE` of the queries or more nearly equal a chunk or name their
document), ``cannot rank`` (the primary k is saturated, or no pair is separated),
else ``can tell``. Each problem found is listed whatever the verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..core.defaults import ALPHA, DEFAULT_STRATEGY, KS, PRIMARY_K
from .leakage import leakage
from .text import content_words
from ..core.words import pct, pct_span

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation.records import Evaluation

__all__ = ["Headroom", "Discrimination", "Shortcuts", "Leaks", "Ruler", "ruler", "discrimination", "headroom",
           "GateResolution", "gate_resolution", "report_section",
           "NEAR_COPY", "EASY_COPIES", "EASY_BM25", "LEAKY_SHARE", "VERDICTS"]

#: A query whose content words overlap a chunk's this much (Jaccard) is nearly that chunk's text.
NEAR_COPY = 0.8
#: Too easy: at least this share of the queries copy their needle's words...
EASY_COPIES = 0.5
#: ... or BM25 alone ranks a needle chunk first for at least this share of them.
EASY_BM25 = 0.8
#: Leaky: at least this share of the queries nearly equal a chunk or name their needle's document.
LEAKY_SHARE = 0.1
#: The verdicts, most serious first.
VERDICTS = ("too easy", "leaky", "cannot rank", "can tell")
_POWER = 0.8


def _pts(share: float | None) -> str:
    """A difference of shares in points, as every share is said: whole points (one decimal under 1 point)."""
    if share is None:
        return "none"
    points = 100 * share
    return f"{points:.1f}" if 0 < abs(points) < 1 else f"{points:.0f}"


@dataclass(frozen=True)
class Discrimination:
    """What the set separates at its size: ``separated`` of ``pairs`` configuration pairs at R@``k``, and the
    smallest difference in recall (a share) resolved alone and within the family at its ``critical`` value."""

    k: int
    configs: int
    pairs: int
    separated: int
    questions: int
    phrasings: int
    critical: float | None
    alone: float | None
    family: float | None
    method: str = ""

    @property
    def resolvable(self) -> float | None:
        """The smallest difference the family resolves (the pair alone when there is one pair)."""
        return self.alone if self.pairs <= 1 else self.family

    def sentence(self) -> str:
        """E.g. "32 questions separate 40 of 276 pairs at R@4; they resolve about 18 points within the family"."""
        if self.pairs == 0:
            return f"one configuration: nothing to separate; alone, {self.questions} questions resolve about " \
                   f"{_pts(self.alone)} points"
        within = "alone" if self.pairs <= 1 else f"within the family of {self.pairs}"
        resolves = ("no difference can be resolved" if self.resolvable is None else
                    f"the smallest difference resolved {within} is about {_pts(self.resolvable)} points of R@{self.k}")
        return (f"{self.questions} questions separate {self.separated} of {self.pairs} configuration pairs at "
                f"R@{self.k}; {resolves} (80% power, even if every disagreement went one way)")

    def as_json(self) -> dict:
        """Shares and counts (``resolvable_points``: the family's figure in points)."""
        return {"k": self.k, "configs": self.configs, "pairs": self.pairs, "separated": self.separated,
                "questions": self.questions, "phrasings": self.phrasings, "critical": self.critical,
                "alone": self.alone, "family": self.family,
                "resolvable_points": None if self.resolvable is None else round(100 * self.resolvable, 3),
                "method": self.method, "sentence": self.sentence()}


@dataclass(frozen=True)
class Headroom:
    """Recall at ``k``: the configurations' rates (``low`` to ``high``), the questions at the ceiling (found by every
    configuration in every phrasing) and floor (found by none), and whether the family's smallest resolvable
    difference fits between the rates and the ceiling or floor (see :attr:`side`)."""

    k: int
    low: float
    high: float
    questions: int
    ceiling: int
    floor: int
    room: float  # share of queries on which some configuration differs from another (at most this can separate two)
    resolvable: float | None

    @property
    def measure(self) -> str:
        """``R@k``."""
        return f"R@{self.k}"

    @property
    def side(self) -> str | None:
        """Why it is saturated: ``ceiling`` (the best is closer to 100% than the family resolves: nothing could be
        shown better), ``floor`` (the best is closer to 0), ``agree`` (the configurations differ on fewer queries
        than that: no two can be told apart), or None (it has room)."""
        r = self.resolvable
        if r is None:
            return "agree"
        if 1.0 - self.high < r:
            return "ceiling"
        if self.high < r:
            return "floor"
        if self.room < r:
            return "agree"
        return None

    @property
    def saturated(self) -> bool:
        """The family's smallest resolvable difference exceeds the distance to the ceiling or floor, or the room."""
        return self.side is not None

    def sentence(self) -> str:
        """E.g. "R@20 is saturated: 30 of 32 questions are found by every configuration; it cannot rank them"."""
        every = f"{self.ceiling} of {self.questions} questions are found by every configuration"
        res = "no difference" if self.resolvable is None else f"{_pts(self.resolvable)} points"
        side = self.side
        if side == "ceiling":
            return (f"{self.measure} is saturated: the best configuration is at {pct(self.high)}, "
                    f"{_pts(1.0 - self.high)} points from the ceiling, and the family resolves {res}; {every}; "
                    "it cannot rank them against anything better")
        if side == "floor":
            return (f"{self.measure} is saturated at the floor: the best configuration is at {pct(self.high)} and "
                    f"the family resolves {res}; {self.floor} of {self.questions} questions are found by none; "
                    "it cannot rank them")
        if side == "agree":
            return (f"{self.measure} is saturated: {every} and {self.floor} by none; the configurations differ on "
                    f"{pct(self.room)} of the queries and the family resolves {res}; it cannot rank them")
        return (f"{self.measure} has room: {pct_span(self.low, self.high)}, {_pts(1.0 - self.high)} points "
                f"below the ceiling; up to {_pts(self.room)} points can separate two configurations and the family "
                f"resolves {res}")

    def as_json(self) -> dict:
        """The row of ``ruler --json``'s ``headroom``."""
        return {"measure": self.measure, "k": self.k, "low": self.low, "high": self.high,
                "questions": self.questions, "ceiling": self.ceiling, "floor": self.floor, "room": self.room,
                "resolvable": self.resolvable, "saturated": self.saturated, "side": self.side,
                "sentence": self.sentence()}


@dataclass(frozen=True)
class Shortcuts:
    """BM25 alone at rank 1, the query-to-needle overlap, and the queries that copy their needle."""

    bm25: str | None  # the BM25 configuration read (None: the evaluation ran none)
    bm25_first: int
    queries: int
    overlap: tuple[float, ...]  # per in-domain query, share of its content words found in its needle
    copies: tuple[tuple[str, str, float], ...]  # (query id, question id, share) of the queries that copy

    @property
    def bm25_share(self) -> float | None:
        """Share of the in-domain queries whose needle BM25 alone ranks first (None: no BM25 run)."""
        return None if self.bm25 is None or not self.queries else self.bm25_first / self.queries

    @property
    def copy_share(self) -> float:
        """Share of the in-domain queries that copy their needle's words."""
        return len(self.copies) / self.queries if self.queries else 0.0

    def quantiles(self) -> dict:
        """The overlap's minimum, quartiles and maximum."""
        if not self.overlap:
            return {}
        q = np.quantile(np.asarray(self.overlap), [0, 0.25, 0.5, 0.75, 1])
        return dict(zip(("min", "q1", "median", "q3", "max"), (round(float(v), 4) for v in q)))

    def sentence(self) -> str:
        """BM25 alone, the median overlap and the copies in one sentence."""
        q = self.quantiles()
        bm25 = ("no BM25 configuration ran" if self.bm25 is None else
                f"BM25 alone ({self.bm25}) ranks the needle first for {self.bm25_first} of {self.queries} queries "
                f"({pct(self.bm25_share)})")
        med = f"; a query shares a median {pct(q['median'])} of its content words with its needle" if q else ""
        return f"{bm25}{med}; {len(self.copies)} of {self.queries} queries copy their needle's words"

    def as_json(self) -> dict:
        """The ``shortcuts`` object of ``ruler --json``."""
        return {"bm25": self.bm25, "bm25_first": self.bm25_first, "queries": self.queries,
                "bm25_share": self.bm25_share, "overlap": self.quantiles(), "copy_share": self.copy_share,
                "copies": [{"query": q, "question": g, "share": s} for q, g, s in self.copies],
                "sentence": self.sentence()}


@dataclass(frozen=True)
class Leaks:
    """Queries nearly equal to a chunk's text, and queries that name their needle's document."""

    queries: int
    near_copies: tuple[tuple[str, str, float], ...]  # (query id, chunk id, Jaccard of content words)
    named: tuple[tuple[str, str, str], ...]  # (query id, document id, the name found)

    @property
    def flagged(self) -> tuple[str, ...]:
        """The query ids flagged by either check, in order."""
        return tuple(dict.fromkeys([q for q, _, _ in self.near_copies] + [q for q, _, _ in self.named]))

    @property
    def share(self) -> float:
        """Share of the in-domain queries flagged."""
        return len(self.flagged) / self.queries if self.queries else 0.0

    def sentence(self) -> str:
        """The two counts in one sentence."""
        return (f"{len(self.near_copies)} of {self.queries} queries nearly equal a chunk's text, "
                f"{len(self.named)} name their needle's document")

    def as_json(self) -> dict:
        """The ``leakage`` object of ``ruler --json``."""
        return {"queries": self.queries, "share": self.share,
                "near_copies": [{"query": q, "chunk": c, "jaccard": s} for q, c, s in self.near_copies],
                "named": [{"query": q, "document": d, "name": n} for q, d, n in self.named],
                "sentence": self.sentence()}


@dataclass(frozen=True)
class Ruler:
    """The ruler check of one evaluation: headroom per k, shortcuts, leakage, discrimination, and the verdict."""

    questions: int
    phrasings: int
    configs: tuple[str, ...]
    headroom: tuple[Headroom, ...]
    shortcuts: Shortcuts
    leaks: Leaks
    discrimination: Discrimination
    primary_k: int = PRIMARY_K
    alpha: float = ALPHA

    @property
    def saturated(self) -> tuple[str, ...]:
        """The measures saturated (``R@k``)."""
        return tuple(h.measure for h in self.headroom if h.saturated)

    @property
    def flagged(self) -> tuple[str, ...]:
        """Every query id flagged by a shortcut (a copy) or leakage check."""
        return tuple(dict.fromkeys([q for q, _, _ in self.shortcuts.copies] + list(self.leaks.flagged)))

    def problems(self) -> list[str]:
        """Each problem found, one sentence each (empty: none)."""
        out = []
        s = self.shortcuts
        if s.copy_share >= EASY_COPIES:
            out.append(f"too easy: {len(s.copies)} of {s.queries} queries copy their needle's words")
        if s.bm25_share is not None and s.bm25_share >= EASY_BM25:
            out.append(f"too easy: BM25 alone ranks the needle first for {pct(s.bm25_share)} of the queries")
        if self.leaks.share >= LEAKY_SHARE:
            out.append(f"leaky: {self.leaks.sentence()}")
        for h in self.headroom:
            if h.saturated:
                out.append(h.sentence())
        d = self.discrimination
        if d.pairs and not d.separated:
            out.append(f"no pair of the {d.configs} configurations is separated at R@{d.k}")
        return out

    @property
    def verdict(self) -> str:
        """One of :data:`VERDICTS` (see the module docstring)."""
        s = self.shortcuts
        if s.copy_share >= EASY_COPIES or (s.bm25_share is not None and s.bm25_share >= EASY_BM25):
            return "too easy"
        if self.leaks.share >= LEAKY_SHARE:
            return "leaky"
        primary = next((h for h in self.headroom if h.k == self.primary_k), None)
        d = self.discrimination
        if (primary is not None and primary.saturated) or (d.pairs and not d.separated):
            return "cannot rank"
        return "can tell"

    def headline(self) -> str:
        """The verdict in one sentence."""
        words = {"too easy": "this set is too easy: a string match answers it, so it cannot rank retrievers",
                 "leaky": "this set leaks its answers into its queries",
                 "cannot rank": f"this set cannot rank these configurations at R@{self.primary_k}",
                 "can tell": f"this set can tell these configurations apart at R@{self.primary_k}, within what it "
                             "resolves"}
        return f"Can this set tell? {self.verdict}: {words[self.verdict]}."

    def as_json(self) -> dict:
        """The ``ruler --json`` document."""
        return {"verdict": self.verdict, "headline": self.headline(), "questions": self.questions,
                "phrasings": self.phrasings, "unit": "question", "configs": list(self.configs),
                "primary_k": self.primary_k, "alpha": self.alpha, "saturated": list(self.saturated),
                "headroom": [h.as_json() for h in self.headroom], "shortcuts": self.shortcuts.as_json(),
                "leakage": self.leaks.as_json(), "discrimination": self.discrimination.as_json(),
                "flagged": list(self.flagged), "problems": self.problems()}

    def section(self):
        """The report's appendix section (:class:`ragdiag.present.report.ruler.RulerSection`): these figures."""
        from ..present.report.ruler import HeadroomRow, RulerSection

        d = self.discrimination
        return RulerSection(
            verdict=self.verdict, headline=self.headline(), k=self.primary_k, questions=self.questions,
            configs=self.configs,
            headroom=tuple(HeadroomRow(h.measure, h.low, h.high, h.ceiling, h.floor, h.saturated, h.sentence())
                           for h in self.headroom),
            saturated=self.saturated, bm25=self.shortcuts.bm25, bm25_share=self.shortcuts.bm25_share,
            flagged=self.flagged,
            resolvable_points=None if d.resolvable is None else round(100 * d.resolvable, 3),
            problems=tuple(self.problems()), shortcuts=self.shortcuts.sentence(), leakage=self.leaks.sentence(),
            discrimination=d.sentence())

    def text(self) -> str:
        """What ``ruler`` prints."""
        lines = [self.headline(), "", "Headroom:"]
        lines += [f"  {h.sentence()}" for h in self.headroom]
        lines += ["", f"Shortcuts: {self.shortcuts.sentence()}"]
        if self.shortcuts.copies:
            lines.append("  copies: " + ", ".join(f"{q} ({pct(s)})" for q, _, s in self.shortcuts.copies))
        lines += ["", f"Leakage: {self.leaks.sentence()}"]
        lines += [f"  {q} ~ chunk {c} (Jaccard {s:.2f})" for q, c, s in self.leaks.near_copies]
        lines += [f"  {q} names {d} ({n!r})" for q, d, n in self.leaks.named]
        lines += ["", f"Discrimination: {self.discrimination.sentence()}"]
        return "\n".join(lines)


def _question_hits(values: np.ndarray, groups: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(configs, questions) hits summed over phrasings, and each question's phrasings."""
    _, inv = np.unique(np.asarray([str(g) for g in groups], dtype=object), return_inverse=True)
    nq = int(inv.max()) + 1 if inv.size else 0
    sums = np.zeros((values.shape[0], nq))
    for c in range(values.shape[0]):
        np.add.at(sums[c], inv, values[c])
    sizes = np.bincount(inv, minlength=nq)
    return sums, sizes


def discrimination(values, groups, *, k: int = PRIMARY_K, alpha: float = ALPHA, power: float = _POWER,
                   separated: int | None = None) -> Discrimination:
    """The family's discrimination from an outcome matrix ``values`` (configs, queries) of hits, ``groups`` its questions.

    The critical value is the all-pairs studentized max-T's (:func:`ragdiag.analyses.compare.max_t`, the
    family the Compare page reads); ``separated`` (default: counted from the same max-T) is how many pairs it
    calls different. The resolvable difference is :func:`ragdiag.analyses.compare.power.resolvable` at that
    critical value, at ``power``.

    >>> d = discrimination([[1, 1, 1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0, 0, 0]], list("abcdefgh"))
    >>> d.pairs, d.separated, d.alone  # 6 one-way questions of 8 reject; P(Bin(8, 0.805) >= 6) = 0.808
    (1, 1, 0.805)
    """
    import itertools

    from ..analyses.compare.power import resolvable
    from ..analyses.compare.simultaneous import max_t

    v = np.asarray(values, dtype=np.float64)
    g = [str(x) for x in groups]
    n = len(set(g))
    phrasings = max(1, int(max((g.count(x) for x in set(g)), default=1)))
    m = v.shape[0]
    pairs = list(itertools.combinations(range(m), 2))
    if not pairs or not n:
        r = resolvable(n, phrasings, k=k, family_size=1, alpha=alpha, power=power, critical=None) if n else None
        return Discrimination(k, m, 0, 0, n, phrasings, None, None if r is None else r.alone, None, "")
    rows, null = max_t(v, g, pairs, alpha=alpha)
    critical = float(null.critical) if len(pairs) > 1 else None
    if separated is None:  # as the Compare page: different within the family and alone (never looser than alone)
        sep = sum(r.excludes_zero and (len(pairs) == 1 or max_t(v[[r.a, r.b]], g, [(0, 1)], alpha=alpha)[0][0]
                                       .excludes_zero) for r in rows)
    else:
        sep = separated
    res = resolvable(n, phrasings, k=k, family_size=len(pairs), alpha=alpha, power=power,
                     critical=critical if critical is not None else 0.0)
    return Discrimination(k, m, len(pairs), int(sep), n, phrasings, critical, res.alone,
                          res.family if len(pairs) > 1 else res.alone, null.method)


def headroom(values, groups, *, k: int, resolvable: float | None) -> Headroom:
    """Recall at ``k`` of an outcome matrix ``values`` (configs, queries): ceiling, floor and room.

    >>> h = headroom([[1, 1, 1, 0], [1, 1, 0, 0]], ["a", "a", "b", "b"], k=20, resolvable=0.3)
    >>> h.ceiling, h.floor, h.room, h.side  # they differ on 1 query of 4; the best (0.75) is 25 points from 1
    (1, 0, 0.25, 'ceiling')
    """
    v = np.asarray(values, dtype=np.float64)
    sums, sizes = _question_hits(v, groups)
    ceiling = int(np.all(sums == sizes[None, :], axis=0).sum()) if sums.size else 0
    floor = int(np.all(sums == 0, axis=0).sum()) if sums.size else 0
    varies = (v.max(axis=0) != v.min(axis=0)) if v.size else np.zeros(0, dtype=bool)
    room = float(varies.mean()) if varies.size else 0.0
    rates = v.mean(axis=1) if v.size else np.zeros(1)
    return Headroom(k, float(rates.min()), float(rates.max()), int(sums.shape[1]), ceiling, floor, room, resolvable)


_NAME_SPLIT = re.compile(r"[\s/\\]+")


def _document_names(doc_id: str) -> list[str]:
    """What naming a document means: its file name (``svm.md``) and a distinctive stem written as it is
    (``feature_selection``: one with a separator or a digit, of five characters or more). A plain word like
    ``svm``, or "feature selection" in words, is the topic, not the document."""
    name = PurePosixPath(doc_id.replace("\\", "/")).name
    stem = name.rsplit(".", 1)[0] if "." in name else name
    out = [name.lower()] if "." in name else []
    if len(stem) >= 5 and re.search(r"[_\-0-9]", stem):
        out.append(stem.lower())
    return out


def _leaks(ev: Evaluation, mask: np.ndarray, strategy: str | None) -> Leaks:
    queries = [q for q, m in zip(ev.queries, mask) if m]
    near: list[tuple[str, str, float]] = []
    if strategy is not None and strategy in ev.indexes:
        chunks = ev.indexes[strategy].chunks
        words = [content_words(c.content) for c in chunks]
        for q in queries:
            qw = content_words(q.text)
            if not qw:
                continue
            best, where = 0.0, -1
            for i, cw in enumerate(words):
                inter = len(qw & cw)
                if inter == 0:
                    continue
                j = inter / len(qw | cw)
                if j > best:
                    best, where = j, i
            if best >= NEAR_COPY:
                near.append((q.id, chunks[where].id, round(best, 4)))
    named: list[tuple[str, str, str]] = []
    for q in queries:
        doc = ev.truth.question(q.question_id).doc_id if q.question_id else None
        if doc is None:
            continue
        text = q.text.lower()
        path = next((d.path for d in ev.corpus.documents if d.id == doc), "") or ""
        names = dict.fromkeys(_document_names(doc) + (_document_names(path) if path else []))
        for name in names:
            if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text):
                named.append((q.id, doc, name))
                break
    return Leaks(len(queries), tuple(near), tuple(named))


def _bm25_config(ev: Evaluation, configs):
    """The BM25 configuration read for the shortcut: on the default strategy when it ran, else the first."""
    bm25 = [c for c in configs if not c.external and c.retriever == "bm25"]
    if not bm25:
        bm25 = [c for c in ev.results if not c.external and c.retriever == "bm25"]
    on_default = [c for c in bm25 if c.strategy == DEFAULT_STRATEGY]
    return (on_default or bm25 or [None])[0]


def _shortcuts(ev: Evaluation, mask: np.ndarray, configs) -> Shortcuts:
    queries = [q for q, m in zip(ev.queries, mask) if m]
    cfg = _bm25_config(ev, configs)
    first = int((ev.result(cfg).needle_rank[mask] == 1).sum()) if cfg is not None else 0
    overlap, copies = [], []
    for q in queries:
        leak = leakage(q.text, ev.truth.question(q.question_id).needle)
        overlap.append(round(leak.share, 6))
        if leak.warn:
            copies.append((q.id, q.question_id, round(leak.share, 4)))
    return Shortcuts(None if cfg is None else cfg.label, first, len(queries), tuple(overlap), tuple(copies))


def ruler(ev: Evaluation, configs: Sequence | None = None, *, ks: Sequence[int] = KS, primary_k: int = PRIMARY_K,
          alpha: float = ALPHA) -> Ruler:
    """The ruler check of ``ev`` over ``configs`` (default: every configuration it ran; external runs left out).

    Parameters
    ----------
    ev : Evaluation
        One run of the configurations on the ground truth.
    configs : sequence of Config or labels, optional
        The configurations the verdicts are about (the family).
    ks : sequence of int
        The ks whose headroom is checked (the primary k among them).
    primary_k : int
        The k of the discrimination figure and of the verdict.

    Returns
    -------
    Ruler
    """
    from ..analyses.compare.best import outcome_matrix

    if primary_k < 1 or any(k < 1 for k in ks):
        raise ValueError(f"k must be at least 1; got {primary_k} and {list(ks)}")
    chosen = [ev.result(c).config for c in (configs or ev.results)]
    chosen = [c for c in chosen if not c.external]
    if not chosen:
        raise ValueError("the ruler needs at least one configuration of ragdiag's own")
    ks = sorted(set(ks) | {primary_k})
    mask = ev.in_domain
    groups = ev.groups(mask)
    n = len(set(groups))
    if n == 0:
        raise ValueError("the ground truth has no answerable questions")
    values, groups = outcome_matrix(ev, chosen, k=primary_k)
    disc = discrimination(values, groups, k=primary_k, alpha=alpha)
    rows = []
    for k in ks:
        v = values if k == primary_k else outcome_matrix(ev, chosen, k=k)[0]
        rows.append(headroom(v, groups, k=k, resolvable=disc.resolvable))
    strategy = DEFAULT_STRATEGY if any(c.strategy == DEFAULT_STRATEGY for c in chosen) else chosen[0].strategy
    return Ruler(n, disc.phrasings, tuple(c.label for c in chosen), tuple(rows), _shortcuts(ev, mask, chosen),
                 _leaks(ev, mask, strategy), disc, primary_k, alpha)


def report_section(ev: Evaluation, *, primary_k: int = PRIMARY_K):
    """The ruler of ``ev`` (every configuration of its own) as the report's appendix section, or None when it
    cannot be checked (no configuration of ragdiag's own, no answerable question)."""
    try:
        return ruler(ev, primary_k=primary_k).section()
    except ValueError:
        return None


@dataclass(frozen=True)
class GateResolution:
    """Can ``questions`` questions in ``phrasings`` phrasings detect a drop of ``margin`` (a share) in the gate?

    ``resolvable``: the smallest drop the gate's one-sided exact sign-flip test at ``alpha`` detects with 80%
    power in the most favourable case (every disagreement one way; a smaller drop cannot be detected);
    ``planned``: the questions that drop needs in the same case (what ``truth plan``'s power code says).
    """

    questions: int
    phrasings: int
    margin: float
    alpha: float
    resolvable: float | None
    planned: int | None

    @property
    def can_detect(self) -> bool:
        """Whether the margin is at least the smallest drop these questions resolve."""
        return self.resolvable is not None and self.margin >= self.resolvable - 1e-12

    def sentence(self) -> str:
        """"these 32 questions cannot detect a drop of 2 points; the plan says 167 questions" (or that they can)."""
        pts = f"{100 * self.margin:g}"
        if self.can_detect:
            return (f"these {self.questions} questions can detect a drop of {pts} points (they resolve about "
                    f"{_pts(self.resolvable)})")
        plan = ("no number of questions can (a drop of 0)" if self.margin == 0 else
                "no number of questions up to the plan's limit" if self.planned is None else
                f"{self.planned} questions")
        return f"these {self.questions} questions cannot detect a drop of {pts} points; the plan says {plan}"

    def as_json(self) -> dict:
        """The ``resolution`` object of ``gate --json`` with ``--margin``."""
        return {"questions": self.questions, "phrasings": self.phrasings, "margin": self.margin,
                "alpha": self.alpha, "resolvable": self.resolvable, "planned_questions": self.planned,
                "can_detect": self.can_detect, "sentence": self.sentence()}


def gate_resolution(questions: int, phrasings: int, margin: float, *, alpha: float = ALPHA,
                    power: float = _POWER) -> GateResolution:
    """What ``gate --margin`` checks first: can the set detect a drop of ``margin`` (see :class:`GateResolution`).

    The gate's "worse" test is one-sided at ``alpha``: the exact sign test's two-sided figures at ``2 alpha``
    (:func:`ragdiag.analyses.compare.power.resolvable_difference`, :func:`~ragdiag.analyses.compare.power.
    questions_to_resolve`), divided by the phrasings as :func:`~ragdiag.analyses.compare.power.resolvable` does.

    >>> r = gate_resolution(32, 2, 0.02)
    >>> r.can_detect, r.resolvable, r.sentence()
    (False, 0.1025, 'these 32 questions cannot detect a drop of 2 points; the plan says 167 questions')
    """
    from ..analyses.compare.power import questions_to_resolve, resolvable_difference

    if questions < 0 or phrasings < 1:
        raise ValueError(f"need questions >= 0 and at least one phrasing, got {questions}, {phrasings}")
    if not 0 <= margin < 1:
        raise ValueError(f"margin is a drop in a rate in [0, 1), e.g. 0.05; got {margin}")
    two_sided = min(2 * alpha, 0.999)
    d = resolvable_difference(questions, alpha=two_sided, power=power) if questions else None
    share = None if d is None else round(d / 100 / phrasings, 6)
    planned = questions_to_resolve(margin, phrasings, alpha=two_sided, power=power) if margin > 0 else None
    return GateResolution(questions, phrasings, margin, alpha, share, planned)
