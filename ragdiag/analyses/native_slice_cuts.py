"""``threshold --score native --by``: the slices of :mod:`ragdiag.analyses.slice_cuts` on the ranking's own score.

Which slice needs its own cut is decided on each answerable query's outcome at
the global cut (answered or not), which does not care what score the gate
reads: the slices run through the adapter of
:mod:`ragdiag.analyses.threshold.native_current` (scores mapped by rank to
distances in ``(0, 1)``, the cut half a step above its own, so a distance under the cut
exactly when ``score >= c``). What is
in the native score's units is redone here, in those units:

* the global cut is the native proposal (:func:`ragdiag.analyses.threshold.score.score_cut`);
* each slice's own cut is the native conformal cut of its own off-topic
  queries (higher keeps, 4 significant digits strictly above the reference
  score); a slice with too few off-topic queries for the guarantee has none,
  and says so;
* the verdict's sentence prints the cuts as the native export does.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core.words import cut_as_given, rate_text
from .slices import MIN_QUESTIONS
from .slice_cuts import SliceCuts, SliceVerdict, cut_slices, query_labels
from .threshold.choice import PROPOSED, Goal
from .threshold.native_current import as_gate_table
from .threshold.native_cuts import sub_table
from .threshold.score import ScoreCut, ScoreTable, score_cut

__all__ = ["native_slices", "sub_table", "native_export_block"]


def native_slices(ev, table: ScoreTable, choice: ScoreCut, by: str, *, draws: int | None = None) -> SliceCuts:
    """Each slice by ``by`` at the native proposal ``choice.cut``, its own native cut, and the verdict."""
    if choice.cut is None:
        raise ValueError(f"no global cut on the {table.score} reaches this goal ({choice.guarantee}): there is "
                         "nothing to judge the slices at")
    labels = query_labels(ev.queries, by, ev.truth)
    goal = Goal(max_bluff=choice.max_bluff)
    adapted, (cut,) = as_gate_table(table, [choice.cut])
    base = cut_slices(adapted, labels, by=by, goal=goal, cut=cut,
                      **({} if draws is None else {"draws": draws}))
    rows = []
    for r in base.rows:
        member = np.array([(labs is None and not i) or (labs is not None and r.label in labs)
                           for labs, i in zip(labels, table.in_domain)], dtype=bool)
        own = score_cut(sub_table(table, member), choice.max_bluff) if r.out_of_domain else None
        if own is None:  # no off-topic query in the slice: the words of the distance slices stand
            rows.append(replace(r, own_cut=None, answered_at_own_cut=None))
        elif own.cut is None or own.method != PROPOSED:  # no guarantee for this slice on its own
            rows.append(replace(r, own_cut=None, answered_at_own_cut=None,
                                guarantee=f"no own cut with a guarantee: {own.guarantee}"))
        else:
            rows.append(replace(r, own_cut=own.cut, guarantee=own.guarantee, answered_at_own_cut=own.answered))
    rows = tuple(rows)
    return replace(base, cut=float(choice.cut), method=choice.method, rows=rows,
                   verdict=_verdict(base.verdict, rows, by, table, choice.cut))


def _verdict(base: SliceVerdict, rows, by: str, table: ScoreTable, cut: float) -> SliceVerdict:
    """The distance slices' verdict (score-agnostic: answered at the global cut), its sentence in native units."""
    where = f"{table.score} >= {cut_as_given(cut)}"
    if base.one_cut_serves_all is None:
        return base
    small = len(rows) - base.judged
    tail = (f" {small} slice{'s' if small != 1 else ''} too small to judge (fewer than {MIN_QUESTIONS} questions, "
            "or a rest that small)." if small else "")
    family = f"simultaneous over {base.judged} slice{'s' if base.judged != 1 else ''}"
    if base.one_cut_serves_all:
        judged = [r for r in rows if r.needs_own_cut is not None]
        worst = max(judged, key=lambda r: abs(r.difference))
        return replace(base, sentence=f"One cut serves every slice by {by}: at {where} no slice's answered rate "
                                      f"differs detectably from the rest's (largest gap: `{worst.label}`, "
                                      f"{worst.difference_words}, {family})." + tail)
    by_label = {r.label: r for r in rows}
    needs = [by_label[label] for label in base.needs_own_cut]
    r = needs[0]
    sentence = (f"Slice `{r.label}` needs its own cut: answered {rate_text(r.answered)} vs "
                f"{rate_text(r.rest_answered)} elsewhere at {where}, {r.difference_words}, {family}")
    if r.own_cut is None:
        sentence += f" (its own cut has no guarantee: {r.guarantee})"
    elif r.own_cut >= cut:  # higher keeps: a higher own cut keeps less
        sentence += (f" (its own cut for the same guarantee, {cut_as_given(r.own_cut)}, answers no more: it needs "
                     f"better "
                     "retrieval, not another cut)")
    sentence += "".join(f"; so does slice `{o.label}` (answered {rate_text(o.answered)} vs "
                        f"{rate_text(o.rest_answered)} elsewhere, {o.difference_words})" for o in needs[1:])
    return replace(base, sentence=sentence + "." + tail)


def native_export_block(sliced: SliceCuts, table: ScoreTable) -> dict:
    """The native export's ``slices:`` block: each slice's own native cut that has a guarantee (kept when
    ``score >= value``); the other slices use the global cut. ``ValueError`` for a slicing a service cannot know
    before it retrieves (:meth:`ragdiag.analyses.slice_cuts.SliceCuts.export_block`)."""
    base = sliced.export_block()  # the same checks and words; the cuts rewritten in the native score
    cuts = {r.label: {"value": r.own_cut, "kept_when": f"score >= {cut_as_given(r.own_cut)}", "guarantee": r.guarantee,
                      "answerable_queries": r.answerable, "out_of_domain_queries": r.out_of_domain,
                      "answered_at_this_cut": base["cuts"][r.label]["answered_at_this_cut"]}
            for r in sliced.rows if r.own_cut is not None}
    return {**base, "score": table.score, "unit": table.unit, "direction": "higher keeps", "cuts": cuts}
