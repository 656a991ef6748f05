"""Threshold: where to put the distance cut, how sure we are of what it does, and who still bluffs there."""

import pandas as pd
import streamlit as st

from ragdiag.compare.intervals import upper_bound_words
from ragdiag.defaults import DEFAULT_KEEP, DEFAULT_MAX_BLUFF
from ragdiag.threshold.gate import GATE_DISTANCE, bluffs_at
from ragdiag.threshold.choice import Goal
from ragdiag.threshold.rates import rate_rows
from ui.frames import distance_series, rates_frame, under_cut_counts
from ui.charts import distance_histogram, tradeoff_chart
from ui.html import md_text, quote_html
from ui.model_cut import model_cut_caption
from ui.state import choice_for, config_select, cut_keep_sliders, distances_for, evaluation, sweep_for

st.title("Threshold")
st.caption("The retriever always returns something; the gate is the only part that can say no. It keeps at most "
           "N chunks, only those closer than the cut. Answerable queries should keep their answer; "
           "out-of-domain queries should get nothing (otherwise they bluff).")
st.caption(f"Distance: {GATE_DISTANCE}.")
ev, token = evaluation()
config = config_select(ev)


@st.fragment
def gate_panel():
    """Reruns alone when the cut or keep moves: only the gate is evaluated; the sweep is cached."""
    c1, c2 = st.columns([3, 1])
    cut, keep = cut_keep_sliders(c1, c2)
    inputs, table, curve = sweep_for(token, config, int(keep), ev)
    row = table.row(cut)
    rates = rate_rows(inputs, [cut])[0]
    n = {"answered": table.n_in, "wrong_sources": table.n_in, "no_answer": table.n_in, "bluffs": table.n_ood,
         **{f"bluffs_{k}": v for k, v in table.n_by_kind.items()}}

    st.markdown(f"**At cut {cut:.3f}, keeping at most {keep}** ({table.n_in} answerable, {table.n_ood} out-of-domain)")
    st.table(rates_frame(rates, row, n), hide_index=True)
    st.caption("95% intervals: answerable rates over questions (a question's phrasings are one unit); "
               "out-of-domain rates Wilson, with the exact upper bound at 0 events.")
    model_cut_caption(ev, token, config, cut)

    dist = distances_for(token, config, int(keep), ev)
    under = under_cut_counts(dist, cut)
    names = distance_series(int(keep))
    h, t = st.columns(2)
    h.altair_chart(distance_histogram(dist, cut=cut), width="stretch")
    h.caption("Under the cut: " + "; ".join(f"{names.get(k, k)}: {v}" for k, v in under.items()))
    t.altair_chart(tradeoff_chart(curve, cut=cut), width="stretch")

    bluffs = bluffs_at(ev.result(config), ev.queries, cut=cut, keep=int(keep))
    st.subheader(f"Bluffs at {cut:.3f}: {len(bluffs)} of {table.n_ood} out-of-domain queries get sources")
    words = [upper_bound_words(row.bluffs, table.n_ood, "out-of-domain queries bluff")]
    words += [upper_bound_words(row.bluffs_by_kind[k], v, f"{k} ones") for k, v in table.n_by_kind.items() if v]
    (st.warning if bluffs else st.info)("; ".join(words) + ".")
    chunks = ev.indexes[ev.result(config).config.strategy].chunks
    texts = {q.id: q.text for q in ev.queries}
    for b in bluffs:
        pos, dist_ = b.kept[0]
        chunk = chunks[pos]
        with st.container(border=True):
            st.markdown(f"**{md_text(b.query_id)}** ({md_text(b.kind or 'ood')}) — closest source at distance **{dist_:.3f}**, "
                        f"{len(b.kept)} kept")
            st.text(texts[b.query_id])
            st.caption(f"nearest miss: {md_text(chunk.id)} · {md_text(chunk.doc_id)} › {md_text(chunk.section or '(preamble)')}")
            st.html(quote_html(chunk.content, base=chunk.start, max_height=160))
            st.page_link("app_pages/inspector.py", label=f"Inspect {md_text(b.query_id)}", icon=":material/search:",
                         query_params={"q": b.query_id, "config": config, "cut": f"{cut:g}", "keep": str(keep)})


gate_panel()
keep = int(st.session_state.get("keep", DEFAULT_KEEP))  # the fragment's keep slider (reruns of it alone keep it)

st.subheader("Choose a cut for a goal")
g1, g2 = st.columns([2, 1])
kind = g1.segmented_control("Goal", ["bluff rate at most", "answered at least"], default="bluff rate at most",
                            key="goal", required=True) or "bluff rate at most"
target = g2.number_input("rate", min_value=0.0, max_value=1.0, step=0.01, key="goal_rate",
                         value=DEFAULT_MAX_BLUFF if kind == "bluff rate at most" else 0.5)
goal = Goal(max_bluff=target) if kind == "bluff rate at most" else Goal(min_answered=target)
choice = choice_for(token, config, keep, goal, ev)
st.markdown(f"**Rule:** {md_text(choice.rule)}.")
for note in choice.notes:
    st.info(md_text(note))
if choice.cut is None:
    st.warning("No cut reaches this goal on this set.")
else:
    st.markdown(f"**Proposed cut: {choice.cut:.4f}**")
records = []
for label, cells in (("in sample (chosen and measured on the same queries)",
                      choice.in_sample.outcomes() if choice.in_sample else None),
                     (f"cross-validated ({choice.folds} folds grouped by question, seed {choice.seed})",
                      choice.cross_validated)):
    if cells:
        records.append({"estimate": label, **{k: cells[k].words() for k in ("answered", "wrong_sources", "bluffs")}})
st.dataframe(pd.DataFrame(records), hide_index=True, key="choice")
st.markdown("**Conformal:** " + md_text(f"cut {choice.conformal_cut:.4f}, {choice.conformal}"
                                       if choice.conformal_cut is not None else choice.conformal))
