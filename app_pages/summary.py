"""Summary: what to ship, in words, with the three numbers that support it at the gate's k."""

import streamlit as st

from ui.about import about_run
from ui.context import config_words, context, recommendation, use
from ui.fmt import pct, points, rate
from ui.html import md_text
from ui.jobs import evaluation
from ui.state import settings

st.title("Summary")
ev, token = evaluation(need=list(settings().strategies))  # a recommendation is over every configuration
rec = recommendation(ev, token)
ctx = context(ev, token)

st.markdown(f"### Ship **{md_text(rec.words)}** at cut {rec.cut:.4f}")
st.markdown(f"{rate(rec.answered)} of answerable queries answered; {rate(rec.bluffs)} of off-topic queries still get "
            f"sources; {rate(rec.lost)} lost. <span style='color:#757575'>{md_text(rec.config)} · keep at most "
            f"{rec.keep} chunks · k = {rec.k}</span>", unsafe_allow_html=True)

ru = rec.runner_up_rates or {}
c1, c2, c3 = st.columns(3)
for col, key, label, better_up in ((c1, "answered", "answered", True), (c2, "bluffs", "bluffs", False),
                                   (c3, "lost", "lost", False)):
    cell = getattr(rec, key)
    other = ru.get(key)
    delta, colour, arrow = None, "normal" if better_up else "inverse", "auto"
    if other is not None and cell.rate is not None and other.rate is not None:
        delta = f"{points(cell.rate - other.rate)} vs runner-up"
        if round(100 * (cell.rate - other.rate)) == 0:  # no change is neither good nor bad: grey, no arrow
            delta, colour, arrow = "same as the runner-up", "off", "off"
    col.metric(f"{label} (share of queries, 95% interval)", rate(cell), delta=delta,
               delta_color=colour, delta_arrow=arrow, border=True,
               help=f"{cell.count} queries; the difference is in percentage points.")
if rec.runner_up:
    st.caption(f"Runner-up: {md_text(config_words(rec.runner_up))}"
               + (f" at its own cut {rec.runner_up_cut:.4f}" if rec.runner_up_cut is not None else "") + ".")
st.caption(md_text(rec.why))

st.button("Use this configuration and cut", type="primary", key="use_recommended", on_click=use,
          kwargs={"config": rec.config, "cut": rec.cut, "keep": rec.keep},
          disabled=ctx.chosen and ctx.config == rec.config and abs(ctx.cut - rec.cut) < 1e-9,
          help="Sets the context (sidebar and URL) every page shows.")
if len(rec.best_set) > 1:
    with st.expander(f"{len(rec.best_set)} configurations are not shown worse than the best at k = {rec.k}"):
        st.markdown("\n".join(f"- {md_text(config_words(c))}" for c in rec.best_set))
st.caption(f"Cut chosen by: {md_text(rec.cut_method)} (goal: at most {pct(rec.max_bluff)} bluffs)."
           + (f" {md_text(rec.guarantee[:1].upper() + rec.guarantee[1:])}." if rec.guarantee else ""))
about_run(ev)
