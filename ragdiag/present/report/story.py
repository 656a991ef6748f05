"""The report's first two screens: the headline and its cards, where the questions go, the alternatives
considered and what each chunking switch bought.

Each section holds the library's numbers (the recommendation, the outcome ladder, the comparison with
the best, the design contrasts) and says how they read, once for the HTML and the Markdown template.
Nothing here computes a statistic; every verdict is the library's, in the sentence grammar of the
product: the effect first, its interval, the correction last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ...analyses.compare.paired import Difference
from ...analyses.compare.power import Resolution
from ...analyses.goals import GoalVerdict, judge_goals
from ...analyses.versus import detectable, no_difference
from ...evaluation.rows import RateCell
from ...core.gate import Gate, OnGate
from ...core.goal import Goal, OnGoal
from ...core.svg import Dot, Step, dot_chart, waterfall_chart
from ...core.tables import Table
from ...core.words import (OUTCOME_WORDS, RUNG_WORDS, cut_as_given, cut_text, difference_text, pct, pct_cell,
                           pct_range, rate_text, ship_headline, signed_points)

__all__ = ["Card", "Headline", "FlowSection", "AltRow", "AlternativesSection", "EffectsSection", "LADDER_WORDS"]

#: How each rung of the outcome ladder reads, in pipeline order: the library's one vocabulary
#: (:data:`ragdiag.core.words.RUNG_WORDS`, the dashboard's and the glossary's words).
LADDER_WORDS = {s: RUNG_WORDS[s] for s in ("destroyed", "truncated", "not-in-pool", "ranked-low", "refused",
                                           "kept-but-wrong", "answered")}


@dataclass(frozen=True)
class Card:
    """One headline figure: a rate with its interval, its count, and its change against a comparator."""

    name: str  # "answered", "bluffs", "lost"
    title: str
    cell: RateCell
    of: int
    unit: str  # "answerable queries", "off-topic queries"
    against: str | None = None  # the comparator ("the runner-up"; the line above the cards names it in words)
    against_cell: RateCell | None = None
    higher_is_better: bool = True
    difference: Difference | None = None  # this minus the comparator, paired, with its 95% interval (shares)

    @property
    def value(self) -> str:
        """``"55%"``."""
        return pct_cell(self.cell)

    @property
    def interval(self) -> str:
        """``"42–67%"`` (95%, over questions)."""
        return pct_range(self.cell)

    @property
    def rate_words(self) -> str:
        """``"55% (42–67)"``: the rate and its interval in one line, as every other rate is said."""
        return rate_text(self.cell)

    @property
    def count(self) -> str:
        """``"35 of 64 answerable queries"``."""
        return f"{self.cell.count} of {self.of} {self.unit}"

    @property
    def delta(self) -> float | None:
        """The change in points against the comparator (None without one)."""
        if self.against_cell is None or self.cell.rate is None or self.against_cell.rate is None:
            return None
        return 100 * (self.cell.rate - self.against_cell.rate)

    @property
    def better(self) -> bool | None:
        """Whether the change is for the better; None when there is none to judge, or its interval reaches 0
        (no detectable difference: grey, never green or red)."""
        d = self.delta
        if d is None or round(d) == 0:
            return None
        if self.difference is not None and not detectable(self.difference):
            return None
        return (d > 0) == self.higher_is_better

    @property
    def change(self) -> str:
        """``"\u22128 pts (\u221215 to \u22121) against the runner-up"``; ``"no detectable difference against the
        runner-up: +5 pts (\u22124 to +14)"`` when the interval reaches 0; "" without a comparator."""
        d = self.delta
        if d is None:
            return ""
        diff = self.difference
        if diff is None or diff.estimate != diff.estimate:  # no paired interval: the point estimate alone
            if round(d) == 0:
                return f"the same as {self.against} ({pct_cell(self.against_cell)})"
            return f"{signed_points(d)} against {self.against} ({pct_cell(self.against_cell)})"
        if no_difference(diff):
            return f"the same as {self.against} ({pct_cell(self.against_cell)})"
        if not detectable(diff):
            return f"no detectable difference against {self.against}: {difference_text(diff)}"
        return f"{difference_text(diff)} against {self.against}"


