"""Altair chart builders: pure ``DataFrame -> alt.Chart`` functions (no streamlit calls)."""

from __future__ import annotations

import altair as alt
import pandas as pd

__all__ = ["chunk_size_chart"]


def chunk_size_chart(summary: pd.DataFrame) -> alt.Chart:
    """Chunk sizes (characters) per strategy as a box plot drawn from ``frames.size_summary`` (one row per
    strategy: min, quartiles, max): the chart's data is one row per strategy, however many chunks there are
    (Altair refuses more than 5,000 rows)."""
    y = alt.Y("strategy:N", title=None, sort=list(summary["strategy"]))
    color = alt.Color("strategy:N", legend=None)
    tip = ["strategy:N", "min:Q", alt.Tooltip("p25:Q", title="25th percentile"), "median:Q",
           alt.Tooltip("p75:Q", title="75th percentile"), "max:Q"]
    base = alt.Chart(summary)
    whisker = base.mark_rule().encode(x=alt.X("min:Q", title="characters per chunk"), x2="max:Q", y=y, color=color,
                                      tooltip=tip)
    box = base.mark_bar(size=20).encode(x="p25:Q", x2="p75:Q", y=y, color=color, tooltip=tip)
    median = base.mark_tick(color="white", size=20, thickness=2).encode(x="median:Q", y=y, tooltip=tip)
    return (whisker + box + median).properties(height=alt.Step(44), title="Chunk sizes")
