"""Threshold: where to put the distance cut, and who still bluffs there."""

import pandas as pd
import streamlit as st

from ragdiag.threshold import bluffs_at
from ui.charts import distance_histogram, tradeoff_chart
from ui.html import md_text, quote_html
from ui.model_cut import model_cut_caption
from ui.state import config_select, cut_keep_sliders, distances_for, evaluation, sweep_for

st.title("Threshold")
st.caption("The retriever always returns something; the gate is the only part that can say no. It keeps at most "
           "N chunks, only those closer than the cut. Answerable queries should keep their answer; "
           "out-of-domain queries should get nothing (otherwise they bluff).")
ev, token = evaluation()
config = config_select(ev)


@st.fragment
def gate_panel():
    """Reruns alone when the cut or keep moves: only the gate is evaluated; the sweep is cached."""
    c1, c2 = st.columns([3, 1])
    cut, keep = cut_keep_sliders(c1, c2)
    table, curve = sweep_for(token, config, int(keep), ev)
    row = table.row(cut)

    st.markdown(f"**At cut {cut:.3f}, keeping at most {keep}** ({table.n_in} answerable, {table.n_ood} out-of-domain)")
    st.table(pd.DataFrame([row]), hide_index=True)
    model_cut_caption(ev, token, config, cut)

    h, t = st.columns(2)
    h.altair_chart(distance_histogram(distances_for(token, config, ev), cut=cut), width="stretch")
    t.altair_chart(tradeoff_chart(curve, cut=cut), width="stretch")

    bluffs = bluffs_at(ev.result(config), ev.queries, cut=cut, keep=int(keep))
    st.subheader(f"Bluffs at {cut:.3f}: {len(bluffs)} of {table.n_ood} out-of-domain queries get sources")
    if not bluffs:
        st.success("No out-of-domain query gets a source at this cut.")
    chunks = ev.indexes[ev.result(config).config.strategy].chunks
    texts = {q.id: q.text for q in ev.queries}
    for b in bluffs:
        pos, dist = b.kept[0]
        chunk = chunks[pos]
        with st.container(border=True):
            st.markdown(f"**{md_text(b.query_id)}** ({md_text(b.kind or 'ood')}) — closest source at distance **{dist:.3f}**, "
                        f"{len(b.kept)} kept")
            st.text(texts[b.query_id])
            st.caption(f"nearest miss: {md_text(chunk.id)} · {md_text(chunk.doc_id)} › {md_text(chunk.section or '(preamble)')}")
            st.html(quote_html(chunk.content, base=chunk.start, max_height=160))
            st.page_link("app_pages/inspector.py", label=f"Inspect {md_text(b.query_id)}", icon=":material/search:",
                         query_params={"q": b.query_id, "config": config, "cut": f"{cut:g}", "keep": str(keep)})


gate_panel()
