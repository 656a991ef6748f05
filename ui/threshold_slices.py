"""The Threshold page's slices: one verdict sentence near the top, small multiples of each slice's distances below.

The slicing is fixed by the ground truth, never by a visitor after looking
(:func:`ragdiag.analyses.slice_cuts.choose_by`): ``language`` when the questions
come in two or more languages, else ``tag`` when the truth has tags, else
``doc``. The global cut is the proposal for the context's bluff goal (what
``threshold --max-bluff A --by ...`` judges the slices at).
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ragdiag.analyses.slice_cuts import SliceCuts, choose_by, cut_slices, query_labels
from ragdiag.analyses.threshold.choice import Goal
from ragdiag.core.gate import cut_text
from ragdiag.core.words import pct, rate_text
from ui import cache
from ui.chart_theme import scheme, themed
from ui.fmt import NEUTRAL, drop_constant, said_once
from ui.gate_charts import FAR, MARKER_COLORS, NEAR, SERIES_COLORS, mirrored_bins, x_extent
from ui.html import md_text
from ui.threshold_charts import MovingChart, apart

__all__ = ["slice_cuts_for", "slice_bins", "slice_multiples", "slice_verdict_line", "slice_section"]

#: Why the page slices as it does, in words (the operator's ground truth decides, not a toggle).
WHY_BY = {"language": "the questions come in more than one language",
          "tag": "the ground truth's questions carry tags",
          "doc": "the questions are in one language and carry no tags"}


def slice_cuts_for(ev, token: str, config: str, keep: int, max_bluff: float):
    """``(by, labels, SliceCuts or the reason there is none)`` for the configuration at the context's bluff goal."""
    inputs = cache.sweep_for(token, config, keep, ev)[0]
    by = cache.by_evaluation("slice_by", token, (), lambda: choose_by(ev.queries))  # every query's language: once

    def compute():
        labels = query_labels(ev.queries, by, ev.truth)
        try:
            return labels, cut_slices(inputs, labels, by=by, goal=Goal(max_bluff=max_bluff))
        except ValueError as exc:
            return labels, str(exc)

    labels, result = cache.by_evaluation("slice_cuts", token, (config, keep, max_bluff, by), compute)
    return by, labels, result


def slice_bins(inputs, labels, sliced: SliceCuts, *, step: float = 0.02) -> pd.DataFrame:
    """One frame for the small multiples: per slice, the mirrored histogram's bins (``layer`` = "bars") and the
    global and own cuts (``layer`` = "cut")."""
    parts = []
    kinds = inputs.kind_of()
    for row in sliced.rows:
        member = np.array([(labs is None and not i) or (labs is not None and row.label in labs)
                           for labs, i in zip(labels, inputs.in_domain)], dtype=bool)
        keys = ["answer" if i else (k if k in ("near", "far") else "ood")
                for i, k in zip(inputs.in_domain[member], np.asarray(kinds, dtype=object)[member])]
        values = np.where(inputs.in_domain[member], inputs.closest_holder[member], inputs.closest[member])
        bins = mirrored_bins(pd.DataFrame({"key": keys, "distance": values}), step=step)
        parts.append(bins.assign(slice=row.label, layer="bars", cut=np.nan, which=""))
        cuts = [("global cut", sliced.cut)] + ([("own cut", row.own_cut)] if row.own_cut is not None else [])
        parts.append(pd.DataFrame({"slice": row.label, "layer": "cut", "cut": [c for _, c in cuts],
                                   "which": [w for w, _ in cuts]}))
    return pd.concat(parts, ignore_index=True)


