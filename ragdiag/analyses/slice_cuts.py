"""One cut per slice, or the proof that one cut serves every slice (``threshold --by``).

It sits above :mod:`ragdiag.analyses.threshold` and :mod:`ragdiag.analyses.slices` and joins the two.

A single cut can hide a slice it fails: questions in another language, one
document whose distances sit higher, short "ticket" phrasings. :func:`cut_slices`
takes the gate table of one configuration and each query's slice labels
(:func:`query_labels`), and gives, per slice:

* its answerable and off-topic query counts;
* answered and bluffs at the **global** cut (the proposal for the goal), each
  with its interval (answered over questions, clustered Wilson; bluffs Wilson);
* the slice's **own** conformal cut for the same bluff goal, computed from its
  own off-topic queries, with its guarantee in words, or, when the slice has too
  few off-topic queries for any guarantee, that sentence instead of a number.

Then one verdict, decided with the machinery of :mod:`ragdiag.analyses.slices`:
each slice's answered rate at the global cut minus the rest's, with an interval
simultaneous over the slices (permutation max-T, :mod:`ragdiag.analyses.slices`). A slice
*needs its own cut* exactly when that interval excludes 0; when none does, one
cut serves every slice. The verdict reads answered only: the bluff side of a
slice is what its own cut (and its guarantee) is for.

Off-topic queries and slices (:data:`OOD_RULE`): by ``tag`` an off-topic query
is in the slices of its own tags; by ``language`` in the slice of its own
detected language; by ``doc`` and ``phrasing`` it has no label (it is the answer
to no document and has no phrasing), so it counts on the bluff side of *every*
slice, and a slice's own cut is then the global conformal cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core.defaults import SEED
from ..core.gate import cut_text
from ..core.words import rate_text
from ..evaluation.rows import RateCell
from .gate_table import GateTable
from .threshold.choice import Goal, _subset, conformal_cut, propose_cut
from .threshold.rates import rates_at

__all__ = ["BY", "EXPORTABLE", "OOD_RULE", "DETECTOR", "query_labels", "SliceCut", "SliceVerdict", "SliceCuts",
           "cut_slices", "choose_by"]

#: What ``threshold --by`` slices by.
BY = ("tag", "language", "doc", "phrasing")
#: What a per-slice cut can be exported for: a label a service knows before it retrieves (a tag, a language).
EXPORTABLE = ("tag", "language")
#: How each query's language is had (the truth has no language field): stated in every output.
DETECTOR = ("detected per query by ragdiag.core.language.detect_language: the script, then common function words "
            "of en, de, fr, es, it, nl, pt ('und' when undetermined)")
#: Which slices an off-topic query counts in, per ``by``.
OOD_RULE = {
    "tag": "an off-topic query counts in the slices of its own tags (none: in no slice)",
    "language": "an off-topic query counts in the slice of its own detected language",
    "doc": ("an off-topic query is the answer to no document: it counts on the bluff side of every doc slice, so a "
            "doc slice's own cut is the global conformal cut"),
    "phrasing": ("an off-topic query has no phrasing: it counts on the bluff side of every phrasing slice, so a "
                 "phrasing slice's own cut is the global conformal cut"),
}
_UNIT = {"tag": "questions tagged", "doc": "questions on", "language": "queries in", "phrasing": "queries phrased"}


def query_labels(queries, by: str, truth=None) -> tuple[tuple[str, ...] | None, ...]:
    """Each query's slice labels by ``by`` (answerable and off-topic, in order); ``None``: in every slice.

    Answerable queries as :func:`ragdiag.analyses.slices.slice_labels`; off-topic
    ones by :data:`OOD_RULE`.

    >>> from ragdiag.documents.truth import Query
    >>> qs = [Query("q1:en", "How do I oil a chain?", "en", "q1"), Query("o1", "Wie alt ist der Mond?", "ood")]
    >>> query_labels(qs, "language"), query_labels(qs, "phrasing")
    ((('en',), ('de',)), (('en',), None))
    """
    from .slices import slice_labels
    from ..core.language import detect_language

    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}, got {by!r}")
    inside = iter(slice_labels([q for q in queries if q.in_domain], by, truth=truth))
    out = []
    for q in queries:
        if q.in_domain:
            out.append(tuple(next(inside)))
        elif by == "tag":
            out.append(tuple(q.tags))
        elif by == "language":
            out.append((detect_language(q.text),))
        else:
            out.append(None)
    return tuple(out)


@dataclass(frozen=True)
class SliceCut:
    """One slice: its counts, answered and bluffs at the global cut, its own cut, and the slice against the rest."""

    label: str
    questions: int
    answerable: int  # queries
    out_of_domain: int  # queries
    answered: RateCell  # at the global cut
    bluffs: RateCell  # at the global cut (rate None: no off-topic query in the slice)
    rest_answered: RateCell  # every other answerable query, at the global cut
    own_cut: float | None  # the slice's conformal cut for the goal (None: no guarantee possible)
    guarantee: str  # the guarantee of own_cut in words, or why there is none
    answered_at_own_cut: RateCell | None
    difference: float  # answered minus the rest's (nan: not judged)
    low: float  # simultaneous interval of the difference (nan: not judged)
    high: float
    verdict: str  # worse | better | no detectable difference | too few questions | too few in the rest
    difference_words: str  # "34 points under the rest (−55 to −12)", or "-"

    @property
    def needs_own_cut(self) -> bool | None:
        """Whether the slice's simultaneous interval excludes 0 (``None``: too few questions to judge)."""
        if self.verdict.startswith("too few"):
            return None
        return self.verdict in ("worse", "better")

    def cells(self) -> dict:
        """The slice as JSON (``threshold --by ... --json``'s ``slices[]``)."""
        return {"slice": self.label, "questions": self.questions, "answerable": self.answerable,
                "out_of_domain": self.out_of_domain, "answered": self.answered.cells(), "bluffs": self.bluffs.cells(),
                "rest_answered": self.rest_answered.cells(), "own_cut": self.own_cut, "guarantee": self.guarantee,
                "answered_at_own_cut": None if self.answered_at_own_cut is None else self.answered_at_own_cut.cells(),
                "against_the_rest": {"difference": _finite(self.difference), "low": _finite(self.low),
                                     "high": _finite(self.high), "simultaneous": True},
                "verdict": self.verdict, "needs_own_cut": self.needs_own_cut}