@dataclass(frozen=True)
class Headline(OnGate, OnGoal):
    """The recommendation in words and the four cards at the gate's k (``gate``: the report's keep, cut and k)."""

    config: str
    words: str
    gate: Gate
    cut_method: str
    goal: Goal  # the bluff goal the cut follows and, when stated, the answered goal (judged, never optimised)
    n_in: int
    n_ood: int
    n_questions: int
    answered: RateCell
    bluffs: RateCell
    lost: RateCell
    why: str
    against: str | None  # the comparator's code (runner-up or declared baseline)
    against_words: str | None
    against_kind: str  # "the runner-up", "what you run today" (a declared baseline) or "the recommendation"
    against_rates: Mapping[str, RateCell] | None
    against_cut: float | None  # the comparator's rates are at its own cut for the same goal
    recommended: bool  # the report's configuration and cut are the recommendation
    rec_config: str
    rec_words: str
    rec_cut: float
    guarantee: str = ""  # the recommended cut's guarantee in words (conformal)
    proposed_cut: float | None = None  # the cut proposed for the goal for this configuration
    against_diffs: Mapping[str, Difference] | None = None  # this minus the comparator, paired (analyses.versus)
    #: the two ways an answerable query is not answered at the cut: ``wrong_sources`` (given wrong passages) and
    #: ``no_answer`` (refused); ``lost`` is their sum. None: the card of the lost queries stands for both.
    outcomes: Mapping[str, RateCell] | None = None
    #: the cut on the ranking's own score (:class:`ragdiag.present.report.native.NativeCut`) when the report is read
    #: on it; None: on the dense model's cosine distance, and ``gate.cut`` is the cut
    native: object | None = None

    @property
    def goal_text(self) -> str:
        """``"at most 5% bluffs"``."""
        return f"at most {pct(self.max_bluff, None)} bluffs"

    def cut_words(self) -> str:
        """How the cut was chosen, with its guarantee in words when it has one."""
        if self.native is not None:
            return self._native_cut_words()
        if self.cut_method == "named":
            proposed = "" if self.proposed_cut is None else \
                f"; the cut proposed for a goal of {self.goal_text} is {cut_text(self.proposed_cut)} (dotted line)"
            return f"The cut {cut_text(self.cut)} was named for this report{proposed}."
        head = f"The cut {cut_text(self.cut)} is the {self.cut_method} cut for a goal of {self.goal_text}"
        guaranteed = self.guarantee and self.cut_method == "conformal" and self.recommended
        return head + (f": {self.guarantee}." if guaranteed else ".")

    def _native_cut_words(self) -> str:
        n = self.native
        if n.method == "named":
            proposed = ("" if n.proposed is None else
                        f"; the cut proposed for a goal of {self.goal_text} on this score is {n.proposed:g}")
            return f"The cut {cut_as_given(n.cut)} on the {n.score} was named for this report{proposed}."
        head = f"The cut {cut_as_given(n.cut)} on the {n.score} is the {n.method} cut for a goal of {self.goal_text}"
        return head + (f": {n.guarantee}." if n.guarantee and n.method == "conformal" else ".")

    def _bluff_words(self) -> str:
        if self.n_ood == 0:
            return "no off-topic queries were asked, so bluffing is not measured"
        b = self.bluffs
        verb = "gets" if b.count == 1 else "get"
        rate = f"could be up to {pct(b.high)}" if b.count == 0 else f"{pct_cell(b)}, {pct_range(b)}"
        return f"{b.count} of {self.n_ood} off-topic queries still {verb} passages ({rate})"

    def sentence(self) -> str:
        """The headline in plain words: the configuration, its strictness (the cut), the rates with intervals."""
        a = self.answered
        rates = (f"{pct_cell(a)} of answerable queries answered ({pct_range(a)}); {self._bluff_words()}.")
        if self.native is not None:
            how = self.native.filter
            if self.recommended:
                return f"{ship_headline(self.words, how=how)}: {rates}"
            return f"{self.words[:1].upper() + self.words[1:]}, {how}, as chosen for this report: {rates}"
        if self.recommended:
            return f"{ship_headline(self.words, self.cut)}: {rates}"
        return (f"{self.words[:1].upper() + self.words[1:]} at strictness {cut_text(self.cut)}, as chosen for this "
                f"report: {rates}")

    def goals(self) -> tuple[GoalVerdict, ...]:
        """The goals judged at the report's gate (:func:`ragdiag.analyses.goals.judge_goals`, the Summary's words)."""
        return judge_goals({"answered": self.answered, "bluffs": self.bluffs}, self.goal, n_in=self.n_in,
                           n_ood=self.n_ood)

    def comparator_words(self) -> str:
        """Who the cards compare with, in words: what you run today (a declared baseline), else the runner-up;
        for a named configuration, the recommendation ("" without one)."""
        if self.against is None:
            return ""
        at = "" if self.against_cut is None else f" at strictness {cut_text(self.against_cut)}"
        return f"Compared with {self.against_kind}: {self.against_words} ({self.against}){at}."

    def basis(self) -> str:
        """How the configuration and the cut were chosen, in the method's words ("How we know")."""
        if self.native is not None:
            n = self.native
            why = (f"Why this configuration: {self.why}" if self.recommended else
                   f"The recommendation is {self.rec_words} ({self.rec_config}): {self.why}")
            return f"{why} Rates at the gate's k = {self.keep} (at most {self.keep} chunks kept); intervals 95% " \
                   f"over questions ({self.n_in} answerable queries = {self.n_questions} questions × their " \
                   f"phrasings). The cut is on the {n.score} ({n.unit}): a passage is given when its score is at " \
                   f"least the cut (higher keeps, a higher cut is stricter)."
        why = f"Why: {self.why}" if self.recommended else (
            f"The recommendation is {self.rec_words} ({self.rec_config}) at strictness {cut_text(self.rec_cut)}: "
            f"{self.why}")
        return f"{why} Rates at the gate's k = {self.keep} (at most {self.keep} chunks kept); intervals 95% over " \
               f"questions ({self.n_in} answerable queries = {self.n_questions} questions × their phrasings); " \
               f"differences paired, query by query, each pipeline at its own cut, 95% intervals over questions " \
               f"(sign flips of each question's difference). Strictness is the cut: the largest cosine distance a passage may have and still be " \
               f"given (lower is stricter)."

    def cards(self) -> tuple[Card, ...]:
        """The four outcomes, one word each (:data:`~ragdiag.core.words.OUTCOME_WORDS`): answered, given wrong
        passages, refused, bluffs; answered and bluffs against the comparator when there is one."""
        r = self.against_rates or {}
        diffs = self.against_diffs or {}
        who = self.against_kind if self.against else None  # named in words once, in the line above the cards

        def card(name, title, cell, of, unit, up):
            return Card(name, title, cell, of, unit, who if name in r else None, r.get(name), up, diffs.get(name))

        w = OUTCOME_WORDS
        answered = card("answered", w["answered"], self.answered, self.n_in, "answerable queries", True)
        bluffs = card("bluffs", w["bluffs"], self.bluffs, self.n_ood, "off-topic queries given passages", False)
        if self.outcomes is None:
            return (answered, card("lost", "not answered", self.lost, self.n_in, "answerable queries", False), bluffs)
        return (answered,
                Card("wrong_sources", w["wrong_sources"], self.outcomes["wrong_sources"], self.n_in,
                     "answerable queries", higher_is_better=False),
                Card("no_answer", w["no_answer"], self.outcomes["no_answer"], self.n_in, "answerable queries",
                     higher_is_better=False),
                bluffs)


