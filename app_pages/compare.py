"""Compare: two configurations on the same queries, paired (exact sign test), and every pair (Holm)."""

import pandas as pd
import streamlit as st

from ragdiag.metrics import KS
from ragdiag.results import compare, pairwise
from ui.frames import pairwise_matrix
from ui.charts import pairwise_heatmap
from ui.html import md_text
from ui.state import config_labels, default_config, evaluation

st.title("Compare")
ev, token = evaluation()
labels = config_labels(ev)
if len(labels) < 2:
    st.info("Only one configuration was evaluated: there is nothing to compare.")
    st.stop()

c1, c2, c3, c4 = st.columns([3, 3, 1, 2])
first = default_config(ev)
second = next((x for x in ("A/dense", "E/dense", "C/hybrid") if x in labels and x != first),
              next(x for x in labels if x != first))
a = c1.selectbox("Configuration A", labels, index=labels.index(first), key="a", bind="query-params")
b = c2.selectbox("Configuration B", labels, index=labels.index(second), key="b", bind="query-params")
k = c3.selectbox("k", list(KS), index=len(KS) - 1, key="k", bind="query-params")
phrasing = c4.segmented_control("Phrasing", ["all", *ev.truth.phrasings], default="all", key="phrasing",
                                bind="query-params", required=True) or "all"

if a == b:
    st.info("Choose two different configurations.")
else:
    comp = compare(ev, a, b, k=k, phrasing=phrasing)
    t = comp.test
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(f"wins of {a}", t.wins, help=f"queries {a} finds in its top {k} and {b} does not")
    m2.metric(f"losses of {a}", t.losses, help=f"queries {b} finds in its top {k} and {a} does not")
    m3.metric("ties", t.ties, help="both find it, or neither does")
    m4.metric("exact sign test p", f"{t.p:.4g}", help="two-sided, on the discordant pairs (wins + losses)")
    (st.info if t.p >= 0.05 else st.success)(comp.verdict)

    st.subheader("Discordant queries")
    st.caption("Queries where exactly one of the two finds the needle in its top k. Open one in the inspector.")
    texts = {q.id: q.text for q in ev.queries}
    ra, rb = ev.result(a), ev.result(b)
    cols = st.columns(2)
    for col, title, ids, cfg in ((cols[0], f"{a} finds, {b} misses", comp.wins, a),
                                 (cols[1], f"{b} finds, {a} misses", comp.losses, b)):
        with col:
            st.markdown(f"**{title}** ({len(ids)})")
            for qid in ids:
                i = ev.query_index(qid)
                ranks = f"rank {int(ra.needle_rank[i]) or '–'} vs {int(rb.needle_rank[i]) or '–'}"
                st.page_link("app_pages/inspector.py", label=md_text(f"{qid} · {ranks} · {texts[qid][:90]}"),
                             icon=":material/search:", query_params={"q": qid, "config": cfg})

st.subheader("All pairs")
rows = pairwise(ev, k=k, phrasing=phrasing)
st.caption(f"{len(rows)} pairs at R@{k}; p corrected with Holm over the whole family.")
st.altair_chart(pairwise_heatmap(pairwise_matrix(rows)))
with st.expander("Pairs as a table"):
    st.dataframe(pd.DataFrame(rows), hide_index=True,
                 column_config={"p": st.column_config.NumberColumn(format="%.4f"),
                                "p_holm": st.column_config.NumberColumn("p (Holm)", format="%.4f")})
