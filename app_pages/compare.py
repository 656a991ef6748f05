"""Compare: two configurations on the same questions (exact sign-flip test), within the family on screen (Holm)."""

import pandas as pd
import streamlit as st

from ragdiag.defaults import KS, PRIMARY_K
from ragdiag.compare.comparisons import compare, compare_in_family, family, family_rows
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
k = c3.selectbox("k", list(KS), index=list(KS).index(PRIMARY_K), key="k", bind="query-params",
                 help=f"R@{PRIMARY_K} (the gate's keep) carries the verdicts; other k are descriptive")
phrasing = c4.segmented_control("Phrasing", ["all", *ev.truth.phrasings], default="all", key="phrasing",
                                bind="query-params", required=True) or "all"
families = {"all pairs": False, "A against each other (planned)": True}
fam = st.segmented_control("Family (Holm correction within it)", list(families), default="all pairs", key="family",
                           bind="query-params", required=True) or "all pairs"
planned = families[fam]


@st.cache_resource(max_entries=32, show_spinner="Testing the family…")
def family_for(token: str, k: int, phrasing: str, baseline: str | None, _ev):
    """The family on screen, computed once per evaluation and choice (every test of it, Holm within it)."""
    return family(_ev, k=k, phrasing=phrasing, baseline=baseline)


comparisons = family_for(token, k, phrasing, a if planned else None, ev)

if a == b:
    st.info("Choose two different configurations.")
else:
    comp = compare_in_family(ev, a, b, k=k, phrasing=phrasing, planned=planned, comparisons=comparisons)
    t = comp.test
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric(f"wins of {a}", t.wins, help=f"questions on which {a} finds more phrasings in its top {k} than {b}")
    m2.metric(f"losses of {a}", t.losses, help=f"questions on which {b} finds more phrasings in its top {k}")
    m3.metric("ties", t.ties, help="questions on which both find the same number of phrasings")
    m4.metric("p (Holm)", f"{comp.p_holm:.4g}",
              help=f"exact sign-flip test over questions, raw p = {t.p:.4g}; Holm within {comp.family_name}")
    m5.metric(f"R@{k} difference", f"{t.difference.estimate:+.3f}",
              help=f"95% question bootstrap interval [{t.difference.low:+.3f}, {t.difference.high:+.3f}]")
    {"different": st.success, "not shown different": st.info}.get(comp.status, st.caption)(comp.verdict)
    st.caption(comp.power)
    mrr = compare(ev, a, b, k=None, phrasing=phrasing)
    st.caption(f"MRR (descriptive): {mrr.test.difference} over {mrr.test.n_questions} questions, "
               f"exact sign-flip p = {mrr.test.p:.4g}.")

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

st.subheader("The family on screen")
rows = family_rows(comparisons)
st.caption(f"{len(rows)} comparisons at R@{k} over questions; p corrected with Holm within this family"
           + ("" if k == PRIMARY_K else f" (descriptive: verdicts are at R@{PRIMARY_K})") + ".")
st.altair_chart(pairwise_heatmap(pairwise_matrix(rows)))
with st.expander("The family as a table"):
    st.dataframe(pd.DataFrame([r.cells() for r in rows]), hide_index=True,
                 column_config={"p": st.column_config.NumberColumn(format="%.4f"),
                                "p_holm": st.column_config.NumberColumn("p (Holm)", format="%.4f"),
                                "difference": st.column_config.NumberColumn(format="%+.3f"),
                                "low": st.column_config.NumberColumn(format="%+.3f"),
                                "high": st.column_config.NumberColumn(format="%+.3f")})
