"""The Monitor page's frame and chart: the refused share per period against the calibration (pure builders).

:func:`monitor_frame` turns a :class:`~ragdiag.analyses.monitor.Monitor` into
one row per period; :func:`refused_chart` draws it: the calibration's expected
band across the whole chart (grey), each period's refused share as a point with
its 95% interval, a flagged period in red (a loss: the gate refuses what it was
not calibrated to refuse, or the questions moved), the others in the accent.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.fmt import ACCENT
from ui.gate_charts import FIT_X

__all__ = ["monitor_frame", "refused_chart", "LOSS", "CHART_HEIGHT"]

#: Red means loss (PRESENTING.md): a period that departed from the calibration.
LOSS = "#c62828"
#: The plot area's own height in pixels (titles, axes and the legend come on top of it: FIT_X).
CHART_HEIGHT = 280
_STATES = ["as calibrated", "departed"]


def monitor_frame(mon) -> pd.DataFrame:
    """One row per period: period, queries, refused (rate, low, high, count), expected low/high, p, state, text.

    >>> monitor_frame(type("M", (), {"periods": ()})()).columns.tolist()[:4]
    ['period', 'queries', 'refused', 'low']
    """
    rows = [{"period": p.period, "queries": p.queries, "refused": p.refused.rate, "low": p.refused.low,
             "high": p.refused.high, "count": p.refused.count, "expected_low": p.expected.low,
             "expected_high": p.expected.high, "ks": p.ks, "drift_p": p.drift_p,
             "state": _STATES[int(p.flagged)], "text": p.sentence} for p in mon.periods]
    cols = ["period", "queries", "refused", "low", "high", "count", "expected_low", "expected_high", "ks", "drift_p",
            "state", "text"]
    return pd.DataFrame(rows, columns=cols)


def refused_chart(frame: pd.DataFrame, *, title: str, period: str, height: int = CHART_HEIGHT) -> alt.LayerChart:
    """The refused share per period (point and 95% interval) over the calibration's expected band (grey)."""
    order = list(frame["period"])
    x = alt.X("period:O", title=period, sort=order, axis=alt.Axis(labelAngle=0 if len(order) <= 12 else -45))
    y_scale = alt.Scale(domain=[0, 1])
    # the calibration's band is one interval for every period: drawn across the whole plot
    expected = frame[["expected_low", "expected_high"]].head(1)
    band = alt.Chart(expected).mark_rect(color="#9e9e9e", opacity=0.25).encode(
        y=alt.Y("expected_low:Q", scale=y_scale), y2="expected_high:Q",
        tooltip=[alt.Tooltip("expected_low:Q", title="calibration expects from", format=".0%"),
                 alt.Tooltip("expected_high:Q", title="to", format=".0%")])
    colour = alt.Color("state:N", title=None, scale=alt.Scale(domain=_STATES, range=[ACCENT, LOSS]),
                       legend=alt.Legend(orient="top"))
    rule = alt.Chart(frame).mark_rule(strokeWidth=2).encode(x=x, y=alt.Y("low:Q", scale=y_scale), y2="high:Q",
                                                            color=colour)
    tooltip = [alt.Tooltip("period:O", title=period), alt.Tooltip("queries:Q", title="queries"),
               alt.Tooltip("text:N", title="verdict")]
    points = alt.Chart(frame).mark_point(filled=True, size=110).encode(
        x=x, y=alt.Y("refused:Q", title="share of queries refused", scale=y_scale, axis=alt.Axis(format=".0%")),
        color=colour, tooltip=tooltip)
    subtitle = [f"per {period}: the share of live queries the gate refuses (nothing under the cut), with its 95% "
                "interval; grey band: what the calibration (the ground truth's queries) expects"]
    return alt.layer(band, rule, points).properties(
        title=alt.Title(title, subtitle=subtitle, anchor="start"), height=height, autosize=FIT_X)
