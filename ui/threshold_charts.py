"""The Threshold page's two charts, built once and moved by their data: a slider move sends new rows, not a new chart.

Of the mirrored histogram and the trade-off (:mod:`ui.gate_charts`) only a few small named data sets depend on the
cut: the cut's rule and the counts beside it, the markers' rules and labels, and the lines of each title. The rest of
each chart (its layers, scales, tables of bins and steps, theme) is built, checked against the Vega-Lite schema and
themed once per evaluation, configuration, keep, goal and theme (:func:`ui.cache.by_evaluation`), and its tables are
turned into Arrow once. Each move fills in the cut's rows only.

Streamlit's browser side compares a chart's spec with the names of its data sets left out: the same spec with new
rows updates the drawn chart in place (Vega's ``view.data``), where a new spec (the cut in a title, a layer more)
makes it build a new chart from scratch. A title cannot hold a field, so each title's text is a Vega expression that
reads its lines from the cut's data set (:func:`title_rows`), picked by the chart's width as
:func:`ui.chart_theme.fit_title` picks them.

What is drawn is the chart :func:`~ui.gate_charts.mirrored_histogram` and :func:`~ui.gate_charts.tradeoff_curve`
give at the same cut (``tests/unit/test_threshold_charts.py``).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from ragdiag.analyses.gate_table import GateTable
from ragdiag.analyses.threshold.gate import sweep
from ragdiag.core.gate import cut_text

from ui import cache
from ui.chart_theme import TITLE_CHAR_PX, TITLE_WIDTHS, scheme, themed, wrap_lines
from ui.context import cut_stops
from ui.gate_charts import (CURVE_MARKS, HISTOGRAM_CUT, flips, gate_values, histogram_cut_rows, histogram_frame,
                            histogram_layout, histogram_title, mirrored_bins, tradeoff_frame, tradeoff_marks)

__all__ = ["MovingChart", "apart", "title_rows", "title_expr", "histogram_chart", "tradeoff_chart", "tradeoff_table",
           "TRADEOFF_CLICKS"]

#: A title's lines for every width of :data:`~ui.chart_theme.TITLE_WIDTHS` sit in one field: the widths' line sets
#: joined by tabs, each set's lines by new lines (one text column: a column per width made each move's data sets
#: ten times slower to turn into Arrow). The widths fall by a fixed step from the widest.
TITLE_FIELD, WIDTH_SEP, LINE_SEP = "title", "\t", "\n"
_WIDEST, _STEP = TITLE_WIDTHS[0], TITLE_WIDTHS[0] - TITLE_WIDTHS[1]
if list(TITLE_WIDTHS) != list(range(_WIDEST, TITLE_WIDTHS[-1] - 1, -_STEP)):  # pragma: no cover - a guard on edits
    raise ValueError("TITLE_WIDTHS must fall by a fixed step")


def title_rows(text: str, char_px: float = TITLE_CHAR_PX) -> dict[str, str]:
    """``text`` wrapped for each width of :data:`~ui.chart_theme.TITLE_WIDTHS` (the lines
    :func:`ui.chart_theme.fit_title` would give at that width), as the one field :func:`title_expr` reads."""
    if WIDTH_SEP in text or LINE_SEP in text:
        raise ValueError(f"a chart title is one line without tabs, got {text!r}")
    return {TITLE_FIELD: WIDTH_SEP.join(LINE_SEP.join(wrap_lines(text, max(8, int(w / char_px))))
                                        for w in TITLE_WIDTHS)}


def title_expr(dataset: str) -> dict[str, str]:
    """A title's text as a Vega expression: the lines :func:`title_rows` put in the first row of ``dataset`` for
    the widest of :data:`~ui.chart_theme.TITLE_WIDTHS` at or under the chart's width (the narrowest under it)."""
    last = len(TITLE_WIDTHS) - 1
    field = f"data('{dataset}')[0].{TITLE_FIELD}"
    return {"expr": f"length(data('{dataset}')) ? split(split({field}, '\\t')[clamp(ceil(({_WIDEST} - width) / "
                    f"{_STEP}), 0, {last})], '\\n') : ''"}


class MovingChart:
    """What ``st.altair_chart`` reads of a chart (its ``to_dict()``): a themed spec made once, its tables already
    Arrow (as Streamlit would turn them), and the rows of the data sets that hold the cut."""

    def __init__(self, frame: dict[str, Any], tables: dict[str, bytes], rows: dict[str, list[dict]]):
        self._frame, self._tables, self._rows = frame, tables, rows

    def to_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The spec (a copy: Streamlit takes its data sets out), with every data set: the cut's first."""
        spec = copy.deepcopy(self._frame)
        spec["datasets"] = {**copy.deepcopy(self._rows), **self._tables}
        return spec