@dataclass(frozen=True)
class FlowSection(OnGate):
    """Where the answerable queries of one configuration go at ``gate``, rung by rung of the outcome ladder."""

    config: str
    words: str
    gate: Gate
    n_in: int
    counts: Mapping[str, int]  # ladder outcome -> queries (answerable ones)
    n_ood: int
    bluffs: int
    cut_label: str = ""  # the cut in words when it is not a cosine distance ("MaxSim score ≥ 13.39")

    def steps(self) -> tuple[tuple[str, int], ...]:
        """(words, count) per rung, "truncated" left out when it is zero."""
        return tuple((LADDER_WORDS[s], self.counts.get(s, 0)) for s in LADDER_WORDS
                     if s != "answered" and (s != "truncated" or self.counts.get(s, 0)))

    def sentence(self) -> str:
        """The flow in words: the largest loss named."""
        losses = [(n, w) for w, n in self.steps() if n]
        answered = self.counts.get("answered", 0)
        head = (f"Of {self.n_in} answerable queries, {answered} {'is' if answered == 1 else 'are'} answered "
                f"({pct(answered, of=self.n_in, missing='n/a')})")
        if not losses:
            return head + "."
        n, w = max(losses)
        ood = (f" Of {self.n_ood} off-topic queries, {self.bluffs} still {'gets' if self.bluffs == 1 else 'get'} "
               f"passages and {self.n_ood - self.bluffs} {'gets' if self.n_ood - self.bluffs == 1 else 'get'} NO "
               f"ANSWER." if self.n_ood else "")
        return head + f"; the largest loss: {w}, {n} ({pct(n, of=self.n_in, missing='n/a')}).{ood}"

    def svg(self) -> str:
        """The waterfall (inline SVG)."""
        steps = [Step("answerable queries", self.n_in, True)]
        steps += [Step(w, n) for w, n in self.steps()]
        steps.append(Step("answered", self.counts.get("answered", 0), True))
        return waterfall_chart(steps, of=max(self.n_in, 1),
                               label=f"Where the {self.n_in} answerable queries go under {self.config} at strictness "
                                     f"{self.cut_label or cut_text(self.cut)}")

    def table(self) -> Table:
        """The same flow as a table (Markdown)."""
        rows = [["answerable queries", self.n_in, "100%"]]
        rows += [[w, f"-{n}", pct(n, of=self.n_in, missing="n/a")] for w, n in self.steps()]
        answered = self.counts.get("answered", 0)
        rows.append(["answered", answered, pct(answered, of=self.n_in, missing="n/a")])
        return Table.of(["step", "queries", "share"], rows, numeric=(1, 2), id="flow-table")


