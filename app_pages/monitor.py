"""Monitor: does the cut still hold on live queries? The refused share per period against the calibration.

The query log is the operator's (``ragdiag dashboard --monitor-log FILE``, or
``RAGDIAG_MONITOR_LOG``): a visitor never types a path here.
"""

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from ragdiag.analyses.monitor import MIN_SHIFT, MonitorProgress, PERIODS, distance_words, gate_calibration, monitor_log
from ragdiag.core.gate import Gate, cut_text
from ui import cache
from ui.context import context
from ui.fmt import rate
from ui.html import md_text
from ui.jobs import evaluation
from ui.monitor_charts import monitor_frame, refused_chart
from ui.chart_theme import themed

st.title("Monitor")
path = os.environ.get("RAGDIAG_MONITOR_LOG", "")
if not path or not Path(path).is_file():
    st.info("No query log is configured. The operator serves one with `ragdiag dashboard --monitor-log FILE` "
            "(or `./run.sh dashboard --monitor-log FILE`, or the environment variable `RAGDIAG_MONITOR_LOG`): "
            "a JSON Lines or CSV file with `query` and `time` (ISO 8601) per line. The same report on the "
            "command line: `ragdiag monitor CONFIG --log FILE`.")
    st.stop()

ev, token = evaluation()
ctx = context(ev, token)
config, cut, keep = ctx.config, ctx.cut, ctx.keep
period = st.segmented_control("Group the log by", list(PERIODS), default="week", key="monitor_period",
                              required=True) or "week"
stat = Path(path).stat()


def _compute():
    gate = Gate(keep, cut)
    store = cache.store(os.environ.get("RAGDIAG_CACHE") or None)
    cal, vectors, enc = gate_calibration(ev, config, gate, cache.encoder(), store=store)
    bar = st.progress(0.0, text="Reading the query log…")

    def tick(p: MonitorProgress) -> None:
        bar.progress(min(p.bytes_read / max(p.bytes_total, 1), 1.0), text=f"Reading the query log: {p.queries:,} queries")

    try:
        return monitor_log(path, encoder=enc, chunk_vectors=vectors, calibration=cal, gate=gate, period=period,
                           store=store, progress=tick)
    finally:
        bar.empty()


try:
    mon = cache.by_evaluation("monitor", token, (config, keep, cut, period, path, stat.st_size, stat.st_mtime_ns),
                              _compute)
except ValueError as exc:
    st.error(md_text(str(exc)))
    st.stop()

st.markdown(f"#### {md_text(mon.headline)}")
if mon.bad_count:
    st.warning(md_text(mon.bad_words))
if not mon.periods:
    st.stop()

cal = mon.calibration
st.markdown(f"{config} at the cut on screen, **{cut_text(cut)}**, keep {keep}: the calibration ({md_text(cal.mix)}) "
            f"refuses {rate(cal.refused)} of its queries (answerable {rate(cal.refused_answerable)}, "
            f"off-topic {rate(cal.refused_ood)}).")
frame = monitor_frame(mon)
moved = mon.flagged
band = f"{100 * cal.refused.low:.0f}–{100 * cal.refused.high:.0f}%"
title = (f"{', '.join(p.period for p in moved)} left the calibration's {band}" if moved
         else f"Every {period} within the calibration's {band}")
st.altair_chart(themed(refused_chart(frame, title=title, period=period)), width="stretch", key="monitor_chart")

table = pd.DataFrame({
    period: frame["period"], "queries": frame["queries"],
    "refused": [rate(p.refused) for p in mon.periods],
    "calibration expects": [f"{100 * p.expected.low:.0f}–{100 * p.expected.high:.0f}%" for p in mon.periods],
    "KS distance": frame["ks"].round(2), "p (Holm)": frame["drift_p"].map(lambda v: f"{v:.2g}"),
    "verdict": ["departed" if p.flagged else "as calibrated" for p in mon.periods]})
st.dataframe(table, hide_index=True, key="monitor_table")

if moved:
    names = [p.period for p in moved]
    pick = st.selectbox(f"A {period} that departed: what its queries ask", names, index=len(names) - 1,
                        key="monitor_pick")
    row = next(p for p in moved if p.period == pick)
    st.markdown(md_text(row.sentence))
    far, near = st.columns(2)
    far.markdown("**Farthest from the corpus**")
    far.dataframe(pd.DataFrame([{"distance": round(d, 3), "query": q} for q, d in row.farthest]),
                  hide_index=True, key="monitor_far")
    near.markdown("**Nearest to the corpus**")
    near.dataframe(pd.DataFrame([{"distance": round(d, 3), "query": q} for q, d in row.nearest]),
                   hide_index=True, key="monitor_near")

with st.expander("How we know"):
    st.markdown(f"- Distance: {md_text(distance_words(config, keep))}.\n"
                f"- A {period} departs when its refused share's 95% interval and the calibration's do not overlap, "
                "or when its distances differ: "
                f"{md_text(mon.test)}, with a KS distance of at least {MIN_SHIFT:.2f}.\n"
                f"- {mon.lines:,} lines read; a line without `query` or with a time that is not ISO 8601 is "
                "counted and listed, never dropped silently.")
    st.caption(f"Query log: {md_text(Path(path).name)} (set by the operator).")
