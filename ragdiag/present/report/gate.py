"""The abstention gate at the report's cut: its counts and rates, the suggested cut, the trade-off curve."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ...analyses.compare.intervals import upper_bound_words
from ...evaluation.rows import RateCell, SweepRow
from ...core.gate import Gate, OnGate
from ...core.goal import Goal
from ...core.svg import Line, line_chart
from ...core.tables import Table
from ...core.words import OUTCOME_WORDS, count_rate_text, cut_text, pct, plural

# The gate row and its rates are the library's own rows (ragdiag.evaluation.rows), not copies.
GateRow = SweepRow

__all__ = ["GateRow", "RateCell", "Curve", "GateSection"]


@dataclass(frozen=True)
class Curve:
    """The gate's outcome counts at every cut of the sweep."""

    cuts: tuple[float, ...]
    answered: tuple[int, ...]
    wrong_sources: tuple[int, ...]
    no_answer: tuple[int, ...]
    bluffs: tuple[int, ...]


@dataclass(frozen=True)
class GateSection(OnGate):
    """Abstention of ``config`` at ``gate`` (its cut and keep): counts, rates, the cut chooser, the curve."""

    config: str
    gate: Gate
    n_in: int
    n_ood: int
    row: GateRow
    rates: Mapping[str, RateCell]  # answered, wrong_sources, no_answer, bluffs
    curve: Curve
    ood_kinds: Mapping[str, int]  # ood kind -> queries
    choice: dict  # threshold.CutChoice.as_json() for the goal ({} when not computed)
    goal: Goal | None = None  # the goal; its bluff goal is drawn across the curve
    proposed: float | None = None  # the proposed cut when it is not the report's
    #: the cut on the ranking's own score (:class:`ragdiag.present.report.native.NativeCut`); None: a cosine
    #: distance. With it, ``curve.cuts`` are in the score's units (higher keeps) and ``gate.cut`` is never printed.
    native: object | None = None

    @property
    def max_bluff(self) -> float | None:
        """The bluff goal drawn across the curve (None: no goal)."""
        return None if self.goal is None else self.goal.max_bluff

    @property
    def cut_text(self) -> str:
        """The cut as the report writes it."""
        return cut_text(self.cut) if self.native is None else self.native.text

    def _rate(self, outcome: str, count: int) -> str:
        c = self.rates.get(outcome)
        if c is None or c.rate is None:
            return str(count)
        return count_rate_text(c)  # "36 = 56% (44–68)", the count at the same cut as the row's

    def table(self) -> Table:
        """The one-row trade-off table: counts with their rates and intervals."""
        s = self.row
        w = OUTCOME_WORDS
        return Table.of(["cut", w["answered"], w["wrong_sources"], w["no_answer"], "not answered", w["bluffs"]],
                        [[self.cut_text, self._rate("answered", s.answered),
                          self._rate("wrong_sources", s.wrong_sources), self._rate("no_answer", s.no_answer),
                          s.lost, self._rate("bluffs", s.bluffs)]],
                        numeric=range(6), id="tradeoff")

    def bluff_words(self, *, by_kind: bool = True) -> str:
        """Bluffs at the cut in words (per off-topic kind too with ``by_kind``); at 0 the upper bound, never a
        bare success message."""
        s = self.row
        parts = [upper_bound_words(s.bluffs, self.n_ood, "off-topic queries bluff")]
        parts += [upper_bound_words(s.bluffs_by_kind.get(kind, 0), n, f"{kind} ones")
                  for kind, n in self.ood_kinds.items() if n and by_kind]
        return "; ".join(parts) + "."

    def choice_words(self) -> str:
        """The cut chooser for the default goal: the rule, in sample vs cross-validated, and the conformal cut."""
        c = self.choice
        if not c:
            return ""

        def rates(cells):
            def one(c):  # a rate over no queries (no off-topic query was asked) has no percentage
                return f"{c['count']} (n/a)" if c["rate"] is None else count_rate_text(RateCell(**c))

            return ", ".join(f"{name.replace('_', ' ')} {one(cells[name])}" for name in ("answered", "bluffs"))

        cv = c["cross_validation"]
        c = {**c, "cut": c["in_sample_cut"]}  # this sentence is about the in-sample rule's cut
        head = f"Suggested cut for a bluff rate of at most {pct(c['goal']['max_bluff'])} ({c['rule']}): "
        if c["cut"] is None:
            text = head + "no cut reaches it on this set."
        elif not c["cross_validated"]:  # too few questions to hold any out (the notes say so)
            text = head + f"{cut_text(c['cut'])}; in sample {rates(c['in_sample'])}. " + " ".join(c.get("notes", ()))
        else:
            text = (head + f"{cut_text(c['cut'])}; in sample {rates(c['in_sample'])}; on queries it was not chosen on "
                    f"({cv['folds']}-fold cross-validation grouped by question, seed {cv['seed']}) "
                    f"{rates(c['cross_validated'])}.")
        conformal = (f" Conformal cut {cut_text(c['conformal_cut'])} ({c['conformal']})."
                     if c["conformal_cut"] is not None else f" Conformal: {c['conformal']}.")
        return text + conformal

    def svg(self) -> str:
        """The trade-off curve over all cuts (inline SVG), the report's cut marked."""
        c = self.curve
        n_in, n_ood = max(self.n_in, 1), self.n_ood
        lines = [
            Line(f"{OUTCOME_WORDS['answered']} (of {self.n_in})", [v / n_in for v in c.answered]),
            Line(f"{OUTCOME_WORDS['wrong_sources']} (of {self.n_in})", [v / n_in for v in c.wrong_sources]),
            Line(f"{OUTCOME_WORDS['no_answer']} (of {self.n_in})", [v / n_in for v in c.no_answer]),
        ]
        if n_ood:
            lines.append(Line(f"{OUTCOME_WORDS['bluffs']} (of {n_ood})", [v / n_ood for v in c.bluffs]))
        mark = f"cut {self.cut_text}: {self.row.answered} answered, {plural(self.row.bluffs, 'bluff')}"
        goal = self.max_bluff if n_ood else None
        n = self.native
        at, proposed = (self.cut, self.proposed) if n is None else (n.cut, n.proposed)
        second = proposed if proposed is not None and abs(proposed - at) > 1e-9 else None
        x_label = "cut (cosine distance)" if n is None else f"cut ({n.short}, {n.unit}; higher keeps)"
        return line_chart(c.cuts, lines, label=f"Abstention trade-off of {self.config} (keep {self.keep})",
                          x_label=x_label, y_label="share of queries", marker=at,
                          marker_label=mark, width=960, height=280, goal=goal,
                          goal_label=f"goal: at most {pct((goal or 0), None)} bluffs",
                          second_marker=second, second_label=(f"proposed cut {cut_text(second) if n is None else f'{second:g}'}"
                                        if second else ""))
