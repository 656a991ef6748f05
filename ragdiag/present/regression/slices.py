"""``gate --by tag``: the recall check per tagged slice too, corrected over the slices.

An aggregate that rises can hide one slice that collapsed. For every tag carried
by at least :data:`~ragdiag.analyses.slices.MIN_QUESTIONS` questions, the
recall at the primary k of that slice's questions is gated like the overall
recall (fail when shown worse, pass when shown no worse than the margin), at
the level ``alpha / S`` for S slices (Bonferroni: the chance that any slice of
an unchanged system fails stays under ``alpha``). The slice checks join the
report; the overall verdict is the worst of all checks, so a candidate that
gains overall and collapses on one tag fails with that tag named.

Tags come from the ground truth given now (``--truth``); they are not part of
its hash, so tagging questions after a baseline was kept does not invalidate it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from .checks import Check, GateReport, _paired_check
from .runs import GateRun
from .stats import VERDICTS

__all__ = ["slice_checks", "with_slices"]


def slice_checks(baseline: GateRun, candidate: GateRun, tags: Mapping[str, tuple[str, ...]], *, k: int,
                 margin: float, alpha: float) -> tuple[Check, ...]:
    """One recall check per tag with enough questions, each at ``alpha / slices``.

    ``tags`` maps question ids to their tags (questions without a tag are in no slice).
    """
    from ...analyses.slices import MIN_QUESTIONS

    bt, ct = baseline.table, candidate.table
    ans = [i for i in range(len(bt.query_ids)) if bt.in_domain[i]]
    tags_of = {i: tags.get(bt.question_id(i), ()) for i in ans}
    names = sorted({t for i in ans for t in tags_of[i]})
    sized = [t for t in names if len({bt.question_id(i) for i in ans if t in tags_of[i]}) >= MIN_QUESTIONS]
    if not sized:
        return ()
    level = alpha / len(sized)
    hit_b, hit_c = bt.found(k), ct.found(k)
    checks = []
    for tag in sized:
        sel = [i for i in ans if tag in tags_of[i]]
        check = _paired_check(f"recall, tag {tag}", f"R@{k} of questions tagged `{tag}`", bt, ct, sel,
                              hit_b[sel], hit_c[sel], units="questions", margin=margin,
                              alpha=level, higher_is_better=True, what="question")
        checks.append(replace(check, sentence=check.sentence + f" (level {alpha:g} / {len(sized)} slices)"))
    return tuple(checks)


def with_slices(report: GateReport, tags: Mapping[str, tuple[str, ...]]) -> GateReport:
    """``report`` with the per-tag recall checks added and its verdict recomputed over every check.

    Raises ``ValueError`` when no tag has enough questions to be checked.
    """
    from ...analyses.slices import MIN_QUESTIONS

    extra = slice_checks(report.baseline, report.candidate, tags, k=report.k, margin=report.margin,
                         alpha=report.alpha)
    if not extra:
        raise ValueError(f"--by tag: no tag is carried by {MIN_QUESTIONS} or more questions of the ground truth; "
                         "add \"tags\" to its questions")
    checks = report.checks + extra
    verdict = min((c.verdict for c in checks), key=VERDICTS.index)
    note = (f"per tag: the recall check on each of the {len(extra)} tags with {MIN_QUESTIONS} or more questions, "
            f"each at level {report.alpha:g} / {len(extra)} (Bonferroni over the slices)")
    return replace(report, checks=checks, verdict=verdict, notes=report.notes + (note,))
