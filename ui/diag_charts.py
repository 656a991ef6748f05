"""Altair charts of the funnel, hubs and cost views: pure ``DataFrame -> alt.Chart`` (no streamlit calls)."""

from __future__ import annotations

import altair as alt
import pandas as pd


__all__ = ["hub_chart", "pareto_chart"]


def hub_chart(df: pd.DataFrame) -> alt.Chart:
    """k-occurrence of the most frequent chunks against its expectation, boilerplate-flagged chunks coloured."""
    d = df.assign(kind=[b if b else ("hub" if h else "chunk") for b, h in zip(df["boilerplate"], df["hub"])])
    bars = alt.Chart(d).mark_bar().encode(
        y=alt.Y("chunk:N", sort="-x", title=None),
        x=alt.X("occurrences:Q", title="queries with the chunk in their top k"),
        color=alt.Color("kind:N", title=None),
        tooltip=["chunk:N", "occurrences:Q", "questions:Q", alt.Tooltip("expected:Q", format=".2f"),
                 alt.Tooltip("ratio:Q", format=".1f"), "boilerplate:N", "displaced:Q"],
    )
    rule = alt.Chart(d.head(1)).mark_rule(color="black", strokeDash=[4, 3]).encode(x="expected:Q")
    return (bars + rule).properties(height=alt.Step(18), title="k-occurrence (dashed: expected if uniform)")


def pareto_chart(df: pd.DataFrame, cost: str, pareto: str, quality: str) -> alt.Chart:
    """Recall against a cost, Pareto-optimal configurations filled and labelled."""
    base = alt.Chart(df).encode(
        x=alt.X(f"{cost}:Q", title=cost, scale=alt.Scale(zero=False)),
        y=alt.Y(f"{quality}:Q", title=quality, scale=alt.Scale(domain=[0, 1])),
        tooltip=["config:N", alt.Tooltip(f"{cost}:Q", format=".2f"), alt.Tooltip(f"{quality}:Q", format=".3f"),
                 alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f"), f"{pareto}:N"],
    )
    err = base.mark_rule().encode(y="low:Q", y2="high:Q")
    pts = base.mark_point(size=90).encode(
        shape=alt.Shape(f"{pareto}:N", title="Pareto-optimal"),
        fill=alt.condition(f"datum['{pareto}']", alt.value("#2e7d32"), alt.value("white")),
        color=alt.value("#2e7d32"),
    )
    text = base.mark_text(dx=8, align="left", fontSize=11).encode(text="config:N")
    return (err + pts + text).properties(height=300, title=f"{quality} against {cost}")
