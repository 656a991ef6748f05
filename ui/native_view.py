"""The Threshold page on the ranking's own score: the switch, the slider, the sentence, both charts, the export.

The context carries the score (``score=native`` in the URL, default dense) and
the visitor's cut on it (``native_cut``). Everything here is computed by the
library (:mod:`ragdiag.analyses.threshold.score`,
:mod:`ragdiag.analyses.threshold.native_cuts`) and drawn: a chunk among the
top ``Gate.window`` (the smaller of ``k`` and ``keep``) is kept when its score is at least the cut.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ragdiag.analyses.threshold.score import ScoreTable
from ui.gate_charts import FIT_X, PLOT_HEIGHT
from ragdiag.core.words import OUTCOME_WORDS, cut_as_given

__all__ = ["native_table", "score_switch", "native_section", "native_stops", "native_counts", "SWITCH_LABEL",
           "native_summary_line", "infeasible_verdict", "native_report_cut", "native_cells"]

SWITCH_LABEL = "Score the gate reads"
SLIDER_KEY = "threshold_native_cut"
_COLORS = {"answerable": "#546e7a", "off-topic": "#c62828"}


def native_table(ev, config: str, keep: int) -> ScoreTable | None:
    """The configuration's native-score table at ``keep``, or None when its ranking has no score of its own."""
    from ragdiag.analyses.threshold.score import score_table
    from ragdiag.core.gate import Gate

    try:
        return score_table(ev, config, Gate(keep))
    except (ValueError, KeyError):
        return None


def score_switch(where, ctx, table: ScoreTable | None) -> str:
    """The dense / native switch (drawn only when the configuration has a native score); the score read."""
    from ui.context import use_score

    if table is None:
        return "dense"
    names = {"dense": "distance", "native": table.score.split(" (")[0]}
    key = "threshold_score"
    if st.session_state.get(key) != ctx.score:
        st.session_state[key] = ctx.score
    where.segmented_control(SWITCH_LABEL, ["dense", "native"], format_func=names.get, key=key, required=True,
                            label_visibility="collapsed",  # the options say it; the first screen stays as tall
                            on_change=lambda: use_score(st.session_state.get(key) or "dense"),
                            help="The dense model's cosine distance of each kept chunk (lower keeps), or the score "
                                 f"the ranking itself gives ({table.score}, higher keeps): cut where your stack "
                                 "filters. The context and the URL carry it (score=native).")
    return ctx.score


def native_stops(table: ScoreTable, *also: float) -> list[float]:
    """The cuts a slider stops at: just above each score (4 significant digits) and one keeping every scored
    chunk, with ``also`` (the proposed and the chosen cut)."""
    from ragdiag.analyses.threshold.native_cuts import _candidates

    return sorted({float(c) for c in _candidates(table) if np.isfinite(c)} | {float(a) for a in also if a is not None})


def native_counts(table: ScoreTable, cut: float) -> dict[str, int]:
    """Per outcome, the queries at ``cut`` (kept when ``score >= cut``)."""
    ind = table.in_domain
    kept = np.isfinite(table.top) & (table.top >= cut)
    answered = np.isfinite(table.holder) & (table.holder >= cut)
    return {"answered": int((answered & ind).sum()), "wrong_sources": int((kept & ~answered & ind).sum()),
            "no_answer": int((~kept & ind).sum()), "bluffs": int((kept & ~ind).sum()), "n_in": int(ind.sum()),
            "n_ood": int((~ind).sum())}


def _sentence(table: ScoreTable, cut: float, whose: str) -> str:
    c, w = native_counts(table, cut), OUTCOME_WORDS
    head = (f"At {table.score} ≥ {cut_as_given(cut)} ({whose}): of {c['n_in']} answerable queries, {c['answered']} "
            f"{w['answered']}, {c['wrong_sources']} {w['wrong_sources']}, {c['no_answer']} {w['no_answer']}")
    if not c["n_ood"]:
        return head + "; no off-topic queries to count bluffs on."
    return head + f"; {c['bluffs']} of {c['n_ood']} off-topic queries get passages ({w['bluffs']})."


def _proposed_rule(proposed: float | None, cut: float) -> list:
    """A dashed rule at the proposed cut when the cut on screen is another."""
    if proposed is None or proposed == cut:
        return []
    return [alt.Chart(pd.DataFrame({"cut": [proposed], "marker": ["proposed"]})).mark_rule(
        color="#6a1b9a", strokeDash=[5, 3], strokeWidth=2).encode(x="cut:Q", tooltip=["marker:N", "cut:Q"])]


