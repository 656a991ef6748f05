"""A plan for the ground truth: how many more questions a decision needs, and where to write them.

How many (:func:`plan`), from the test the decision actually uses:

* ``versus`` (CONFIG against CONFIG2, the question ``compare`` answers): the
  exact power of the sign-flip test over questions at the observed discordance
  (:mod:`ragdiag.authoring.sizing`), with the range over the discordance's 95%
  interval;
* ``best`` (the comparison with the best over the configurations shown): the
  most favourable case of :func:`ragdiag.analyses.compare.power.questions_to_resolve`
  at ``alpha / (m - 1)`` (Bonferroni over the ``m - 1`` comparisons with the
  best, which the family's max-T never needs more than), a lower bound;
* ``gate`` (CONFIG as the candidate against the declared baseline, the
  regression gate's non-inferiority test): the questions that would decide it at
  the same mix of differences (:func:`ragdiag.present.regression.stats.paired_gate`).

Where (:func:`where_to_write`), one line per place, each with a count and the reason,
the counts adding up to the questions needed:

1. the sections where the two configurations disagree (one more question per
   disagreement seen there: the difference is made there);
2. the sections of hub chunks of CONFIG that displaced answers (one per
   displaced question, at most 3 per hub);
3. the rest spread over the sections in proportion to their size, counting the
   questions already there (D'Hondt: the next question goes to the section with
   the most characters per question, sections that no needle covers first among
   equals; a section needs a sentence of needle length to take one).

The sections no needle covers are listed whole (``uncovered``), and the slices
(phrasings) with the widest recall interval are named (``slices``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.defaults import ALPHA, PRACTICAL_MARGIN, PRIMARY_K
from ..documents.corpus import Corpus
from ..documents.truth import NEEDLE_MAX, NEEDLE_MIN, GroundTruth, needle_length
from .sizing import SIZING_STEPS, Sizing, size_for
from ..core.words import interval, pct

__all__ = ["Place", "Plan", "PlanStep", "plan", "where_to_write", "uncovered_sections", "DECISIONS", "HUB_LINES"]

#: What a plan can be for: one pair (``versus``), the best set (``best``), the regression gate (``gate``).
DECISIONS = ("versus", "best", "gate")
#: Most hub lines in a plan.
HUB_LINES = 3


@dataclass(frozen=True)
class Place:
    """Write ``count`` questions in ``doc`` > ``section`` (``start``: the section's offset), because ``reason``.

    ``kind``: ``disagree``, ``hub``, ``uncovered`` (no needle there yet) or ``size`` (more for its share).
    """

    doc: str
    section: str
    count: int
    reason: str
    kind: str
    start: int = 0

    def as_json(self) -> dict:
        """``{doc, section, count, reason, kind}``."""
        return {"doc": self.doc, "section": self.section, "count": self.count, "reason": self.reason,
                "kind": self.kind}

    def line(self) -> str:
        """``12 in linear_model > Ridge regression: no question yet; 4.1% of the corpus``."""
        return f"{self.count} in {self.doc} > {self.section or '(preamble)'}: {self.reason}"


@dataclass(frozen=True)
class Plan:
    """How many more questions ``decision`` needs (``needed``; None: no number up to the limit) and where."""

    config: str
    versus: str | None
    decision: str
    k: int
    margin: float
    now: int
    needed: int | None
    test: str
    basis: str  # the numbers the count rests on, in words
    where: tuple[Place, ...]
    uncovered: tuple[tuple[str, str], ...]
    slices: tuple[str, ...] = ()
    sizing: Sizing | None = None
    range: tuple[int | None, int | None] | None = None  # more questions needed at the ends of the uncertainty
    notes: tuple[str, ...] = field(default=())

    def headline(self, *, quote: str = "`") -> str:
        """"Write 46 more questions: 12 in `linear_model`, 8 in `svm`, ..." (per document, most first); ``quote``:
        what a document's name is written between (the dashboard, whose text is escaped, passes ``""``)."""
        if self.needed is None:
            return (f"No number of questions up to the limit decides this ({self.test}); {self.basis}.")
        if self.needed == 0:
            return f"The {self.now} questions are enough to decide it ({self.test})."
        per_doc: Counter = Counter()
        for p in self.where:
            per_doc[p.doc] += p.count
        docs = ", ".join(f"{n} in {quote}{d}{quote}" for d, n in sorted(per_doc.items(), key=lambda x: (-x[1], x[0])))
        fav = None if self.sizing is None or self.sizing.favourable is None else \
            max(0, self.sizing.favourable - self.now)
        second = "" if fav is None or fav == self.needed else \
            f" (the worst case the discordance's interval allows; {fav} at the discordance seen, the favourable case)"
        return f"Write {self.needed} more questions{second}: {docs}."

    def as_json(self) -> dict:
        """The ``truth plan --json`` object: ``questions_needed``, ``now``, ``where[{doc, section, count, reason}]``."""
        return {"config": self.config, "versus": self.versus, "decide": self.decision, "k": self.k,
                "margin": self.margin, "now": self.now, "questions_needed": self.needed,
                "questions_needed_range": None if self.range is None else list(self.range),
                "test": self.test, "basis": self.basis, "where": [p.as_json() for p in self.where],
                "uncovered": [{"doc": d, "section": s} for d, s in self.uncovered],
                "slices": list(self.slices), "sizing": None if self.sizing is None else self.sizing.as_json(),
                "notes": list(self.notes)}

    def text(self) -> str:
        """The plain-text plan ``truth plan`` prints."""
        lines = [self.headline(), f"how many: {self.basis}", f"test: {self.test}"]
        if self.where:
            lines += ["", "where:"] + [f"  {p.line()}" for p in self.where]
        lines += ["", f"sections no needle covers ({len(self.uncovered)}):"]
        lines += [f"  {d} > {s or '(preamble)'}" for d, s in self.uncovered] or ["  none"]
        if self.slices:
            lines += ["", "slices:"] + [f"  {s}" for s in self.slices]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _section_index(corpus: Corpus, doc_id: str, offset: int) -> int:
    doc = corpus.document(doc_id)
    for i, s in enumerate(doc.sections):
        if s.start <= offset < s.end:
            return i
    return len(doc.sections) - 1


def uncovered_sections(corpus: Corpus, truth: GroundTruth) -> list[tuple[str, str]]:
    """``(doc_id, section title)`` of every section (corpus order) in which no needle starts."""
    covered = {(q.doc_id, _section_index(corpus, q.doc_id, q.start)) for q in truth.questions}
    return [(d.id, s.title) for d in corpus.documents for i, s in enumerate(d.sections) if (d.id, i) not in covered]


def _writable(corpus: Corpus) -> set[tuple[str, int]]:
    """Sections holding at least one sentence of needle length (where a question can be written)."""
    from .text import document_sentences

    out = set()
    for d in corpus.documents:
        for s in document_sentences(d):
            if NEEDLE_MIN <= needle_length(s.text) <= NEEDLE_MAX:
                out.add((d.id, _section_index(corpus, d.id, s.start)))
    return out


def where_to_write(corpus: Corpus, truth: GroundTruth, total: int, *,
                   disagreements: Counter | None = None, versus_words: str = "",
                   hubs: list[tuple[str, int, str, int]] = ()) -> list[Place]:
    """Spread ``total`` new questions: disagreements first, then hubs, then by size (see the module docstring).

    Parameters
    ----------
    disagreements : Counter, optional
        ``(doc_id, section index) -> questions on which the two configurations disagree``.
    versus_words : str
        ``"E/hybrid and F/hybrid"``, for the reason.
    hubs : list of ``(doc_id, section index, chunk words, displaced questions)``.
    """
    if total < 0:
        raise ValueError(f"total must be 0 or more questions, got {total}")
    now: Counter = Counter((q.doc_id, _section_index(corpus, q.doc_id, q.start)) for q in truth.questions)
    sections = {(d.id, i): s for d in corpus.documents for i, s in enumerate(d.sections)}
    size_all = sum(s.end - s.start for s in sections.values()) or 1
    given: Counter = Counter()
    places: list[Place] = []
    left = total
    for key, n_dis in sorted((disagreements or Counter()).items(), key=lambda x: (-x[1], x[0])):
        if left <= 0:
            break
        c = min(n_dis, left)
        s = sections[key]
        places.append(Place(key[0], s.title, c, f"{versus_words} disagree on {n_dis} of its {now[key]} "
                                                f"question{'s' * (now[key] != 1)}: the difference is made here",
                            "disagree", s.start))
        given[key] += c
        left -= c
    for doc_id, idx, words, displaced in list(hubs)[:HUB_LINES]:
        if left <= 0:
            break
        c = min(displaced, 3, left)
        s = sections[(doc_id, idx)]
        places.append(Place(doc_id, s.title, c, f"a hub chunk ({words}) sat above the answer of {displaced} "
                                                "question(s): questions near it test whether it crowds them out",
                            "hub", s.start))
        given[(doc_id, idx)] += c
        left -= c
    writable = _writable(corpus)
    order = [k for k in sections if k in writable]
    extra: Counter = Counter()
    for _ in range(left):
        if not order:
            break
        # D'Hondt on characters per question; ties: a section with no needle yet, then corpus order
        key = max(order, key=lambda k: ((sections[k].end - sections[k].start) / (now[k] + given[k] + extra[k] + 1),
                                        now[k] == 0, -order.index(k)))
        extra[key] += 1
    for key in order:
        if extra[key]:
            s = sections[key]
            share = (s.end - s.start) / size_all
            reason = (f"no question yet; {pct(share, 1)} of the corpus" if now[key] == 0 else
                      f"{now[key]} question{'s' * (now[key] != 1)} for {pct(share, 1)} of the corpus")
            places.append(Place(key[0], s.title, extra[key], reason, "uncovered" if now[key] == 0 else "size",
                                s.start))
    return places


def _hits(ev, config: str, k: int) -> np.ndarray:
    from ..core.metrics import hits_at_k

    return hits_at_k(ev.result(config).needle_rank, k).astype(np.float64)


def _slices(ev, config: str, k: int) -> tuple[str, ...]:
    """Per phrasing (a language, when phrasings are languages): R@k with its interval, widest first."""
    from ..analyses.compare.intervals import clustered_share

    hits = _hits(ev, config, k)
    rows = []
    for p in ev.truth.phrasings:
        mask = ev.mask(p)
        if mask.any():
            iv = clustered_share(hits[mask], ev.groups(mask))
            rows.append((iv.high - iv.low, p, iv))
    rows.sort(key=lambda r: (-r[0], r[1]))
    return tuple(f"phrasing {p!r}: R@{k} of {config} {interval(iv.estimate, iv.low, iv.high)}, "
                 f"{100 * w:.0f} points wide{'; the widest: every new question needs it' if i == 0 else ''}"
                 for i, (w, p, iv) in enumerate(rows))


def _disagreements(ev, a: str, b: str, k: int) -> Counter:
    corpus = ev.corpus
    ha, hb = _hits(ev, a, k), _hits(ev, b, k)
    per_q: dict[str, float] = {}
    for q, x, y in zip(ev.queries, ha, hb):
        if q.question_id is not None:
            per_q[q.question_id] = per_q.get(q.question_id, 0.0) + x - y
    out: Counter = Counter()
    for qid, d in per_q.items():
        if d != 0:
            q = ev.truth.question(qid)
            out[(q.doc_id, _section_index(corpus, q.doc_id, q.start))] += 1
    return out


def _hub_places(ev, config: str, k: int) -> list[tuple[str, int, str, int]]:
    from ..analyses.hubs import hubs

    out = []
    for h in hubs(ev, config, k=k, only_hubs=True):
        questions = {qid.split(":")[0] for qid in h.displaced}
        if questions:
            chunk = ev.indexes[ev.result(config).config.strategy].chunks[h.position]
            words = " ".join(h.preview.split()[:6])
            out.append((h.doc_id, _section_index(ev.corpus, h.doc_id, chunk.start), f"“{words}…”", len(questions)))
    out.sort(key=lambda x: -x[3])
    return out


@dataclass(frozen=True)
class PlanStep:
    """``done`` of ``total`` steps of :func:`plan`; ``words``: the step just finished, in words.

    >>> PlanStep(1, 7, "sized at the disagreement seen").fraction
    0.14285714285714285
    """

    done: int
    total: int
    words: str

    @property
    def fraction(self) -> float:
        """The share done, in [0, 1]."""
        return min(1.0, self.done / self.total) if self.total else 1.0


#: The steps of :func:`plan` after its sizing, in order (the sizing's own are counted by its callback).
_PLAN_STEPS = ("hubs crowding the answers", "questions drafted from the needle", "where to write")
_SIZING_WORDS = ("sized at the disagreement seen", "sized at the low end of its interval",
                 "sized at the high end of its interval", "power of the planned number")


def plan(ev, config: str, *, versus: str | None = None, decide: str = "versus", baseline: str | None = None,
         k: int = PRIMARY_K, margin: float = PRACTICAL_MARGIN, alpha: float = ALPHA, power: float = 0.8,
         progress: Callable[[PlanStep], None] | None = None) -> Plan:
    """How many more questions the decision needs and where to write them (see the module docstring).

    Parameters
    ----------
    ev : Evaluation
        A run holding ``config`` (and ``versus``, or the configurations of ``best``, or ``baseline``).
    decide : {"versus", "best", "gate"}
        The decision: this pair (needs ``versus``), the best set, the regression gate (needs ``baseline``).
    margin : float
        The difference in recall worth detecting (best, versus) or the gate's non-inferiority margin.
    progress : callable, optional
        Called with a :class:`PlanStep` after each step (the exact powers of ``versus`` take seconds each on a
        set of hundreds of questions): a page's progress bar counts them.
    """
    from ..analyses.compare.paired import question_differences

    if decide not in DECISIONS:
        raise ValueError(f"decide must be one of {', '.join(DECISIONS)}; got {decide!r}")
    total = (SIZING_STEPS if decide == "versus" else 1) + len(_PLAN_STEPS)
    steps = iter(_SIZING_WORDS) if decide == "versus" else iter((f"sized for the {decide} decision",))
    count = [0]

    def done(words: str | None = None) -> None:
        count[0] += 1
        if progress is not None:
            progress(PlanStep(count[0], total, words if words is not None else next(steps)))

    if not 0 < margin < 1:
        raise ValueError(f"margin is a difference in recall in (0, 1), e.g. 0.05; got {margin}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    cfg = ev.result(config).config.label
    mask = ev.in_domain
    groups = ev.groups(mask)
    phrasings = max(1, len(ev.truth.phrasings))
    now = len(ev.truth.questions)
    notes: list[str] = []
    sizing = None
    rng = None
    if decide == "versus":
        if versus is None:
            raise ValueError("name the other configuration (--versus CONFIG2), or --decide best|gate")
        other = ev.result(versus).config.label
        if other == cfg:
            raise ValueError(f"--versus names {cfg} itself; name another configuration")
        d = question_differences(_hits(ev, cfg, k)[mask], _hits(ev, other, k)[mask], groups)
        sizing = size_for(d.astype(int), phrasings, margin=margin, alpha=alpha, power=power, step=done)
        needed = sizing.needed
        alt = sizing.alternative
        lo_psi, hi_psi = sizing.discordance_interval
        rng = (None if sizing.low is None else max(0, sizing.low - now),
               None if sizing.high is None else max(0, sizing.high - now))
        disc = (f"{sizing.discordant} of {now} questions disagree ({pct(sizing.discordant / max(now, 1))}, "
                f"95% interval {pct(lo_psi)}–{pct(hi_psi)})")
        model = (f"planned at {pct(alt.discordance)}, the least that can make {100 * margin:g} points, every "
                 "disagreement one way" if alt.one_way else
                 f"a {100 * margin:g}-point difference at that discordance is {pct(alt.theta)} of the disagreements "
                 f"going to {cfg}")
        power_words = "" if sizing.power is None else f" (power {pct(sizing.power, 1)})"
        span = "" if rng is None else (f"; {rng[0]}–{rng[1] if rng[1] is not None else 'over the limit'} more over "
                                       "the discordance's interval")
        fav = sizing.favourable
        second = ("" if fav is None or fav == sizing.planned else
                  f"; at the observed {pct(sizing.discordant / max(now, 1))} (the favourable case) "
                  f"{max(0, fav - now)} more would do")
        basis = (f"{disc}; worst case first, at the upper end of that interval ({pct(hi_psi)}): {model}; "
                 f"{sizing.planned} questions{power_words} in {phrasings} phrasing(s) detect "
                 f"{100 * margin:g} points {pct(power)} of the time{second}{span}")
        test = (f"{cfg} vs {other} at R@{k}: exact two-sided sign-flip test over questions at alpha {alpha:g}, "
                "this pair alone (compare)")
        dis = _disagreements(ev, cfg, other, k)
        words = f"{cfg} and {other}"
    elif decide == "best":
        from ..analyses.compare import best
        from ..analyses.compare.power import questions_to_resolve

        res = best(ev, k=k, configs=[c for c in ev.results if not c.external], alpha=alpha)
        m = len(res.rows) - 1
        if m < 1:
            raise ValueError("the best set needs at least two configurations in the run")
        planned = questions_to_resolve(margin, phrasings, alpha=alpha / m, power=power)
        needed = None if planned is None else max(0, planned - now)
        other = res.best if res.best != cfg else next(r.config for r in sorted(res.rows, key=lambda r: -r.mean)
                                                       if r.config != cfg)
        basis = (f"{planned} questions in {phrasings} phrasing(s) tell {100 * margin:g} points from the best within "
                 f"the {m} comparisons with it, in the most favourable case (every disagreement one way): a lower "
                 f"bound; the best now is {res.best}, {len(res.best_set)} of {len(res.rows)} are tied with it")
        test = (f"comparison with the best over {len(res.rows)} configurations at R@{k}: exact sign-flip test at "
                f"alpha {alpha:g}/{m} (Bonferroni, which the family's max-T never needs more than)")
        dis = _disagreements(ev, cfg, other, k)
        words = f"{cfg} and {other}"
        versus = other
    else:
        from ..present.regression.stats import paired_gate

        if baseline is None:
            raise ValueError("the gate compares CONFIG with the baseline you run today: pass --baseline CONFIG2")
        base = ev.result(baseline).config.label
        if base == cfg:
            raise ValueError(f"--baseline names {cfg} itself; name what you run today")
        g = paired_gate(_hits(ev, base, k)[mask], _hits(ev, cfg, k)[mask], groups, margin=margin, alpha=alpha)
        if g.verdict != "inconclusive":
            needed = 0
            basis = f"the gate already says {g.verdict} with {now} questions"
        else:
            needed = None if g.needed is None else max(0, g.needed - now)
            basis = (f"the gate is inconclusive ({g.wins} better, {g.losses} worse, {g.ties} unchanged); at the "
                     f"same mix about {g.needed} questions would decide it ({g.needed_verdict})"
                     if g.needed is not None else
                     "the gate is inconclusive and no number of questions up to its limit decides it at the same mix")
        test = (f"regression gate, {cfg} (candidate) against {base} (baseline) at R@{k}: one-sided sign-flip test "
                f"(worse) and score test of non-inferiority at a {100 * margin:g}-point margin, alpha {alpha:g}")
        dis = _disagreements(ev, cfg, base, k)
        words = f"{cfg} and {base}"
        versus = base
    if decide != "versus":
        done()
    try:
        hub_list = _hub_places(ev, cfg, k)
    except ValueError as exc:  # an external run has no chunks of ours
        hub_list = []
        notes.append(str(exc))
    from ..analyses.compare.sources import source_effect

    done(_PLAN_STEPS[0])
    drafted = source_effect(ev, k=k, alpha=alpha)
    if drafted is not None:
        notes.append(drafted.sentence())
    done(_PLAN_STEPS[1])
    where = where_to_write(ev.corpus, ev.truth, needed or 0, disagreements=dis, versus_words=words, hubs=hub_list)
    done(_PLAN_STEPS[2])
    return Plan(cfg, versus, decide, k, margin, now, needed, test, basis, tuple(where),
                tuple(uncovered_sections(ev.corpus, ev.truth)), _slices(ev, cfg, k), sizing, rng, tuple(notes))
