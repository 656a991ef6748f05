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

    pairs = [(b, c) for b, c in zip(baseline.queries, candidate.queries) if b.answerable]
    names = sorted({t for b, _ in pairs for t in tags.get(b.question_id, ())})
    sized = [t for t in names if len({b.question_id for b, _ in pairs if t in tags.get(b.question_id, ())})
             >= MIN_QUESTIONS]
    if not sized:
        return ()
    level = alpha / len(sized)
    hit = lambda q: int(0 < q.needle_rank <= k)  # noqa: E731
    checks = []
    for tag in sized:
        sel = [(b, c) for b, c in pairs if tag in tags.get(b.question_id, ())]
        bq, cq = [b for b, _ in sel], [c for _, c in sel]
        check = _paired_check(f"recall, tag {tag}", f"R@{k} of questions tagged `{tag}`", bq, cq,
                              [hit(q) for q in bq], [hit(q) for q in cq], units="questions", margin=margin,
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
