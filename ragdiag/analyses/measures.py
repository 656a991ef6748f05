"""The measures the field reports, per configuration, with intervals over questions.

Reads the per-question values of :class:`~ragdiag.evaluation.collection.JudgedRuns`
(:mod:`ragdiag.core.graded`) and gives each mean its interval over questions:

- success@k and all found@k (shares of questions): the clustered Wilson
  interval of every recall in ragdiag (:func:`~ragdiag.analyses.compare.intervals.clustered_rate`);
- nDCG@k, MAP@k and recall@k (means of values in [0, 1]): the cluster-robust
  t interval (:func:`~ragdiag.analyses.compare.intervals.clustered_mean`),
  whose coverage is checked by simulation in the tests (about 95% from 30
  questions on, for skewed values with many zeros and ones).

One measure carries verdicts (:func:`primary_measure`): nDCG@10 for
document-level judgments (the BEIR and MTEB headline), success@k for span gold
(ragdiag's R@k: did a passage holding the answer reach the top k). The others
are descriptive beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..core.stats import Interval
from ..core.words import interval

__all__ = ["MEASURE_NAMES", "MEASURE_WORDS", "INTERVAL_WORDS", "MeasureCell", "MeasureRow", "primary_measure",
           "measure_cell", "measure_rows", "format_measure_rows", "BestComparison", "compare_with_best",
           "descriptive_differences"]

#: Column names, as tables print them (``{k}`` is the cut-off).
MEASURE_NAMES = {"ndcg": "nDCG@{k}", "map": "MAP@{k}", "recall": "recall@{k}", "success": "hit rate@{k}",
                 "all_found": "all found@{k}"}
#: Each measure in plain words, for captions and docs.
MEASURE_WORDS = {
    "ndcg": "how high the relevant documents rank, the better grades weighing more (1 = the best order possible)",
    "map": "average precision at each relevant item found, over all relevant items",
    "recall": "share of all relevant items found in the top k",
    "success": "questions with at least one relevant item in the top k",
    "all_found": "questions with every relevant item in the top k",
}
INTERVAL_WORDS = ("95% intervals over questions: clustered Wilson for the shares of questions (hit rate, all "
                  "found), cluster-robust t for the means (nDCG, MAP, recall)")
_SHARES = ("success", "all_found")


@dataclass(frozen=True)
class MeasureCell:
    """One measure's mean over questions and its interval."""

    measure: str
    k: int
    interval: Interval

    @property
    def name(self) -> str:
        """``nDCG@10``, ``hit rate@4``..."""
        return MEASURE_NAMES[self.measure].format(k=self.k)

    def words(self) -> str:
        """``55% (42–67)`` for a share of questions, ``0.71 (0.62–0.80)`` for a mean."""
        iv = self.interval
        if self.measure in _SHARES:
            return interval(iv.estimate, iv.low, iv.high)
        return f"{iv.estimate:.2f} ({iv.low:.2f}–{iv.high:.2f})"


@dataclass(frozen=True)
class MeasureRow:
    """One configuration's measures; ``cells`` in :data:`MEASURE_NAMES` order."""

    config: str
    cells: tuple[MeasureCell, ...]

    def cell(self, measure: str) -> MeasureCell:
        """The cell of ``measure``."""
        return next(c for c in self.cells if c.measure == measure)


def primary_measure(document_level: bool) -> str:
    """``ndcg`` for document-level judgments, ``success`` for span gold: the measure that carries verdicts."""
    return "ndcg" if document_level else "success"


def measure_cell(values, groups, measure: str, k: int) -> MeasureCell:
    """The mean of per-question ``values`` with its interval over the clusters ``groups``."""
    from .compare.intervals import clustered_mean, clustered_rate

    iv = clustered_rate(values > 0.5, groups) if measure in _SHARES else clustered_mean(values, groups)
    return MeasureCell(measure, k, iv)