def apart(spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bytes]]:
    """A chart's spec without its data sets, and those data sets in Arrow as Streamlit sends them (for a
    :class:`MovingChart`: a chart sent again and again is turned into Arrow once)."""
    from streamlit.dataframe_util import convert_anything_to_arrow_bytes

    spec = dict(spec)
    return spec, {name: convert_anything_to_arrow_bytes(rows) for name, rows in spec.pop("datasets", {}).items()}


def _made(chart, kind: str, title_from: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    """``chart`` themed (:func:`ui.chart_theme.themed`), its title read from ``title_from``'s rows; its tables apart,
    in Arrow as Streamlit sends them."""
    spec, tables = apart(themed(chart, kind).to_dict())
    spec["title"] = {**spec["title"], "text": title_expr(title_from)}
    return spec, tables


def histogram_chart(token: str, config: str, keep: int, frame: pd.DataFrame, *, cut: float,
                    markers: dict[str, float | None] | None = None, kind: str | None = None) -> MovingChart:
    """:func:`~ui.gate_charts.mirrored_histogram` of ``frame`` (the gate's values of ``config`` at ``keep`` in the
    evaluation ``token``) at ``cut``, for ``st.altair_chart``: its frame made once per layout and theme."""
    kind = kind or scheme()
    bins, values = cache.by_evaluation("threshold_histogram_bins", token, (config, keep),
                                       lambda: (mirrored_bins(frame), gate_values(frame)))
    layout = histogram_layout(frame, cut=cut, markers=markers, bins=bins)
    made = cache.by_evaluation("threshold_histogram", token, (config, keep, dataclasses.astuple(layout), kind),
                               lambda: _made(histogram_frame(frame, layout=layout), kind, HISTOGRAM_CUT))
    rows = histogram_cut_rows(frame, cut=cut, layout=layout, values=values)
    rows[HISTOGRAM_CUT] = [{**row, **title_rows(histogram_title(frame, cut, values=values))}
                           for row in rows[HISTOGRAM_CUT]]
    return MovingChart(*made, rows)


def tradeoff_chart(token: str, config: str, keep: int, curve: pd.DataFrame, *, cut: float, title: str,
                   extent: tuple[float, float], goal: float | None = None, goal_kind: str = "bluffs",
                   markers: dict[str, float | None] | None = None, queries: dict[str, tuple] | None = None,
                   pick: str | None = None, kind: str | None = None) -> MovingChart:
    """:func:`~ui.gate_charts.tradeoff_curve` of ``curve`` (``config`` at ``keep`` in the evaluation ``token``;
    ``queries`` are that evaluation's) at ``cut`` with ``title``, for ``st.altair_chart``: its frame made once per
    goal, x range and theme."""
    kind = kind or scheme()
    extent = (float(extent[0]), float(extent[1]))
    made = cache.by_evaluation("threshold_tradeoff", token, (config, keep, goal, goal_kind, extent, pick, kind),
                               lambda: _made(tradeoff_frame(curve, goal=goal, goal_kind=goal_kind, extent=extent,
                                                            queries=queries, pick=pick), kind, CURVE_MARKS))
    rows = tradeoff_marks(cut, markers, extent=extent)
    lines = title_rows(title)
    rows[CURVE_MARKS] = [{**row, **lines} for row in rows[CURVE_MARKS]]
    return MovingChart(*made, rows)


def tradeoff_table(inputs: GateTable) -> pd.DataFrame:
    """Every cut where a query changes outcome (the slider's stops), the counts at each and the queries that change
    at the next: independent of the cut on screen, made once per evaluation, configuration and keep."""
    stops = cut_stops(np.concatenate([inputs.closest, inputs.closest_holder]))
    at_stops = sweep(inputs, stops)
    ans_ids = [q for q, i in zip(inputs.query_ids, inputs.in_domain) if i]
    ood_ids = [q for q, i in zip(inputs.query_ids, inputs.in_domain) if not i]
    # a stop refuses the distances at or over it: the queries that change at the next stop are those in [stop, next)
    nxt = [*stops[1:], float("inf")]
    return pd.DataFrame({
        "cut": [cut_text(c) for c in stops],
        "answered (queries)": [r.answered for r in at_stops.rows()],
        "bluffs (queries)": [r.bluffs for r in at_stops.rows()],
        "answered from the next cut": flips(nxt, ans_ids, inputs.closest_holder[inputs.in_domain]),
        "bluff from the next cut": flips(nxt, ood_ids, inputs.closest[~inputs.in_domain]),
    })


#: The session's count of clicks on the trade-off curve: the chart's key (a new chart after each click, the same
#: chart from one cut to the next).
TRADEOFF_CLICKS = "_tradeoff_clicks"