def _histogram(table: ScoreTable, cut: float, proposed: float | None = None) -> alt.LayerChart:
    ind = table.in_domain
    ans = table.holder[ind][np.isfinite(table.holder[ind])]
    ood = table.top[~ind][np.isfinite(table.top[~ind])]
    values = np.concatenate([ans, ood, [cut], [] if proposed is None else [proposed]])
    step = float(np.ptp(values)) / 30 or 1.0
    # the cut on a bin edge: a bar is wholly kept (right of the cut) or wholly refused
    edges = cut + step * np.arange(np.floor((values.min() - cut) / step), np.floor((values.max() - cut) / step) + 2)
    rows = []
    for name, v, sign in (("answerable", ans, 1), ("off-topic", ood, -1)):
        counts, _ = np.histogram(v, bins=edges)
        rows += [{"series": name, "start": float(a), "end": float(b), "count": int(n), "y": sign * int(n), "y0": 0}
                 for a, b, n in zip(edges[:-1], edges[1:], counts) if n]
    frame = pd.DataFrame(rows, columns=["series", "start", "end", "count", "y", "y0"])
    c = native_counts(table, cut)
    x = alt.X("start:Q", title=f"{table.score} ({table.unit}), higher keeps")
    bars = alt.Chart(frame).mark_bar().encode(
        x=x, x2="end:Q", y2="y0:Q",
        y=alt.Y("y:Q", title="queries (answerable ↑, off-topic ↓)",
                scale=alt.Scale(domain=[1.2 * min(-1, int(frame["y"].min()) if len(frame) else -1),
                                        1.2 * max(1, int(frame["y"].max()) if len(frame) else 1)]),
                axis=alt.Axis(labelExpr="abs(datum.value)", tickMinStep=1, format="d")),
        color=alt.Color("series:N", title=None, scale=alt.Scale(domain=list(_COLORS), range=list(_COLORS.values())),
                        legend=alt.Legend(orient="top", labelLimit=0)),
        tooltip=["series:N", alt.Tooltip("start:Q", format=".4g", title="from"),
                 alt.Tooltip("end:Q", format=".4g", title="to"), alt.Tooltip("count:Q", title="queries")])
    rule = alt.Chart(pd.DataFrame({"cut": [cut]})).mark_rule(color="#1565c0", strokeWidth=2).encode(x="cut:Q")
    return alt.layer(bars, rule, *_proposed_rule(proposed, cut)).properties(
        height=PLOT_HEIGHT, autosize=FIT_X, title=alt.TitleParams(
            f"At {cut_as_given(cut)}: {c['answered']} answerable answered, {c['bluffs']} off-topic bluff",
            anchor="start",
            subtitle=["answerable: the best score of a chunk holding the answer; off-topic: the best score"]))


