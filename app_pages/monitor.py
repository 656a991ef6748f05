"""Monitor: does the cut still hold on live queries? The refused share per period against what the calibration
predicts for the stated live mix.

The query log is the operator's (``ragdiag dashboard --monitor-log FILE``, or
``RAGDIAG_MONITOR_LOG``): a visitor never types a path here. The log is read
and embedded once per file and strategy, shared by every visitor
(:func:`ui.cache.monitor_reading`); a cut, keep, grouping or premise only
re-judges the distances read.
"""

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from ragdiag.analyses.monitor import (PERIODS, MonitorProgress, calibration, distance_words, gate_calibration,
                                      judge_log, measure_log)
from ragdiag.core.gate import Gate, cut_text
from ragdiag.evaluation.records import Config
from ragdiag.index.models import split_model
from ui import cache
from ui.context import context
from ui.fmt import rate
from ui.html import md_text
from ui.jobs import evaluation
from ui.monitor_view import periods_view
from ui.native_monitor_view import native_monitor_section


def page() -> None:
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
    left, right = st.columns([1, 2])
    with left:
        period = st.segmented_control("Group the log by", list(PERIODS), default="week", key="monitor_period",
                                      required=True) or "week"
    with right:
        share_pct = st.number_input(
            "Live queries off-topic, in percent (a premise)", min_value=0.0, max_value=100.0, value=None, step=1.0,
            key="offtopic", bind="query-params", placeholder="not stated: the refused share is not judged",
            help="The share refused depends on the traffic's mix: state how many live queries you expect to be "
                 "off-topic (from your product's analytics, or a sample you labelled). Without it the refused share "
                 "is shown and not judged.")
    share = None if share_pct is None else float(share_pct) / 100
    stat = Path(path).stat()
    store = cache.store(os.environ.get("RAGDIAG_CACHE") or None)
    cfg = Config.parse(config) if isinstance(config, str) else config
    if native_monitor_section(ev, token, ctx, path, stat.st_size, stat.st_mtime_ns, period, share):
        st.stop()  # the context reads the ranking's own score and the log holds it: the page is drawn on it


    def _calibrate():
        # the ground truth's closest distances, once per evaluation and configuration (the cut is applied below)
        return gate_calibration(ev, config, Gate(keep, cut), cache.encoder(), store=store)


    def _read(vectors, enc):
        def compute():
            bar = st.progress(0.0, text="Reading the query log…")

            def tick(p: MonitorProgress) -> None:
                bar.progress(min(p.bytes_read / max(p.bytes_total, 1), 1.0),
                             text=f"Reading the query log: {p.queries:,} queries")

            try:
                return measure_log(path, encoder=enc, chunk_vectors=vectors, store=store, progress=tick)
            finally:
                bar.empty()

        return compute


    try:
        cal0, vectors, enc = cache.by_evaluation("monitor-calibration", token, (str(config),), _calibrate)
        measured = cache.monitor_reading(path, stat.st_size, stat.st_mtime_ns, token.split(":", 1)[0], cfg.strategy,
                                         split_model(cfg.retriever)[1], _read(vectors, enc))
        gate = Gate(keep, cut)
        mon = judge_log(measured, calibration(cal0.distances, cal0.in_domain, gate, questions=cal0.questions), gate,
                        period=period, off_topic_share=share)
    except ValueError as exc:
        st.error(md_text(str(exc)))
        st.stop()

    st.markdown(f"#### {md_text(mon.headline)}")
    if mon.expected is None and mon.periods:
        st.caption("State the share of live queries that are off-topic in the field above to judge each "
                   f"{period} (the premise travels in the link as `?offtopic=`).")
    if mon.bad_count:
        st.warning(md_text(mon.bad_words))
    if not mon.periods:
        st.stop()

    cal = mon.calibration
    st.markdown(f"{config} at the cut on screen, **{cut_text(cut)}**, keep {keep}: the calibration ({md_text(cal.mix)}) "
                f"refuses {rate(cal.refused)} of its queries (answerable {rate(cal.refused_answerable)}, "
                f"off-topic {rate(cal.refused_ood)}).")
    if mon.expected is not None:
        st.markdown(f"{md_text(mon.expected.words()[0].upper() + mon.expected.words()[1:])}: a {period} of a few "
                    f"dozen queries scatters far more than that, so each {period} is judged against the band a "
                    f"{period} of its size shows.")
    row = periods_view(mon, period, key="monitor")
    if row is not None:
        st.markdown(md_text(row.sentence))
        far, near = st.columns(2)
        far.markdown("**Farthest from the corpus**")
        far.dataframe(pd.DataFrame([{"distance": round(d, 3), "query": q} for q, d in row.farthest]),
                      hide_index=True, key="monitor_far")
        near.markdown("**Nearest to the corpus**")
        near.dataframe(pd.DataFrame([{"distance": round(d, 3), "query": q} for q, d in row.nearest]),
                       hide_index=True, key="monitor_near")

    with st.expander("How we know"):
        rules = (f"- Per {period}: {md_text(mon.test)}.\n- Over the whole log: {md_text(mon.sequential)}.\n"
                 "- Together, with nothing moved and the stated share true, a false alarm anywhere on this page has a "
                 "chance of at most 5%, whatever the number of periods.\n") if mon.expected is not None else (
            "- The share refused is judged only under a stated live off-topic share: the same questions refuse more "
            "when more of the traffic is off-topic.\n")
        st.markdown(f"- Distance: {md_text(distance_words(config, keep))}.\n{rules}"
                    f"- {mon.lines:,} lines read; a line without `query` or with a time that is not ISO 8601 is "
                    "counted and listed, never dropped silently.")
        st.caption(f"Query log: {md_text(Path(path).name)} (set by the operator); read once and shared by every "
                   "visitor, judged again at each cut.")


page()