@dataclass(frozen=True)
class AltRow:
    """One configuration considered: its difference to the best on the measure compared (answered at its own cut;
    R@k in a comparison of recall), with the simultaneous interval."""

    config: str
    words: str
    estimate: float
    low: float
    high: float
    in_best_set: bool
    recall: float  # its R@k (the diagnostic: found before the gate)
    lead: tuple[float, float, float] | None = None  # the best's row: its lead over the runner-up (estimate, low, high)
    answered: float | None = None  # its share answered at its own cut (None: a comparison of recall)


@dataclass(frozen=True)
class AlternativesSection:
    """The best set (not shown worse than the best) and a few others, sorted."""

    k: int
    best: str
    chosen: str
    rows: tuple[AltRow, ...]  # the ones shown, best first
    best_set: tuple[str, ...]
    m: int  # configurations compared (the family)
    hidden_in_set: int  # members of the best set not drawn
    hidden: int  # configurations outside the best set not drawn
    all_rows: tuple[AltRow, ...] = ()  # every configuration compared (the appendix's table)
    resolution: Resolution | None = None  # what the questions resolve, alone and within the m(m-1)/2 pairs
    margin: float | None = None  # the recommendation's practical margin (a share)
    margin_needs: tuple[int | None, int | None] = (None, None)  # questions that margin needs, alone / in the family
    drafts: str = ""  # how many questions came from drafts and whether the verdict holds without them ("": none)
    measure: str = ""  # what was compared, in words ("": R@k); the recommendation's: answered at each one's own cut

    @property
    def _on(self) -> str:
        """The measure in a sentence: "answered at its own cut ..." or "answers found in the top k passages"."""
        return self.measure or f"answers found in the top {self.k} passages"

    @property
    def _short(self) -> str:
        return "answered at its own cut" if self.measure else f"found in the top {self.k}"

    @property
    def measured_as(self) -> str:
        """What the points behind the best are points of, for the chart's caption."""
        return "answered at its own cut" if self.measure else f"answer found in the top {self.k} passages"

    def power_sentence(self) -> str:
        """What these questions can resolve, alone and within the family, and what the margin would need ("")."""
        r = self.resolution
        if r is None or r.n == 0:
            return self.drafts
        each = f" ({r.phrasings} phrasings each)" if r.phrasings > 1 else ""
        pts = lambda x, unit="": "nothing" if x is None else f"about {100 * x:g}{unit}"  # noqa: E731
        crit = "" if r.critical is None else f", critical value {r.critical:.2f}"
        fam_words = f"the comparison with the best over {self.m} configurations{crit}"
        head = (f"What {r.n} questions{each} resolve {'on ' + self.measure if self.measure else f'at R@{r.k}'} "
                f"(80% power, at best): alone: {pts(r.alone, ' points')}; "
                f"within {fam_words}: {pts(r.family, ' points')}.")
        drafts = f" {self.drafts}" if self.drafts else ""
        if self.margin is None:
            return head + drafts
        q = lambda x: f"over {100_000:,}" if x is None else f"{x:,}"  # noqa: E731
        alone, fam = self.margin_needs
        return head + f" The {100 * self.margin:g}-point margin needs, alone: {q(alone)} questions; within " \
                      f"the comparison with the best: {q(fam)}." + drafts

    def sentence(self) -> str:
        """The best set in plain words (the method's in :meth:`method_words`)."""
        n = len(self.best_set)
        best = next((r.words for r in self.all_rows or self.rows if r.config == self.best), self.best)
        if n == 1:
            return (f"{best} ({self.best}) answers more than every other of the {self.m} configurations "
                    f"({self._on}).")
        return (f"{n} of {self.m} configurations are statistically tied with the best, {best} ({self.best}), on "
                f"{self._on}: these questions cannot tell them apart.")

    def method_words(self) -> str:
        """The best set in the method's words ("How we know")."""
        n = len(self.best_set)
        return (f"{n} of {self.m} {'configuration is' if n == 1 else 'configurations are'} not shown worse than the "
                f"best {'on ' + self.measure if self.measure else f'at R@{self.k}'}, {self.best} (Hsu's comparison with the best, simultaneous over {self.m}): the "
                f"best set.")

    def not_drawn(self) -> str:
        """What the dot plot leaves out ("" when it draws every configuration)."""
        left = [f"{self.hidden_in_set} more of the best set" if self.hidden_in_set else "",
                f"{self.hidden} further behind" if self.hidden else ""]
        left = [x for x in left if x]
        return f"Not drawn: {' and '.join(left)} (all in the appendix)." if left else ""

    def svg(self) -> str:
        """A sorted dot plot: difference to the best in points, simultaneous intervals."""
        dots = [Dot(r.words.partition(", ")[0], 100 * r.estimate, 100 * r.low, 100 * r.high,
                    0 if r.config == self.chosen else (1 if r.in_best_set else 2), r.config,
                    r.words.partition(", ")[2]) for r in self.rows]
        lo = min([d.low for d in dots] + [0.0])
        hi = max([d.high for d in dots] + [0.0])
        pad = max(2.0, 0.05 * (hi - lo))
        return dot_chart(dots, label=f"Difference to the best, {self._on}, in points",
                         x_min=lo - pad, x_max=hi + pad, reference=0.0, x_format=lambda t: f"{t:+g}" if t else "0",
                         x_label=f"points behind the best ({self._short})", width=560, row=28,
                         label_width=300)

    def table(self) -> Table:
        """Every configuration compared, as a table."""
        def diff(r: AltRow) -> str:
            if r.lead is not None:  # the best: its lead over the runner-up, with its interval
                e, lo, hi = r.lead
                return f"the best: {difference_text({'estimate': e, 'low': lo, 'high': hi})} over the runner-up"
            return difference_text(r)

        rows = self.all_rows or self.rows
        if self.measure:  # the decision's measure first, R@k beside it as the diagnostic
            return Table.of(["configuration", "code", "answered at its own cut", f"R@{self.k} (found before the gate)",
                             "difference to the best (Hsu's comparison with the best, simultaneous 95%)", "best set"],
                            ([r.words, r.config, f"{pct(r.answered)}", f"{pct(r.recall)}", diff(r),
                              "yes" if r.in_best_set else "no"] for r in rows),
                            numeric=(2, 3), id="alternatives-table",
                            row_class=("chosen" if r.config == self.chosen else "" for r in rows))
        return Table.of(["configuration", "code", f"R@{self.k}",
                         "difference to the best (Hsu's comparison with the best, simultaneous 95%)", "best set"],
                        ([r.words, r.config, f"{pct(r.recall)}", diff(r),
                          "yes" if r.in_best_set else "no"] for r in self.all_rows or self.rows),
                        numeric=(2,), id="alternatives-table",
                        row_class=("chosen" if r.config == self.chosen else "" for r in self.all_rows or self.rows))


