"""The Monitor page's frame and chart: the refused share per period against what the calibration predicts.

:func:`monitor_frame` turns a :class:`~ragdiag.analyses.monitor.Monitor` into
one row per period; :func:`refused_chart` draws it: per period, the band a
period of its size shows with nothing moved under the stated off-topic share
(grey; none when no share was stated), each period's refused share as a point
with its 95% interval, a flagged period in red (a loss: the gate refuses what
it was not calibrated to refuse, or the questions moved), the others in the
accent.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.fmt import ACCENT
from ui.gate_charts import FIT_X

__all__ = ["monitor_frame", "refused_chart", "verdict", "LOSS", "CHART_HEIGHT"]

#: Red means loss (PRESENTING.md): a period that departed from the calibration.
LOSS = "#c62828"
#: The plot area's own height in pixels (titles, axes and the legend come on top of it: FIT_X).
CHART_HEIGHT = 280
_STATES = ["as predicted", "departed"]


def verdict(row) -> str:
    """A period's verdict in one or two words: ``as predicted``, ``more refused``, ``fewer refused``, or a dash."""
    if row.band is None:
        return "–"
    return f"{row.direction} refused" if row.flagged else "as predicted"


def monitor_frame(mon) -> pd.DataFrame:
    """One row per period: period, queries, refused (rate, low, high, count), predicted low/high, state, text.

    >>> monitor_frame(type("M", (), {"periods": ()})()).columns.tolist()[:4]
    ['period', 'queries', 'refused', 'low']
    """
    rows = [{"period": p.period, "queries": p.queries, "refused": p.refused.rate, "low": p.refused.low,
             "high": p.refused.high, "count": p.refused.count,
             "predicted_low": None if p.band is None else p.band[0] / max(p.queries, 1),
             "predicted_high": None if p.band is None else p.band[1] / max(p.queries, 1),
             "state": _STATES[int(p.flagged)], "text": p.sentence} for p in mon.periods]
    cols = ["period", "queries", "refused", "low", "high", "count", "predicted_low", "predicted_high", "state", "text"]
    return pd.DataFrame(rows, columns=cols)


def refused_chart(frame: pd.DataFrame, *, title: str, period: str, height: int = CHART_HEIGHT) -> alt.LayerChart:
    """The refused share per period (point and 95% interval) over each period's predicted band (grey)."""
    order = list(frame["period"])
    x = alt.X("period:O", title=period, sort=order, axis=alt.Axis(labelAngle=0 if len(order) <= 12 else -45))
    y_scale = alt.Scale(domain=[0, 1])
    colour = alt.Color("state:N", title=None, scale=alt.Scale(domain=_STATES, range=[ACCENT, LOSS]),
                       legend=alt.Legend(orient="top"))
    rule = alt.Chart(frame).mark_rule(strokeWidth=2).encode(x=x, y=alt.Y("low:Q", scale=y_scale), y2="high:Q",
                                                            color=colour)
    tooltip = [alt.Tooltip("period:O", title=period), alt.Tooltip("queries:Q", title="queries"),
               alt.Tooltip("text:N", title="verdict")]
    points = alt.Chart(frame).mark_point(filled=True, size=110).encode(
        x=x, y=alt.Y("refused:Q", title="share of queries refused", scale=y_scale, axis=alt.Axis(format=".0%")),
        color=colour, tooltip=tooltip)
    layers = [rule, points]
    subtitle = [f"per {period}: the share of live queries the gate refuses (nothing under the cut), with its 95% "
                "interval"]
    judged = frame.dropna(subset=["predicted_low"])
    if not judged.empty:
        # each period's own band: a period of 50 queries scatters far more than one of 5,000
        band = alt.Chart(judged).mark_bar(color="#9e9e9e", opacity=0.3, size=22).encode(
            x=x, y=alt.Y("predicted_low:Q", scale=y_scale), y2="predicted_high:Q",
            tooltip=[alt.Tooltip("period:O", title=period),
                     alt.Tooltip("predicted_low:Q", title="predicted from", format=".0%"),
                     alt.Tooltip("predicted_high:Q", title="to", format=".0%")])
        layers.insert(0, band)
        subtitle.append(f"grey: what a {period} of that size refuses with nothing moved, under the stated "
                        "off-topic share")
    return alt.layer(*layers).properties(
        title=alt.Title(title, subtitle=subtitle, anchor="start"), height=height, autosize=FIT_X)


def refused_title(mon, period: str) -> str:
    """The refused-share chart's title: the periods flagged, every period within the prediction, or not judged."""
    moved = mon.flagged
    if mon.expected is None:
        return f"The share refused per {period} (not judged: no off-topic share stated)"
    if moved:
        return f"{', '.join(p.period for p in moved)} refused outside what the calibration predicts"
    return f"Every {period} within what the calibration predicts"
