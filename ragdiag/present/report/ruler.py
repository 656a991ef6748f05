"""The report's optional appendix section "Can this set tell?": the ruler check of the ground truth, as figures.

The check itself (:func:`ragdiag.authoring.ruler.ruler`) lives above the report: whoever builds the report (the
``report`` command, the dashboard's download) computes it and passes this plain, frozen
:class:`RulerSection` (``Ruler.section()``) to :func:`ragdiag.present.report.build_report`, which only renders it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.tables import Table
from ...core.words import pct, pct_span

__all__ = ["RulerSection", "HeadroomRow"]


@dataclass(frozen=True)
class HeadroomRow:
    """Recall at one k: the configurations' rates (shares), the questions every configuration finds and none
    finds, and whether the measure is saturated (its sentence says why)."""

    measure: str
    low: float
    high: float
    ceiling: int
    floor: int
    saturated: bool
    sentence: str


@dataclass(frozen=True)
class RulerSection:
    """The verdict, the saturated measures, the BM25-alone share, the flagged queries and the smallest difference
    the set resolves (points of R@``k``), each with its sentence; figures only, computed before the report."""

    verdict: str
    headline: str
    k: int
    questions: int
    configs: tuple[str, ...]
    headroom: tuple[HeadroomRow, ...]
    saturated: tuple[str, ...]
    bm25: str | None
    bm25_share: float | None
    flagged: tuple[str, ...]
    resolvable_points: float | None
    problems: tuple[str, ...]
    shortcuts: str  # the sentences of the shortcut, leakage and discrimination checks
    leakage: str
    discrimination: str

    def __post_init__(self):
        if self.k < 1 or self.questions < 0:
            raise ValueError(f"a ruler section needs k >= 1 and a question count; got k={self.k}, "
                             f"questions={self.questions}")
        if self.bm25_share is not None and not 0.0 <= self.bm25_share <= 1.0:
            raise ValueError(f"bm25_share must be a share in [0, 1], got {self.bm25_share}")

    def figures(self) -> tuple[tuple[str, str], ...]:
        """(label, value) pairs: the verdict and the four figures of ``ruler --json``."""
        return (("verdict", self.verdict),
                ("saturated", ", ".join(self.saturated) or "none"),
                ("BM25 alone at rank 1", "no BM25 configuration ran" if self.bm25_share is None else
                 f"{pct(self.bm25_share)} ({self.bm25})"),
                ("flagged queries", ", ".join(self.flagged) or "none"),
                ("smallest difference resolved", "none" if self.resolvable_points is None else
                 f"{self.resolvable_points:g} points of R@{self.k}"))

    def table(self) -> Table:
        """One row per k: the configurations' range, the questions at the ceiling and floor, saturated or not."""
        return Table.of(["measure", "configurations", "found by every configuration", "found by none",
                         "saturated"],
                        ([h.measure, pct_span(h.low, h.high), h.ceiling, h.floor,
                          "yes" if h.saturated else "no"] for h in self.headroom),
                        numeric=(2, 3), id="ruler-table")
