"""Altair chart builders: pure ``DataFrame -> alt.Chart`` functions (no streamlit calls)."""

from __future__ import annotations

import altair as alt
import pandas as pd

__all__ = ["chunk_size_chart"]


def chunk_size_chart(sizes: pd.DataFrame) -> alt.Chart:
    """Distribution of chunk sizes (characters) per strategy (``frames.chunk_sizes``)."""
    return (
        alt.Chart(sizes)
        .mark_boxplot(extent="min-max")
        .encode(x=alt.X("chars:Q", title="characters per chunk"), y=alt.Y("strategy:N", title=None),
                color=alt.Color("strategy:N", legend=None))
        .properties(height=alt.Step(44), title="Chunk sizes")
    )