def _curve(table: ScoreTable, stops: list[float], cut: float, goal: float | None,
           proposed: float | None = None) -> alt.LayerChart:
    rows = []
    for s in stops:
        c = native_counts(table, s)
        rows.append({"cut": s, "measure": "answered", "rate": c["answered"] / c["n_in"] if c["n_in"] else None})
        rows.append({"cut": s, "measure": "bluffs", "rate": c["bluffs"] / c["n_ood"] if c["n_ood"] else None})
    frame = pd.DataFrame(rows)
    colors = {"answered": "#00897b", "bluffs": "#c62828"}
    line = alt.Chart(frame).mark_line(interpolate="step-after").encode(
        x=alt.X("cut:Q", title=f"cut ({table.score}, {table.unit})"),
        y=alt.Y("rate:Q", title="share of its queries", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("measure:N", title=None, scale=alt.Scale(domain=list(colors), range=list(colors.values())),
                        legend=alt.Legend(orient="top", labelLimit=0)),
        tooltip=[alt.Tooltip("cut:Q", format=".4g"), "measure:N", alt.Tooltip("rate:Q", format=".1%")])
    layers = [line, alt.Chart(pd.DataFrame({"cut": [cut]})).mark_rule(color="#1565c0", strokeWidth=2).encode(
        x="cut:Q")]
    layers += _proposed_rule(proposed, cut)
    if goal is not None:
        layers.append(alt.Chart(pd.DataFrame({"rate": [goal]})).mark_rule(color="#757575", strokeDash=[4, 3])
                      .encode(y="rate:Q"))
    c = native_counts(table, cut)
    return alt.layer(*layers).properties(height=PLOT_HEIGHT, autosize=FIT_X, title=alt.TitleParams(
        f"Answered {c['answered']}/{c['n_in']}, bluffs {c['bluffs']}/{c['n_ood']} at {cut_as_given(cut)}",
        anchor="start",
        subtitle=["share of answerable and of off-topic queries at every cut (higher keeps less)"]))


def native_section(ev, ctx, table: ScoreTable, max_bluff: float | None) -> None:
    """The slider, the sentence, both charts and the export, on the native score."""
    import yaml

    from ragdiag.analyses.threshold.native_cuts import filter_words
    from ragdiag.analyses.threshold.score import native_document, score_cut
    from ui.chart_theme import themed
    from ui.context import use_native_cut
    from ui.html import md_text

    choice = score_cut(table, max_bluff) if max_bluff is not None else None
    proposed = choice.cut if choice is not None else None
    cut = ctx.native_cut if ctx.native_cut is not None else proposed
    stops = native_stops(table, proposed, ctx.native_cut)
    if cut is None:
        cut = stops[len(stops) // 2]
    whose = "your choice" if ctx.native_cut is not None else "the proposed cut"
    if len(stops) >= 2:
        shown = min(stops, key=lambda s: (abs(s - cut), s))
        if st.session_state.get(SLIDER_KEY) != shown:
            st.session_state[SLIDER_KEY] = shown
        st.select_slider(f"Cut on the {table.score}: higher refuses more", stops, format_func=lambda v: f"{v:g}",
                         key=SLIDER_KEY, on_change=lambda: use_native_cut(st.session_state[SLIDER_KEY]),
                         help="Stops just above each query's score (4 significant digits). A chunk among the top "
                              "passages is kept when its score is at least the cut.")
    st.markdown(md_text(_sentence(table, cut, whose)))
    h, t = st.columns(2)
    h.altair_chart(themed(_histogram(table, cut, proposed)), width="stretch")
    t.altair_chart(themed(_curve(table, stops, cut, max_bluff, proposed)), width="stretch")
    if choice is None:
        st.info("A cut on the ranking's own score is proposed for a bluff goal: choose \"bluffs at most\".")
        return
    if proposed is None:
        st.warning(md_text(f"No cut on the {table.score}: {choice.guarantee}."))
        return
    st.markdown(md_text(f"Proposed: {filter_words(proposed, table)} ({choice.method}): {choice.guarantee}."))
    st.button(f"Use this cut: {proposed:g}", key="use_native_cut", on_click=use_native_cut, args=(None,),
              disabled=ctx.native_cut is None, help="Back to the proposed cut on this score.")
    doc = native_document(ev, table, choice, keep=ctx.keep)
    st.download_button(f"Download the cut on the {table.score} (YAML)", key="export_native",
                       mime="application/x-yaml", file_name=f"native-{table.config.replace('/', '-')}.yaml",
                       data="# ragdiag thresholds export: a cut on the ranking's own score (higher keeps).\n"
                            + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100),
                       help="The proposed cut with its score, direction, stamp and each consumer's setting where "
                            "that consumer filters on this score (threshold --score native --export).")


def native_summary_line(ev, config: str, keep: int, max_bluff: float) -> str:
    """The Summary's line for the native score: how to filter where the stack filters, and the rates there."""
    from ragdiag.analyses.threshold.native_cuts import filter_words
    from ragdiag.analyses.threshold.score import score_cut
    from ragdiag.core.words import rate_text

    table = native_table(ev, config, keep)
    if table is None:
        return f"{config} ranks on no score of its own here: its cut is the dense model's cosine distance."
    choice = score_cut(table, max_bluff)
    if choice.cut is None:
        return f"No cut on the {table.score} of {config}: {choice.guarantee}."
    return (f"On the score your stack filters on: {filter_words(choice.cut, table)} ({choice.method}): "
            f"{OUTCOME_WORDS['answered']} {rate_text(choice.answered)}, {OUTCOME_WORDS['bluffs']} "
            f"{rate_text(choice.bluffs)}.")


def infeasible_verdict(ev, token: str, ctx) -> str:
    """``recommend``'s sentence when no configuration meets the bluff and the answered goals together ("" when
    they can be met, or when no answered goal is set)."""
    from ragdiag.analyses.recommend import recommend
    from ragdiag.core.gate import Gate
    from ui import cache

    if ctx.min_answered is None or not any(not c.external for c in ev.results):
        return ""
    rec = cache.by_evaluation("recommend_goals", token, (ctx.keep, ctx.max_bluff, ctx.min_answered),
                              lambda: recommend(ev, Gate(ctx.keep), goal=ctx.goal))
    return rec.verdict if rec.feasible is False else ""


def native_report_cut(ev, config: str, keep: int, max_bluff: float, cut: float | None):
    """The cut the report on the native score is at (:func:`ragdiag.present.report.native.native_cut`: ``cut``, or
    the one proposed for the bluff goal), or None when the configuration has no score of its own or no cut can be
    proposed on it."""
    from ragdiag.present.report.native import native_cut

    table = native_table(ev, config, keep)
    if table is None:
        return None
    try:
        return native_cut(table, max_bluff, cut)
    except ValueError:
        return None


def native_cells(table: ScoreTable, cut: float) -> dict:
    """The four outcomes (answered, wrong_sources, no_answer, bluffs) at ``cut`` on the native score, with their
    intervals: the distance gate's rate rows on the adapted table, the report's numbers."""
    from ragdiag.analyses.threshold.native_current import as_gate_table
    from ragdiag.analyses.threshold.rates import rate_rows

    g, cuts = as_gate_table(table, [cut])
    return dict(rate_rows(g, cuts)[0].outcomes())