@dataclass(frozen=True)
class EffectsSection:
    """What each chunking switch bought: the design's contrasts as one family (:func:`ragdiag.analyses.compare.effects`).

    The story shows the contrasts under the report's retriever, in the library's verdict sentences; the
    appendix every contrast of the family.
    """

    k: int
    retriever: str
    rows: tuple  # ragdiag.analyses.compare.effects.EffectRow, every contrast of the family
    correction: str
    n_questions: int
    retriever_words: str = ""

    @property
    def m(self) -> int:
        """Contrasts in the family."""
        return len(self.rows)

    def shown(self) -> tuple:
        """The contrasts under the report's retriever, in the design's order."""
        return tuple(r for r in self.rows if r.retriever == self.retriever)

    def sentences(self) -> tuple[str, ...]:
        """The library's verdict for each contrast shown."""
        return tuple(r.sentence() for r in self.shown())

    def summary(self) -> str:
        """The family in one sentence: how many contrasts, how many shown different."""
        n = sum(r.status == "different" for r in self.rows)
        others = self.m - len(self.shown())
        return (f"answers found in the top {self.k} passages over {self.n_questions} questions, each switch alone; of "
                f"{self.m} comparisons checked together (every retriever), {n} "
                f"{'shows' if n == 1 else 'show'} a difference." + (f" The {others} under other retrievers are in "
                                                                     f"the appendix." if others else ""))

    def table(self) -> Table:
        """Every contrast of the family (appendix)."""
        return Table.of(["switch", "contrast", "retriever", "better", "worse", "same",
                         "difference (simultaneous 95%)", "adjusted p", "destroyed", "verdict"],
                        ([r.switch, r.contrast, r.retriever, r.wins, r.losses, r.ties,
                          difference_text(r),
                          f"{r.p_adjusted:.3g}", ", ".join(f"{s} {n}" for s, n in r.destroyed.items()), r.status]
                         for r in self.rows), numeric=(3, 4, 5, 7), id="effects-table")
