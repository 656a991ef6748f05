"""Altair charts of the funnel, hubs and cost views: pure ``DataFrame -> alt.Chart`` (no streamlit calls)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.fmt import ACCENT, NEUTRAL
from ui.gate_charts import FIT_X

__all__ = ["hub_chart", "pareto_chart"]


def hub_chart(df: pd.DataFrame) -> alt.Chart:
    """k-occurrence of the most frequent chunks against its expectation, boilerplate-flagged chunks coloured."""
    d = df.assign(kind=[b if b else ("hub" if h else "chunk") for b, h in zip(df["boilerplate"], df["hub"])])
    bars = alt.Chart(d).mark_bar().encode(
        y=alt.Y("chunk:N", sort="-x", title=None, axis=alt.Axis(labelOverlap=False, labelLimit=0)),
        x=alt.X("occurrences:Q", title="queries with the chunk in their top k"),
        color=alt.Color("kind:N", title=None, legend=alt.Legend(orient="top")),
        tooltip=["chunk:N", "occurrences:Q", "questions:Q", alt.Tooltip("expected:Q", format=".2f"),
                 alt.Tooltip("ratio:Q", format=".1f"), "boilerplate:N", "displaced:Q"],
    )
    rule = alt.Chart(d.head(1)).mark_rule(color=NEUTRAL, strokeDash=[4, 3]).encode(x="expected:Q")
    n_hubs = int(d["hub"].sum()) if "hub" in d else 0
    return (bars + rule).properties(height=alt.Step(18), autosize=FIT_X, title=alt.TitleParams(
        f"{n_hubs} of these {len(d)} chunks are hubs", anchor="start",
        subtitleColor=NEUTRAL, subtitle="queries with the chunk in their top k; dashed: expected if uniform"))


def pareto_chart(df: pd.DataFrame, cost: str, pareto: str, quality: str) -> alt.Chart:
    """Recall against a cost on a log axis (one slow configuration does not squash the rest); Pareto-optimal
    configurations filled in the accent colour and labelled, the others grey and named in the tooltip."""
    d = df.copy()
    d["label"] = [c if p else "" for c, p in zip(d["config"], d[pareto])]
    positive = d[cost] > 0
    scale = alt.Scale(type="log") if positive.all() and len(d) else alt.Scale(zero=False)
    base = alt.Chart(d).encode(
        x=alt.X(f"{cost}:Q", title=f"{cost} (log scale)" if scale.type == "log" else cost, scale=scale),
        y=alt.Y(f"{quality}:Q", title=quality, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        tooltip=["config:N", alt.Tooltip(f"{cost}:Q", format=".2f"), alt.Tooltip(f"{quality}:Q", format=".1%"),
                 alt.Tooltip("low:Q", format=".1%", title="95% low"), alt.Tooltip("high:Q", format=".1%",
                                                                               title="95% high"), f"{pareto}:N"],
    )
    color = alt.condition(f"datum['{pareto}']", alt.value(ACCENT), alt.value("#bdbdbd"))
    err = base.mark_rule().encode(y="low:Q", y2="high:Q", color=color)
    pts = base.mark_point(size=90, filled=True).encode(color=color)
    text = base.mark_text(dx=8, align="left", fontSize=11).encode(text="label:N")
    n = int(d[pareto].sum())
    return (err + pts + text).properties(height=300, autosize=FIT_X, title=alt.TitleParams(
        f"{n} configuration{'s' if n != 1 else ''} on the Pareto front of {quality} and {cost}", anchor="start",
        subtitleColor=NEUTRAL, subtitle=["filled blue: no other has at least its recall at no more cost;", "bars: 95% intervals"]))
