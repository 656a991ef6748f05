"""The report's optional section "The last runs": the run history of the report's configuration as one chart.

``report --history FILE`` adds it: the last N runs of the configuration
(:class:`ragdiag.present.history.History`), each with found in the top k,
answered and bluffs at the run's stamped cut and their 95% intervals, the
gate's verdict and the destroyed needles in a table beside the chart.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.svg import IntervalSeries, interval_chart
from ...core.tables import Table
from ..history import TrendPoint, open_history
from ...core.words import interval

__all__ = ["HistorySection", "history_section"]


def _rate(iv) -> str:
    return "n/a" if iv.trials == 0 else f"{interval(iv.estimate, iv.low, iv.high)}"


@dataclass(frozen=True)
class HistorySection:
    """The last runs of one configuration, oldest first."""

    config: str
    points: tuple[TrendPoint, ...]
    total: int  # runs of the configuration in the file

    @property
    def words(self) -> str:
        """The sentence over the chart."""
        n = len(self.points)
        changed = sum(p.run.truth_changed for p in self.points[1:])
        return (f"The last {n} of {self.total} kept runs of {self.config}"
                + (f"; the ground truth changed {changed} time(s) among them (compare only runs on the same one)"
                   if changed else "") + ".")

    def svg(self) -> str:
        """Found, answered and bluffs per run, each with its interval."""
        cats = [f"run {p.run.id}" for p in self.points]
        series = []
        for name, key in (("found in the top k", "recall"), ("answered", "answered"), ("bluffs", "bluffs")):
            ivs = [getattr(p.measures, key) for p in self.points]
            series.append(IntervalSeries(name, [i.estimate if i.trials else float("nan") for i in ivs],
                                         [i.low for i in ivs], [i.high for i in ivs]))
        return interval_chart(cats, series, label=f"{self.config} over the last runs",
                              width=max(480, 70 * len(cats) + 80))

    def table(self) -> Table:
        """One row per run: when, what, the gate's verdict and the four measures."""
        return Table.of(["run", "time", "label", "gate", f"found in the top {self.points[-1].measures.k}",
                         "answered", "bluffs", "destroyed"],
                        ([p.run.id, p.run.time.replace("T", " "), p.run.label or "–", p.run.verdict or "not gated",
                          _rate(p.measures.recall), _rate(p.measures.answered), _rate(p.measures.bluffs),
                          p.measures.destroyed] for p in self.points),
                        numeric=(0, 7), id="history-table")


def history_section(path, config: str, *, last: int = 10) -> HistorySection | None:
    """The last ``last`` runs of ``config`` in the history file ``path`` (None when it holds none).

    :class:`~ragdiag.present.history.HistoryError` for a file that is not a history.
    """
    if last < 1:
        raise ValueError(f"last must be >= 1, got {last}")
    with open_history(path, create=False) as hist:
        points = hist.trend(config)
    if not points:
        return None
    return HistorySection(config, tuple(points[-last:]), len(points))
