"""History: is retrieval getting better or worse over the last merges? The gate's measures over every kept run."""

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from ragdiag.present.history import HistoryError, open_history
from ui.context import context_config
from ui.fmt import rate
from ui.history_charts import PICK, trend_chart, trend_frame
from ui.html import md_text
from ui.chart_theme import themed
from ragdiag.core.words import cut_as_given


def page() -> None:
    st.title("History")
    path = os.environ.get("RAGDIAG_HISTORY", "")
    if not path or not Path(path).is_file():
        st.info("No run history here yet. Runs are kept by `ragdiag history add OUT` (an `eval --out` folder) and "
                "`ragdiag gate --history`; serve them with `ragdiag dashboard --history ragdiag-history.sqlite`.")
        st.stop()
    try:
        hist = open_history(path, create=False)
    except HistoryError as exc:
        st.error(md_text(str(exc)))
        st.stop()

    with hist:
        configs = hist.configs()
        if not configs:
            st.info("The history holds no run yet: `ragdiag history add OUT` keeps one.")
            st.stop()
        ctx_config = context_config()  # the context's configuration first, when the history holds it
        config = st.selectbox("Configuration", configs, key=f"history_config_{ctx_config}",
                              index=configs.index(ctx_config) if ctx_config in configs else 0,
                              help="the configuration you ship (the context's, when the history holds it); the gate's "
                                   "runs hold the gated one")
        points = hist.trend(config)
        last = points[-1]
        m = last.measures
        gated = f"the gate said **{last.run.verdict}**" if last.run.verdict else "not gated"
        st.markdown(f"#### Latest run {last.run.id} ({md_text(last.run.label or last.run.time)}): found in the top "
                    f"{m.k} {rate(m.recall)}, answered {rate(m.answered)}, bluffs {rate(m.bluffs)}; {gated}")
        accepted = [p for p in points if p.run.accepted and p.segment == last.segment]
        if len(accepted) >= 2:
            first = accepted[0]
            st.markdown(f"Since run {first.run.id} on this ground truth: found in the top {m.k} "
                        f"{rate(first.measures.recall)} → {rate(accepted[-1].measures.recall)}; answered "
                        f"{rate(first.measures.answered)} → {rate(accepted[-1].measures.answered)}; "
                        f"{len(accepted)} accepted runs; failed gate candidates: {sum(not p.run.accepted for p in points)}.")
        frame = trend_frame(points)
        event = st.altair_chart(themed(trend_chart(frame, config=config)), on_select="rerun", selection_mode=PICK,
                                key="history_chart")
        st.caption(f"Each run's own cut and keep (stamped in it): cut {cut_as_given(m.cut)}, "
                   f"keep {m.keep} in the latest. "
                   "Click a point to see which questions changed in that run.")

        picked = [p.get("run") for p in (event.selection.get(PICK) or [])] if event else []
        ids = [p.run.id for p in points]
        default = ids.index(int(picked[0])) if picked and picked[0] in ids else len(ids) - 1
        run_id = st.selectbox("Run", ids, index=default, key=f"history_run_{default}",
                              format_func=lambda i: next(f"run {p.run.id} · {p.run.time.replace('T', ' ')}"
                                                         + (f" · {p.run.label}" if p.run.label else "")
                                                         + f" · {p.run.verdict or 'not gated'}"
                                                         for p in points if p.run.id == i))
        prev, changes = hist.changes(run_id, config)
        if prev is None:
            st.markdown(f"Run {run_id} has no earlier accepted run on the same ground truth to compare with.")
        else:
            better = sum(c.better for c in changes)
            st.markdown(f"**Run {run_id} against run {prev.id}**: {better} queries better, "
                        f"{len(changes) - better} worse.")
            if changes:
                table = pd.DataFrame([{"query": c.query_id, "question": c.question_id or "off-topic", "what": c.measure,
                                       "before": "yes" if c.before else "no", "now": "yes" if c.after else "no",
                                       "change": "better" if c.better else "worse", "text": c.text}
                                      for c in sorted(changes, key=lambda c: (c.better, c.query_id))])
                st.dataframe(table, hide_index=True, key="history_changes")

        runs = hist.runs()
        with st.expander(f"Every run ({len(runs)})"):
            st.dataframe(pd.DataFrame([{"run": r.id, "time": r.time.replace("T", " "), "label": r.label or "–",
                                        "commit": r.commit[:10] or "–", "ground truth": r.truth_sha256[:12]
                                        + (" (changed)" if r.truth_changed else ""),
                                        "gate": r.verdict or "not gated", "configurations": ", ".join(r.configs)}
                                       for r in runs]), hide_index=True, key="history_runs")
            st.caption(f"History file: {md_text(str(path))}. A run on another ground truth starts a new trend.")


page()
