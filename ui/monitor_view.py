"""The Monitor's periods, drawn the same for either score (the dense distance on the Monitor page, a ranking's own
score in :mod:`ui.native_monitor_view`): the refused-share chart, the periods' table and the pick of a period that
departed."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ragdiag.core.words import pct_span
from ui.chart_theme import themed
from ui.fmt import rate
from ui.monitor_charts import monitor_frame, refused_chart, refused_title, verdict


def periods_view(mon, period: str, *, key: str):
    """Draw ``mon``'s periods (chart, table; with a stated premise the predicted band and the verdict) and, when
    some period departed, a pick of one; return the period picked (None when none departed). Widget keys start
    with ``key``."""
    frame = monitor_frame(mon)
    st.altair_chart(themed(refused_chart(frame, title=refused_title(mon, period), period=period)), width="stretch",
                    key=f"{key}_chart")
    columns = {period: frame["period"], "queries": frame["queries"],
               "refused": [rate(p.refused) for p in mon.periods]}
    if mon.expected is not None:  # no constant columns: without a premise there is no prediction and no verdict
        columns["predicted (nothing moved)"] = [
            f"{p.band[0]:,}–{p.band[1]:,} ("
            f"{pct_span(p.band[0], p.band[1], of=max(p.queries, 1))})" for p in mon.periods]
        columns["verdict"] = [verdict(p) for p in mon.periods]
    st.dataframe(pd.DataFrame(columns), hide_index=True, key=f"{key}_table")
    moved = mon.flagged
    if not moved:
        return None
    names = [p.period for p in moved]
    pick = st.selectbox(f"A {period} that departed: what its queries ask", names, index=len(names) - 1,
                        key=f"{key}_pick")
    return next(p for p in moved if p.period == pick)