def slice_multiples(frame: pd.DataFrame, *, order: list[str], extent: tuple[float, float], title: str,
                    columns: int = 3) -> alt.Chart:
    """Small multiples, one per slice, on one shared x scale: answerable queries' closest answer-holding chunk
    above the axis, off-topic queries' closest chunk below, the global cut dashed and the slice's own solid."""
    lo, hi = extent
    x = alt.X("start:Q", title="distance of the closest chunk (cosine)", scale=alt.Scale(domain=[lo, hi], nice=False))
    color = alt.Color("series:N", title=None, scale=alt.Scale(domain=[s for s in SERIES_COLORS],
                                                              range=list(SERIES_COLORS.values())),
                      legend=alt.Legend(orient="top", labelLimit=0))
    bars = alt.Chart().transform_filter(alt.datum.layer == "bars").mark_bar(binSpacing=0).encode(
        x=x, x2="end:Q", y=alt.Y("y1:Q", title="queries (answerable ↑, off-topic ↓)",
                                 axis=alt.Axis(labelExpr="abs(datum.value)", tickMinStep=1, format="d")),
        y2="y0:Q", color=color,
        tooltip=["slice:N", "series:N", alt.Tooltip("start:Q", format=".3f", title="from"),
                 alt.Tooltip("end:Q", format=".3f", title="to"), alt.Tooltip("count:Q", title="queries")])
    rules = alt.Chart().transform_filter(alt.datum.layer == "cut").mark_rule(strokeWidth=2).encode(
        x=alt.X("cut:Q", title="distance of the closest chunk (cosine)", scale=alt.Scale(domain=[lo, hi], nice=False)),
        strokeDash=alt.StrokeDash("which:N", title=None, scale=alt.Scale(domain=["global cut", "own cut"],
                                                                         range=[[4, 3], [1, 0]]),
                                  legend=alt.Legend(orient="top")),
        color=alt.value(MARKER_COLORS["proposed"]),
        tooltip=["slice:N", "which:N", alt.Tooltip("cut:Q", format=".3f")])
    return alt.layer(bars, rules, data=frame).properties(width=230, height=200).facet(
        facet=alt.Facet("slice:N", sort=order, title=None, header=alt.Header(labelFontWeight="bold")),
        columns=columns, title=alt.TitleParams(title, anchor="start", subtitleColor=NEUTRAL, subtitle=[
            "each slice on the same distance scale: the global cut dashed, the slice's own cut (when it has a "
            "guarantee) solid"]))


def _quotes(sentence: str) -> str:
    """The library's sentence with its `label` quotes as typographic quotes (escape it with md_text after)."""
    import re

    return re.sub(r"`([^`]*)`", r"“\1”", sentence)


def slice_verdict_line(ev, token: str, config: str, keep: int, max_bluff: float) -> None:
    """The verdict sentence, for the top of the page (before the first chart)."""
    by, _, result = slice_cuts_for(ev, token, config, keep, max_bluff)
    if isinstance(result, str):
        st.caption(f"Per {by}: {md_text(result)}")
        return
    st.markdown(f"**Per {by}** (bluffs at most {pct(max_bluff)}): {md_text(_quotes(result.verdict.sentence))}")


def slice_section(ev, token: str, config: str, keep: int, max_bluff: float) -> None:
    """The section below the charts: each slice's distances on one scale, its rates and its own cut."""
    by, labels, result = slice_cuts_for(ev, token, config, keep, max_bluff)
    st.subheader(f"One cut for every {by}?")
    if isinstance(result, str):
        st.caption(md_text(result))
        return
    inputs = cache.sweep_for(token, config, keep, ev)[0]
    st.markdown(md_text(_quotes(result.verdict.sentence)))

    def chart() -> dict:  # the cut on screen does not change it: built once per evaluation, goal and theme
        frame = slice_bins(inputs, labels, result)
        values = np.r_[inputs.closest_holder[inputs.in_domain], inputs.closest[~inputs.in_domain]]
        extent = x_extent(values, result.cut, *(r.own_cut for r in result.rows if r.own_cut is not None), pad=0.02)
        return themed(slice_multiples(frame, order=[r.label for r in result.rows], extent=extent,
                                      title=f"Per {by} at the global cut {cut_text(result.cut)}"), kind).to_dict()

    kind = scheme()
    made = cache.by_evaluation("slice_multiples", token, (config, keep, max_bluff, by, kind), lambda: apart(chart()))
    st.container(key="slice_multiples_chart").altair_chart(MovingChart(*made, {}), key="slice_multiples")
    table, same = drop_constant(pd.DataFrame([{
        by: r.label, "questions": r.questions, "answerable (queries)": r.answerable,
        "off-topic (queries)": r.out_of_domain, f"answered at {cut_text(result.cut)}": rate_text(r.answered),
        f"bluffs at {cut_text(result.cut)}": rate_text(r.bluffs) if r.out_of_domain else "–",
        "own cut": cut_text(r.own_cut) if r.own_cut is not None else "none (no guarantee)",
        "answered at own cut": rate_text(r.answered_at_own_cut) if r.answered_at_own_cut is not None else "–",
        "against the rest": r.difference_words if r.difference_words != "-" else "–", "verdict": r.verdict}
        for r in result.rows]), keep=(by,))
    st.dataframe(table, hide_index=True, key="slice_table")
    st.caption((md_text(said_once(same, "Every slice")) + " " if same else "") + f"Sliced by {by} because {WHY_BY[by]} (fixed by the ground truth, not chosen here); labels: "
               f"{md_text(result.labels_from)}; {md_text(result.ood_rule)}. A slice needs its own cut when its "
               "answered rate at the global cut differs from the rest's with a 95% interval simultaneous over the "
               "slices (permutation max-T: labels moved with whole questions). The same table: "
               f"`python -m ragdiag threshold {md_text(config)} --max-bluff {max_bluff:g} --by {by}`.")