def measure_rows(runs, *, k: int = 10, measures: Sequence[str] = tuple(MEASURE_NAMES),
                 mask=None) -> list[MeasureRow]:
    """Every configuration's measures at ``k``, sorted by the primary measure (best first, then by label).

    ``mask``: a boolean per entry of ``runs.questions`` (a slice); default all.
    """
    import numpy as np

    primary = primary_measure(runs.collection.document_level)
    groups = np.asarray(runs.groups, dtype=object)
    keep = np.ones(len(groups), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    rows = []
    for cfg in runs.configs:
        cells = tuple(measure_cell(runs.values(cfg, m, k=k)[keep], groups[keep], m, k) for m in measures)
        rows.append(MeasureRow(cfg.label, cells))
    if primary in measures:
        rows.sort(key=lambda r: (-r.cell(primary).interval.estimate, r.config))
    return rows


def format_measure_rows(rows: Sequence[MeasureRow], primary: str) -> str:
    """A plain-text table: configuration, then each measure (the primary one marked)."""
    from ..core.tables import format_rows

    table = [{"config": r.config,
              **{(c.name + (" (primary)" if c.measure == primary else "")): c.words() for c in r.cells}}
             for r in rows]
    return format_rows(table)


@dataclass(frozen=True)
class BestComparison:
    """The best configuration at one measure against another, with the family's simultaneous interval."""

    best: str
    other: str
    measure: str
    k: int
    estimate: float
    low: float
    high: float
    p_adjusted: float
    family: int

    @property
    def tied(self) -> bool:
        """Not shown worse than the best (its simultaneous interval reaches 0)."""
        return not (self.low > 0 or self.high < 0)

    def sentence(self) -> str:
        """``E/dense: 0.04 under E/hybrid (−0.01 to +0.09), simultaneous over 2: statistically tied``."""
        share = self.measure in _SHARES
        scale, unit = (100, " points") if share else (1, "")

        def f(x):
            return (f"{scale * x:+.0f}" if share else f"{x:+.2f}").replace("-", "−")

        size = f"{abs(scale * self.estimate):.0f}" if share else f"{abs(self.estimate):.2f}"
        words = "statistically tied with the best" if self.tied else "shown worse than the best"
        where = (f"simultaneous over {self.family}; p = {self.p_adjusted:.3g} adjusted" if self.family > 1
                 else f"this pair alone; sign-flip p = {self.p_adjusted:.3g}")
        return (f"{self.other}: {size}{unit} under {self.best} at {MEASURE_NAMES[self.measure].format(k=self.k)} "
                f"({f(-self.high)} to {f(-self.low)}, {where}): {words}")


def compare_with_best(runs, *, k: int = 10, measure: str | None = None, alpha: float = 0.05) -> list[BestComparison]:
    """The configuration best at ``measure`` (default: the primary) against every other, over questions.

    One family: the max-statistic sign-flip permutation over questions of
    :func:`~ragdiag.analyses.compare.simultaneous.max_t` gives each difference
    its interval simultaneous over the comparisons and its adjusted p; a
    configuration is *statistically tied with the best* when its interval reaches 0.
    """
    import numpy as np

    from .compare.simultaneous import max_t

    measure = measure or primary_measure(runs.collection.document_level)
    rows = measure_rows(runs, k=k, measures=(measure,))
    if len(rows) < 2:
        return []
    labels = [r.config for r in rows]
    by_label = {c.label: c for c in runs.configs}
    values = np.array([runs.values(by_label[label], measure, k=k) for label in labels], dtype=np.float64)
    pairs = [(0, i) for i in range(1, len(labels))]
    fam, _ = max_t(values, list(runs.groups), pairs, alpha=alpha)
    return [BestComparison(labels[0], labels[r.b], measure, k, r.estimate, r.low, r.high, r.p_adjusted, len(pairs))
            for r in fam]


def descriptive_differences(runs, best: str, other: str, *, k: int = 10,
                            measures: Sequence[str] = ("map", "recall", "success")) -> str:
    """``other`` minus ``best`` on the descriptive measures, each with its question-bootstrap interval (no verdict).

    ``MAP@10 −0.03 (−0.08 to +0.02), recall@10 …``: this pair alone, for reading beside the primary verdict.
    """
    from .compare.paired import bootstrap_difference

    by_label = {c.label: c for c in runs.configs}
    parts = []
    for m in measures:
        a = runs.values(by_label[other], m, k=k)
        b = runs.values(by_label[best], m, k=k)
        d = bootstrap_difference(a, b, list(runs.groups))
        scale, unit = (100, " pts") if m in _SHARES else (1, "")

        def f(x):
            return (f"{scale * x:+.0f}" if m in _SHARES else f"{x:+.2f}").replace("-", "−")

        parts.append(f"{MEASURE_NAMES[m].format(k=k)} {f(d.estimate)}{unit} ({f(d.low)} to {f(d.high)})")
    return ", ".join(parts)
