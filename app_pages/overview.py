"""Overview: what was loaded, and how each configuration retrieves (recall@k with intervals)."""

import pandas as pd
import streamlit as st

from ragdiag.evaluate import summary_rows
from ragdiag.views import filter_configs, index_stamp_rows, recall_long, recall_table
from ui.charts import recall_chart
from ui.html import md_text
from ui.state import evaluation, first_strategy, load_inputs, recorded_stamps, settings, url_strategies

st.title("Overview")
corpus, truth = load_inputs()

left, right = st.columns(2)
with left:
    st.subheader("Corpus")
    st.caption(f"{md_text(corpus.root)} · sha256 {corpus.sha256[:12]}")
    c1, c2, c3 = st.columns(3)
    c1.metric("documents", len(corpus.documents))
    c2.metric("characters", f"{corpus.n_chars:,}")
    c3.metric("sections", corpus.n_sections)
    if corpus.failures:
        st.warning(f"{len(corpus.failures)} file(s) could not be loaded; the others are searchable.")
        st.table(pd.DataFrame([{"file": f.path, "reason": f.reason} for f in corpus.failures]), hide_index=True)
with right:
    st.subheader("Ground truth")
    st.caption(md_text(truth.source))
    n_in = sum(1 for q in truth.queries if q.in_domain)
    c1, c2, c3 = st.columns(3)
    c1.metric("questions", len(truth.questions))
    c2.metric("in-domain queries", n_in, help="phrasings: " + ", ".join(truth.phrasings))
    c3.metric("out-of-domain", len(truth.ood))
    st.caption("phrasings: " + ", ".join(truth.phrasings))

# The table needs one strategy: the first the URL names, else the default; the rest follow in the background.
s = settings()
named = url_strategies(s)
ev, token = evaluation(need=named[:1] or [first_strategy(s)], want=named)

with st.expander("Model and index stamps"):
    st.caption("Vectors of two models are not comparable: every index is stamped with the model, weights, "
               "pipeline and extractor versions, corpus hash and chunking it was built with.")
    st.dataframe(index_stamp_rows(ev, recorded_stamps()), hide_index=True)

for name, reason in ev.unavailable.items():
    st.warning(f"Retriever **{md_text(name)}** is unavailable: {md_text(reason)}")

st.subheader("Recall")
strategies = list(s.strategies)  # every configured one, ready or not: picking one moves it to the front
retrievers = list(dict.fromkeys(c.retriever for c in ev.results))
f1, f2, f3 = st.columns([2, 2, 1])
chosen_s = f1.multiselect("Strategies", strategies, default=strategies, key="strategies", bind="query-params")
pending = [x for x in chosen_s if x not in ev.indexes]  # picked ones moved to the front (they are in the URL)
chosen_r = f2.multiselect("Retrievers", retrievers, default=retrievers, key="retrievers", bind="query-params")
phrasing = f3.segmented_control("Phrasing", ["all", *truth.phrasings], default="all", key="phrasing",
                                bind="query-params", required=True) or "all"

shown = set(filter_configs([c.label for c in ev.results], chosen_s, chosen_r))
rows = [r for r in summary_rows(ev, phrasing=phrasing) if r["config"] in shown]
if not rows and pending:
    st.info(f"Computing {', '.join(pending)} (moved to the front); its rows appear here when it is ready.")
    st.stop()
if not rows:
    st.info("Choose at least one strategy and one retriever.")
    st.stop()

st.caption(f"{rows[0]['queries']} in-domain queries ({phrasing}). R@k: share whose needle is whole in a chunk "
           "of the top k, with its 95% Wilson interval. destroyed: needles no chunk holds (recall capped at 0).")
st.dataframe(
    recall_table(rows), hide_index=True, height=min(38 + 35 * len(rows), 880),
    column_config={"MRR": st.column_config.NumberColumn(format="%.3f")},
)
st.altair_chart(recall_chart(recall_long(rows)), width="stretch")