def _finite(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


@dataclass(frozen=True)
class SliceVerdict:
    """One cut serves every slice, or which slices need their own; the sentence carries the deciding interval."""

    one_cut_serves_all: bool | None  # None: no slice has the questions a verdict needs
    sentence: str
    needs_own_cut: tuple[str, ...]
    judged: int  # slices with a verdict: the family the simultaneous intervals cover

    def cells(self) -> dict:
        """The verdict as JSON."""
        from .slices import SIMULTANEOUS_WORDS

        return {"one_cut_serves_all": self.one_cut_serves_all, "sentence": self.sentence,
                "needs_own_cut": list(self.needs_own_cut), "judged_slices": self.judged,
                "method": "answered at the global cut: " + SIMULTANEOUS_WORDS}


@dataclass(frozen=True)
class SliceCuts:
    """Every slice by ``by`` at the global ``cut``, each slice's own cut, and the verdict."""

    by: str
    cut: float
    method: str  # how the global cut was had (the proposal's method, or "given")
    goal: Goal
    rows: tuple[SliceCut, ...]
    verdict: SliceVerdict
    labels_from: str  # how a query got its labels (the language detector, the truth's tags, ...)
    ood_rule: str

    def as_json(self) -> dict:
        """``{by, cut, labels_from, off_topic_queries, slices: [...], verdict: {...}}``."""
        return {"by": self.by, "cut": self.cut, "cut_method": self.method, "labels_from": self.labels_from,
                "off_topic_queries": self.ood_rule, "slices": [r.cells() for r in self.rows],
                "verdict": self.verdict.cells()}

    def export_block(self) -> dict:
        """The export's ``slices:`` block: each slice's own cut that has a guarantee; the others use the global cut.

        ``ValueError`` when ``by`` is not :data:`EXPORTABLE` (a service cannot
        know a query's document or phrasing before it retrieves).
        """
        if self.by not in EXPORTABLE:
            raise ValueError(f"per-slice cuts can be exported by {' or '.join(EXPORTABLE)} only (a service knows a "
                             f"query's tag or language before it retrieves, not its {self.by})")
        cuts = {r.label: {"cosine_distance": r.own_cut, "cosine_similarity": round(1.0 - r.own_cut, 12),
                          "guarantee": r.guarantee, "answerable_queries": r.answerable,
                          "out_of_domain_queries": r.out_of_domain,
                          "answered_at_this_cut": _plain(r.answered_at_own_cut)}
                for r in self.rows if r.own_cut is not None}
        without = {r.label: r.guarantee for r in self.rows if r.own_cut is None}
        return {"by": self.by, "labels_from": self.labels_from,
                "rule": "a query whose slice is listed under cuts uses that cut; every other query uses the cut above",
                "cuts": cuts, "without_own_cut": without, "verdict": self.verdict.sentence}


def _plain(cell: RateCell | None) -> dict | None:
    return None if cell is None else {k: (float(f"{v:.10g}") if isinstance(v, float) else v)
                                      for k, v in cell.cells().items()}


def _labels_from(by: str) -> str:
    return {"tag": "the ground truth's tags", "language": DETECTOR, "doc": "the document holding the answer",
            "phrasing": "the ground truth's phrasing names"}[by]


def _no_ood_words(by: str, label: str) -> str:
    what = {"tag": f" tagged `{label}`", "language": f" in `{label}`"}.get(by, "") if label != "und" else ""
    return f"no off-topic query in this slice: its own cut cannot be certified (add off-topic queries{what})"


def cut_slices(table: GateTable, labels: Sequence[tuple[str, ...] | None], *, by: str, goal: Goal,
               cut: float | None = None, draws: int | None = None, seed: int = SEED) -> SliceCuts:
    """Each slice at the global cut, its own conformal cut, and whether one cut serves every slice.

    Parameters
    ----------
    table : GateTable
        One configuration's gate table.
    labels : sequence
        Each query's slice labels, in the table's order (:func:`query_labels`); ``None`` for an off-topic
        query that counts in every slice.
    by : str
        One of :data:`BY` (names the slices in words).
    goal : Goal
        A bluff goal (``max_bluff``): the global cut is its proposal and each slice's own cut its conformal cut.
    cut : float, optional
        The global cut to judge the slices at, instead of the proposal.

    Examples
    --------
    Twelve questions in two languages of six: ``en`` answers only above 0.8,
    ``de`` under 0.5; ten off-topic queries, three in ``de`` (too few for a 20% guarantee: it takes 4) and seven
    in ``en``:

    >>> inside = np.r_[np.full(6, 0.4), np.full(6, 0.85)]
    >>> ood = np.r_[np.full(3, 0.6), np.full(7, 0.95)]
    >>> t = GateTable(tuple(f"q{i}" for i in range(12)) + tuple(f"o{i}" for i in range(10)),
    ...               np.r_[np.ones(12, bool), np.zeros(10, bool)], closest=np.r_[inside, ood],
    ...               closest_holder=np.r_[inside, np.full(10, np.inf)], window=4)
    >>> s = cut_slices(t, [("de",)] * 6 + [("en",)] * 6 + [("de",)] * 3 + [("en",)] * 7, by="language",
    ...                goal=Goal(max_bluff=0.2))
    >>> s.cut, [(r.label, r.answered.count, r.own_cut) for r in s.rows]
    (0.6, [('en', 0, 0.95), ('de', 6, None)])
    >>> print(s.verdict.sentence)
    Slice `en` needs its own cut: answered 0% (0–46) vs 100% (54–100) elsewhere at cut 0.600, 100 points under the rest (−100 to −33), simultaneous over 2 slices; so does slice `de` (answered 100% (54–100) vs 0% (0–46) elsewhere, 100 points over the rest (+33 to +100)).
    >>> s.verdict.one_cut_serves_all, s.verdict.needs_own_cut
    (False, ('en', 'de'))
    """
    from .compare.intervals import clustered_rate
    from .slices import DRAWS, MIN_QUESTIONS, slice_table

    if goal.max_bluff is None:
        raise ValueError("a slice's own cut is its conformal cut for a bluff goal: state the goal as max_bluff")
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}, got {by!r}")
    n = len(table.query_ids)
    if len(labels) != n:
        raise ValueError(f"labels must have one entry per query of the table ({n}), got {len(labels)}")
    if cut is None:
        p = propose_cut(table, goal)
        if p.cut is None:
            raise ValueError(f"no global cut reaches this goal on this set ({p.guarantee or p.method}): there is "
                             "nothing to judge the slices at")
        cut, method = float(p.cut), p.method
    else:
        method = "given"
    ind = table.in_domain
    groups = np.asarray(table.group_ids(), dtype=object)
    answered = table.answered(cut)
    in_labels = [labels[i] or () for i in np.flatnonzero(ind)]
    names = sorted({lab for labs in in_labels for lab in labs})
    if not names:
        raise ValueError({"tag": "no question has a tag: add \"tags\": [\"...\"] to the ground truth's questions to "
                                 "slice by tag"}.get(by, f"no answerable query has a {by}: nothing to slice"))
    versus = {r.label: r for r in slice_table(answered[ind].astype(float), groups[ind], in_labels, by=by,
                                              draws=DRAWS if draws is None else draws, seed=seed).rows}
    rows = []
    for name in names:
        member = np.array([(labs is None and not i) or (labs is not None and name in labs)
                           for labs, i in zip(labels, ind)], dtype=bool)
        sub = _subset(table, member)
        at = rates_at(sub, cut)
        rest = ind & ~member
        rest_cell = RateCell.of(clustered_rate(answered[rest], groups[rest].tolist()))
        if sub.n_ood == 0:
            own, words = None, _no_ood_words(by, name)
        else:
            own, words = conformal_cut(sub, goal.max_bluff)
            if own is not None:
                words = words.split(": ", 1)[1]
        own_at = None if own is None else rates_at(sub, own)["answered"]
        v = versus[name]
        judged = not v.verdict.startswith("too few")
        rows.append(SliceCut(name, v.questions, int(sub.n_answerable), int(sub.n_ood), at["answered"], at["bluffs"],
                             rest_cell, own, words, own_at, v.difference, v.low, v.high, v.verdict,
                             v.difference_words() if judged else "-"))
    rows.sort(key=lambda r: (r.answered.rate if r.answered.rate is not None else 2.0, r.label))
    return SliceCuts(by, float(cut), method, goal, tuple(rows), _verdict(rows, by, cut, MIN_QUESTIONS),
                     _labels_from(by), OOD_RULE[by])


