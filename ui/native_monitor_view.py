"""The Monitor page on the ranking's own score (context ``score=native``): the log's ``score`` per line against the
ground truth's, at the cut on that score.

A reranker's or a fused list's score cannot be recomputed from a query alone, so the log must carry it: on every
line ``score``, the best score of that kind among the chunks the stack kept for the query, in the cut's units.
Everything is computed by the library (:mod:`ragdiag.analyses.native_monitor`, ``monitor --cut-from`` a native
cut's path): the period analysis runs on the negated score, and a line is kept when its score is at least the cut.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ragdiag.core.words import pct

__all__ = ["native_monitor_section", "needs_score_words"]


def needs_score_words(score: str) -> str:
    """The sentence said when the context is native and the log holds no score: what the log must hold."""
    return (f"This query log holds no `score` per line, so the cut on the {score} cannot be monitored: each line "
            f"must hold `score`, the best {score} your stack's ranking gave the chunks it kept for the query, in the "
            "cut's units (for example `{\"query\": \"...\", \"time\": \"2026-01-05T10:00:00\", \"score\": 13.9}`); "
            "below, the cut on the dense model's cosine distance.")


def _read(path: str):
    def compute():
        from ragdiag.analyses.monitor import measure_log
        from ragdiag.analyses.native_monitor import native_measure

        return measure_log(path, encoder=None, chunk_vectors=None, measure=native_measure)

    return compute


def native_monitor_section(ev, token: str, ctx, path: str, size: int, mtime_ns: int, period: str,
                           share: float | None) -> bool:
    """With the context on the native score: the switch, then the whole page on the log's scores (True: the
    page is drawn), or the sentence saying what the log must hold (False: the page goes on with the dense
    distance). With the dense score, or a configuration with no score of its own, nothing (False)."""
    from dataclasses import replace

    from ragdiag.analyses.monitor import judge_log
    from ragdiag.analyses.native_monitor import NativeKeep, log_has_scores, native_calibration
    from ui import cache
    from ui.fmt import rate
    from ui.html import md_text
    from ui.monitor_view import periods_view
    from ui.native_view import native_report_cut, native_table, score_switch

    if ctx.score != "native":
        return False
    table = native_table(ev, ctx.config, ctx.keep)
    if table is None:
        st.info(md_text(f"{ctx.config} ranks on no score of its own: the Monitor reads the dense model's cosine "
                        "distance."))
        return False
    if not log_has_scores(path):
        st.info(needs_score_words(table.score))
        return False
    score_switch(st, ctx, table)
    at = native_report_cut(ev, ctx.config, ctx.keep, ctx.max_bluff, ctx.native_cut)
    if at is None:
        st.info(md_text(f"No cut on the {table.score} of {ctx.config} for at most {pct(ctx.max_bluff)} bluffs: "
                        "choose one on the Threshold page."))
        return True
    keep = NativeKeep(at.cut)
    try:
        # the log's scores, read once per file and shared (they do not depend on the cut or the configuration)
        measured = cache.monitor_reading(path, size, mtime_ns, "", "native-score", None, _read(path))
        cal = native_calibration(table, keep)  # the ground truth's best scores, negated as the log's are
        mon = replace(judge_log(measured, cal, keep, period=period, off_topic_share=share), cut_said=at.text)
    except ValueError as exc:
        st.error(md_text(str(exc)))
        return True
    st.markdown(f"#### {md_text(mon.headline)}")
    if mon.bad_count:
        st.warning(md_text(mon.bad_words))
    if not mon.periods:
        return True
    st.markdown(f"{md_text(ctx.config)} at the cut on screen, **{md_text(at.text)}** (higher keeps), keep "
                f"{ctx.keep}: the calibration ({md_text(cal.mix)}) refuses {rate(cal.refused)} of its queries "
                f"(answerable {rate(cal.refused_answerable)}, off-topic {rate(cal.refused_ood)}).")
    row = periods_view(mon, period, key="monitor_native")
    if row is not None:
        low, high = st.columns(2)  # the period holds negated scores: shown as the scores they are
        low.markdown("**Lowest scores (farthest from the corpus)**")
        low.dataframe(pd.DataFrame([{"score": round(-d, 4), "query": q} for q, d in row.farthest]),
                      hide_index=True, key="monitor_native_low")
        high.markdown("**Highest scores (nearest to the corpus)**")
        high.dataframe(pd.DataFrame([{"score": round(-d, 4), "query": q} for q, d in row.nearest]),
                       hide_index=True, key="monitor_native_high")
    with st.expander("How we know"):
        st.markdown(f"- Score: each query's best {md_text(table.score)} ({table.unit}) among the chunks kept: the "
                    f"log's `score` per line, and the ground truth's in {md_text(ctx.config)}'s top "
                    f"{table.window}; a line is kept when its score is at least the cut.\n"
                    f"- Per {period}: {md_text(mon.test)}.\n- {mon.lines:,} lines read; a line without `query`, "
                    "`score` or an ISO 8601 time is counted and listed, never dropped silently.")
    return True
