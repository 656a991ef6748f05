"""The regression gate: two runs of one ground truth, four checks, one verdict and its exit code.

Checks, for the gated configuration (:func:`gate_report`):

* ``destroyed needles``: deterministic, so any needle the candidate's chunking
  destroys that the baseline's did not fails, listed with where the cut fell;
* ``recall``: R@k at the primary k, question by question (:func:`~ragdiag.present.regression.stats.paired_gate`);
* ``answered`` and ``bluffs``: the abstention gate at the declared cut and keep,
  answered over answerable queries, bluffs over out-of-domain queries (each its own unit).

The verdict is the worst check's. Exit codes: 0 pass, 1 fail, 3 inconclusive
(1 with ``strict``); 2 (could not compare) is raised before, as :class:`~ragdiag.present.regression.runs.RunError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...core.defaults import ALPHA, PRACTICAL_MARGIN
from ...core.gate import Gate, OnGate
import numpy as np

from ...analyses.gate_table import GateTable
from .runs import GateRun, RunError
from .stats import REGRESSION, RULE, VERDICTS, PairedGate, paired_gate
from ...core.words import cut_as_given, diff_points, pct

__all__ = ["Item", "Check", "GateReport", "gate_report", "check_comparable", "check_options", "EXIT_CODES"]

#: Exit status per verdict (``strict`` turns inconclusive into 1); 2 is "could not compare".
EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}


@dataclass(frozen=True)
class Item:
    """A query newly lost or newly found (or a needle newly destroyed, with where the cut fell)."""

    id: str
    question_id: str
    text: str
    where: str = ""

    def as_json(self) -> dict:
        """``{id, question_id, text, where}`` (``where`` only for destroyed needles)."""
        out = {"id": self.id, "question_id": self.question_id, "text": self.text}
        if self.where:
            out["where"] = self.where
        return out


@dataclass(frozen=True)
class Check:
    """One check: its numbers, the verdict and the sentence that says it."""

    name: str
    metric: str
    baseline: float
    candidate: float
    verdict: str
    sentence: str
    lost: tuple[Item, ...] = ()
    found: tuple[Item, ...] = ()
    test: PairedGate | None = None
    units: str = "questions"

    def as_json(self) -> dict:
        """The JSON form (``difference``, ``margin`` and ``p`` are null for the deterministic check)."""
        t = self.test
        return {
            "name": self.name, "metric": self.metric, "baseline": self.baseline, "candidate": self.candidate,
            "difference": None if t is None else {"estimate": t.estimate, "low": t.low, "high": t.high,
                                                  "confidence": 1 - 2 * t.alpha},
            "margin": None if t is None else t.margin,
            "p": None if t is None else t.p,
            "p_worse": None if t is None or not t.changed else t.p_worse,
            "p_noninferior": None if t is None or not t.changed else t.p_noninferior,
            "units": self.units,
            "changed": None if t is None else t.changed,
            "needed": None if t is None else t.needed,
            "false_pass_at_margin": None if t is None else t.false_pass,
            "loss_rate_unseen": None if t is None or t.losses else t.unseen,
            "power_against_10_points": None if t is None else t.power,
            "verdict": self.verdict, "sentence": self.sentence,
            "lost": [i.as_json() for i in self.lost], "found": [i.as_json() for i in self.found],
        }


@dataclass(frozen=True)
class GateReport(OnGate):
    """The gate's result: the checks, the overall verdict, what changed between the runs."""

    verdict: str
    checks: tuple[Check, ...]
    baseline: GateRun
    candidate: GateRun
    changes: tuple[str, ...]
    margin: float
    alpha: float
    gate: Gate
    strict: bool = False
    notes: tuple[str, ...] = field(default=())
    #: a native cut (``gate --cut-from`` a ``--score native`` export): its score, unit, value and stamp; the
    #: ``gate`` then holds the rank-adapted cut (:mod:`ragdiag.present.regression.native`), never printed
    score: dict | None = None

    @property
    def cut_in_words(self) -> str:
        """The cut as a person reads it: ``0.5`` (a cosine distance), or ``MaxSim score ... >= 13.58``."""
        if self.score is None:
            return f"{cut_as_given(self.cut)}"
        return f"{self.score['score']} >= {self.score['value']:g}"

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 3 inconclusive (1 when ``strict``)."""
        if self.verdict == "inconclusive" and self.strict:
            return 1
        return EXIT_CODES[self.verdict]

    def as_json(self) -> dict:
        """``{"verdict", "exit_code", "checks": [...], ...}`` (the ``--json`` output)."""
        return {
            "verdict": self.verdict, "exit_code": self.exit_code, "strict": self.strict,
            "baseline": {"source": self.baseline.source, "config": self.baseline.config},
            "candidate": {"source": self.candidate.source, "config": self.candidate.config},
            "truth_sha256": self.baseline.truth_sha256, "alpha": self.alpha, "margin": self.margin,
            "cut": self.cut if self.score is None else self.score["value"], "keep": self.keep, "k": self.k,
            **({} if self.score is None else {"score": self.score}), "changes": list(self.changes),
            "checks": [c.as_json() for c in self.checks],
        }


def check_comparable(baseline: GateRun, candidate: GateRun) -> list[str]:
    """What differs between two runs (expected: it is what is being tested); :class:`RunError` when they cannot be compared.

    They must share the ground truth (same hash, same queries) and the gate's keep.
    """
    if baseline.truth_sha256 != candidate.truth_sha256:
        raise RunError(
            f"the runs use different ground truths: baseline {baseline.source} was built on "
            f"{baseline.truth_source or 'a ground truth'} (sha256 {baseline.truth_sha256[:12]}, "
            f"{baseline.questions} questions), candidate {candidate.source} on "
            f"{candidate.truth_source or 'a ground truth'} (sha256 {candidate.truth_sha256[:12]}, "
            f"{candidate.questions} questions); a paired comparison needs the same questions: "
            "rebuild the baseline on this ground truth")
    if baseline.table.query_ids != candidate.table.query_ids:
        raise RunError("the runs list different queries for the same ground-truth hash; run `eval --out` again")
    if baseline.gate.keep != candidate.gate.keep:
        raise RunError(f"the gate keeps {baseline.gate.keep} chunks in the baseline and {candidate.gate.keep} in the "
                       "candidate: compare runs made with the same keep")
    changes = []
    if baseline.config != candidate.config:
        changes.append(f"configuration: {baseline.config} -> {candidate.config}")
    for what, a, b in (("model", baseline.model.get("model"), candidate.model.get("model")),
                       ("model weights", baseline.model.get("weights_sha256"), candidate.model.get("weights_sha256")),
                       ("precision", baseline.model.get("precision"), candidate.model.get("precision")),
                       ("corpus", baseline.corpus.get("sha256"), candidate.corpus.get("sha256")),
                       ("pipeline version", baseline.pipeline_version, candidate.pipeline_version),
                       ("ragdiag version", baseline.ragdiag_version, candidate.ragdiag_version)):
        if a != b:
            short = (lambda v: str(v)[:12]) if what in ("model weights", "corpus") else str
            changes.append(f"{what}: {short(a)} -> {short(b)}")
    return changes


def _item(t: GateTable, i: int) -> Item:
    return Item(t.query_ids[i], t.question_id(i), t.texts[i] if t.texts else "")


def _paired_check(name: str, metric: str, baseline: GateTable, candidate: GateTable, rows, base, cand, *,
                  units: str, margin: float, alpha: float, higher_is_better: bool, what: str,
                  strict: bool = False) -> Check:
    """One paired check over the queries ``rows`` (positions) of two tables; ``base``/``cand``: 0/1 per query."""
    rows = [int(i) for i in rows]
    base, cand = [int(x) for x in base], [int(x) for x in cand]
    units_of = baseline.group_ids()
    test = paired_gate(base, cand, [units_of[i] for i in rows], margin=margin, alpha=alpha,
                       higher_is_better=higher_is_better, strict=strict)
    rate_b = sum(base) / len(base) if base else 0.0
    rate_c = sum(cand) / len(cand) if cand else 0.0
    went_bad = [_item(candidate, i) for i, b, x in zip(rows, base, cand) if b != x and (b > x) == higher_is_better]
    went_good = [_item(candidate, i) for i, b, x in zip(rows, base, cand) if b != x and (b > x) != higher_is_better]
    return Check(name, metric, rate_b, rate_c, test.verdict, _sentence(test, metric, what, units, rate_b, rate_c),
                 tuple(went_bad), tuple(went_good), test, units)


def _pct(x: float) -> str:
    return pct(x, 1)


def _pts(x: float) -> str:
    return diff_points(x, 1)


def _sentence(t: PairedGate, metric: str, what: str, units: str, rate_b: float, rate_c: float) -> str:
    head = f"{metric}: {_pct(rate_b)} -> {_pct(rate_c)}"
    diff = (f"{_pts(t.estimate)} points ({_pts(t.low)} to {_pts(t.high)}, {pct(1 - 2 * t.alpha)} interval over "
            f"{t.units} {units})")
    moved = f"{t.changed} {units} changed: {t.wins} better, {t.losses} worse"
    risk = (f"false-pass rate at the {100 * t.margin:g}-point margin for {t.units} {units}: "
            f"{pct(t.false_pass)}")
    if t.verdict == "fail":
        return f"{head}: shown worse, {diff}; one-sided p = {t.p_worse:.3g} < {t.alpha:g}; {moved}: fail"
    if t.verdict == "pass" and not t.p_noninferior < t.alpha:  # the rule's pass: no unit got worse
        what_moved = f"no {what} changed" if t.changed == 0 else f"{moved}"
        return (f"{head}; {what_moved}: no {what} got worse, so pass; {diff}. 0 of {t.units} {units} worse: a "
                f"loss of up to {pct(t.unseen, 1)} per {what} would pass unseen ({risk}; --strict passes only "
                f"when shown no worse than the margin)")
    if t.verdict == "pass":
        return (f"{head}: shown no worse than {100 * t.margin:g} points, {diff}; p = {t.p_noninferior:.3g} "
                f"< {t.alpha:g}; {moved}; {risk}: pass")
    need = (f"; at the same mix, about {t.needed} {units} would decide it ({t.needed_verdict})"
            if t.needed else "")
    return (f"{head}: neither shown worse (p = {t.p_worse:.3g}) nor within {100 * t.margin:g} points "
            f"(p = {t.p_noninferior:.3g}), {diff}; {moved}{need}; with {t.units} {units} the gate fails a "
            f"{100 * REGRESSION:g}-point regression {pct(t.power)} of the time: inconclusive")


def _destroyed_check(baseline: GateRun, candidate: GateRun) -> Check:
    before = {d.question_id for d in baseline.destroyed}
    texts, t = {}, candidate.table
    for i in range(len(t.query_ids)):
        texts.setdefault(t.question_id(i), t.texts[i] if t.texts else "")
    new = [d for d in candidate.destroyed if d.question_id not in before]
    after = {d.question_id for d in candidate.destroyed}
    mended = [d for d in baseline.destroyed if d.question_id not in after]

    def item(d):
        cuts = ", ".join(str(c) for c in d.cuts) or "none inside"
        return Item(d.question_id, d.question_id, texts.get(d.question_id, ""),
                    f"{d.doc_id} [{d.start}, {d.end}): chunk boundary at {cuts}")

    verdict = "fail" if new else "pass"
    sentence = (f"destroyed needles: {len(baseline.destroyed)} -> {len(candidate.destroyed)}; "
                + (f"{len(new)} newly destroyed by the chunking (no chunk holds the answer whole): fail" if new
                   else "none newly destroyed: pass"))
    return Check("destroyed needles", "destroyed", len(baseline.destroyed), len(candidate.destroyed), verdict,
                 sentence, tuple(item(d) for d in new), tuple(item(d) for d in mended), None, "questions")


def check_options(*, margin, alpha) -> tuple[float, float]:
    """``(margin, alpha)`` as floats when they are usable, else ``ValueError`` naming the option.

    ``margin``: a difference of rates in [0, 1); ``alpha``: a one-sided level in (0, 0.5).

    >>> check_options(margin=0.05, alpha=0.05)
    (0.05, 0.05)
    """
    import math
    import numbers

    for name, value in (("margin", margin), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not 0 <= margin < 1:
        raise ValueError(f"margin must be a difference of rates in [0, 1), e.g. 0.05 (5 points); got {margin!r}")
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), e.g. 0.05; got {alpha!r}")
    return float(margin), float(alpha)


def gate_report(baseline: GateRun, candidate: GateRun, *, margin: float = PRACTICAL_MARGIN, alpha: float = ALPHA,
                cut: float | None = None, strict: bool = False, score: dict | None = None) -> GateReport:
    """Run every check of ``candidate`` against ``baseline`` (:class:`RunError` when they cannot be compared).

    ``cut``: the gate's cut (default: the baseline's stamped one), checked by
    :class:`~ragdiag.core.gate.Gate` (:class:`~ragdiag.core.gate.GateError`, a ``ValueError``, when it is not a
    finite cosine distance in [0, 2]). ``margin``: non-inferiority margin in rate units; ``alpha``:
    one-sided level of each test. Every "under the cut" is :meth:`Gate.under <ragdiag.core.gate.Gate.under>`.
    ``score``: a native cut's score, unit and value (``cut`` and the tables are then the rank adapter's:
    :func:`ragdiag.present.regression.native.native_gate_runs`); the checks name the cut in that score.
    """
    margin, alpha = check_options(margin=margin, alpha=alpha)
    gate = baseline.gate if cut is None else baseline.gate.with_cut(cut)
    changes = check_comparable(baseline, candidate)
    cut, k = gate.cut, gate.k
    at = f"cut {cut_as_given(cut)}" if score is None else f"{score['score']} >= {cut_as_given(score['value'])}"
    bt, ct = baseline.table, candidate.table
    ans, ood = np.flatnonzero(bt.in_domain), np.flatnonzero(~bt.in_domain)
    checks = [_destroyed_check(baseline, candidate)]
    checks.append(_paired_check("recall", f"R@{k}", bt, ct, ans, bt.found(k)[ans], ct.found(k)[ans],
                                units="questions", margin=margin, alpha=alpha, higher_is_better=True,
                                what="question", strict=strict))
    checks.append(_paired_check("answered", f"answered at {at} (keep {gate.keep})", bt, ct, ans,
                                bt.answered(cut)[ans], ct.answered(cut)[ans], units="questions",
                                margin=margin, alpha=alpha, higher_is_better=True, what="question", strict=strict))
    if ood.size:
        checks.append(_paired_check("bluffs", f"bluffs at {at} (keep {gate.keep})", bt, ct, ood,
                                    bt.given_sources(cut)[ood], ct.given_sources(cut)[ood],
                                    units="out-of-domain queries", margin=margin, alpha=alpha,
                                    higher_is_better=False, what="out-of-domain query", strict=strict))
    verdict = min((c.verdict for c in checks), key=VERDICTS.index)
    notes = (f"the rule: {RULE}",
             "worse: the exact one-sided sign-flip test over questions (fail when p < alpha); no worse than the "
             "margin: the score test (Tango's for one phrasing; pass when p < alpha); the interval's lower end is "
             "the score test's bound, its upper end the sign-flip test's (approximate away from 0)",
             "what the worse test tests: that each question's difference is as likely up as down (symmetry, the "
             "runs exchangeable), not only that the mean difference is 0; under a skewed difference of mean 0 it "
             "fires a little more often than alpha (about 6% at 5% in a simulation)")
    return GateReport(verdict, tuple(checks), baseline, candidate, tuple(changes), margin, alpha, gate, strict,
                      notes, score)