def _verdict(rows: Sequence[SliceCut], by: str, cut: float, min_questions: int) -> SliceVerdict:
    judged = [r for r in rows if r.needs_own_cut is not None]
    m = len(judged)
    small = len(rows) - m
    tail = (f" {small} slice{'s' if small != 1 else ''} too small to judge (fewer than {min_questions} questions, "
            f"or a rest that small)." if small and m else "")
    if not judged:
        return SliceVerdict(None, f"Cannot tell whether one cut serves every slice: none of the {len(rows)} slices "
                                  f"by {by} has the {min_questions} questions (and a rest as large) a verdict needs.",
                            (), 0)
    family = f"simultaneous over {m} slice{'s' if m != 1 else ''}"
    needs = sorted((r for r in judged if r.needs_own_cut), key=lambda r: r.difference)
    if needs:
        r = needs[0]
        sentence = (f"Slice `{r.label}` needs its own cut: answered {rate_text(r.answered)} vs "
                    f"{rate_text(r.rest_answered)} elsewhere at cut {cut_text(cut)}, {r.difference_words}, {family}")
        if r.own_cut is None:
            sentence += f" (its own cut has no guarantee: {r.guarantee})"
        elif cut >= r.own_cut:  # its own cut is the same or stricter
            sentence += (f" (its own cut for the same guarantee, {cut_text(r.own_cut)}, answers no more: it needs "
                         "better retrieval, not another cut)")
        sentence += "".join(f"; so does slice `{o.label}` (answered {rate_text(o.answered)} vs "
                            f"{rate_text(o.rest_answered)} elsewhere, {o.difference_words})" for o in needs[1:])
        return SliceVerdict(False, sentence + "." + tail, tuple(r.label for r in needs), m)
    worst = max(judged, key=lambda r: abs(r.difference))
    return SliceVerdict(True, f"One cut serves every slice by {by}: at cut {cut_text(cut)} no slice's answered rate "
                              f"differs detectably from the rest's (largest gap: {_UNIT[by]} `{worst.label}`, "
                              f"{worst.difference_words}, {family})." + tail, (), m)


def choose_by(queries) -> str:
    """The slicing a page shows without asking: ``language`` when the queries have 2 or more, else ``tag`` when
    the truth has tags, else ``doc`` (fixed by the ground truth, never re-picked after looking at the results).

    >>> from ragdiag.documents.truth import Query
    >>> choose_by([Query("a:x", "How do I oil a chain?", "x", "a"), Query("b:x", "Wie öle ich die Kette?", "x", "b")])
    'language'
    """
    from ..core.language import detect_language

    inside = [q for q in queries if q.in_domain]
    langs = {detect_language(q.text) for q in inside} - {"und"}
    if len(langs) >= 2:
        return "language"
    if any(q.tags for q in inside):
        return "tag"
    return "doc"
