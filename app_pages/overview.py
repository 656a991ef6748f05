"""Overview: what was loaded, and how each configuration retrieves (recall@k with intervals)."""

import pandas as pd
import streamlit as st

from ragdiag.summary import summary_rows
from ui.frames import filter_configs, index_stamp_rows, recall_long, recall_table
from ui.charts import recall_chart
from ui.html import md_text
from ui.state import access, evaluation, first_strategy, load_inputs, recorded_stamps, settings, url_strategies

st.title("Overview")
corpus, truth = load_inputs()

left, right = st.columns(2)
with left:
    st.subheader("Corpus")
    st.caption(f"{md_text(corpus.name if access().locked else corpus.root)} · sha256 {corpus.sha256[:12]}")
    c1, c2, c3 = st.columns(3)
    c1.metric("documents", len(corpus.documents))
    c2.metric("characters", f"{corpus.n_chars:,}")
    c3.metric("sections", corpus.n_sections)
    if corpus.failures:
        st.warning(f"{len(corpus.failures)} file(s) could not be loaded; the others are searchable.")
        st.table(pd.DataFrame([{"file": md_text(f.path), "reason": md_text(f.reason)} for f in corpus.failures]),
                 hide_index=True)  # a table renders Markdown: data is escaped
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
    if getattr(ev, "retriever_stamps", None):  # dense variants: precision, index parameters, model
        st.caption("Variants of dense search: what made each configuration's numbers")
        st.json(ev.retriever_stamps, expanded=False)

for name, reason in ev.unavailable.items():
    st.warning(f"Retriever **{md_text(name)}** is unavailable: {md_text(reason)}")
for note in getattr(ev, "notes", {}).values():
    st.warning(md_text(note))

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
rows = [r for r in summary_rows(ev, phrasing=phrasing) if r.config in shown]
if not rows and pending:
    st.info(f"Computing {', '.join(pending)} (moved to the front); its rows appear here when it is ready.")
    st.stop()
if not rows:
    st.info("Choose at least one strategy and one retriever.")
    st.stop()

st.caption(f"{rows[0].queries} in-domain queries ({phrasing}). R@k: share whose needle is whole in a chunk "
           "of the top k, with its 95% Wilson interval. destroyed: needles no chunk holds (recall capped at 0).")
st.dataframe(
    recall_table(rows), hide_index=True, height=min(38 + 35 * len(rows), 880),
    column_config={"MRR": st.column_config.NumberColumn(format="%.3f")},
)
st.altair_chart(recall_chart(recall_long(rows)), width="stretch")

# ----- the funnel: where each answerable query was lost ----------------------------------------------
import pandas as pd  # noqa: E402

from ragdiag.defaults import DEFAULT_CUT, DEFAULT_KEEP, PRIMARY_K  # noqa: E402
from ui.diag_frames import funnel_frame, granular_frame, stage_queries_frame  # noqa: E402
from ragdiag.funnel import STAGES, funnel_rows  # noqa: E402
from ragdiag.granular import granular_rows, redundancy_rows  # noqa: E402
from ui.diag import funnels_for  # noqa: E402
from ui.diag_charts import funnel_chart  # noqa: E402

st.subheader("Where answers were lost")
fs = [f for f in funnels_for(token, PRIMARY_K, DEFAULT_CUT, DEFAULT_KEEP, ev) if f.config.label in shown]
if fs:
    st.caption(f"Every answerable query gets the first stage that lost its answer, in pipeline order: destroyed by "
               f"the chunking, truncated by the encoder window, not in the pool (the top 25 a reranker rescores), "
               f"ranked below k = {PRIMARY_K}, refused or kept-but-wrong by the gate (cut {DEFAULT_CUT}, keep "
               f"{DEFAULT_KEEP}), or answered. Counts are over all phrasings; bars are 95% intervals that resample "
               f"questions (a question's phrasings together). Click a bar to open its queries in the Inspector.")
    st.altair_chart(funnel_chart(funnel_frame(fs)), width="stretch")
    st.dataframe(pd.DataFrame(funnel_rows(fs)), hide_index=True, key="funnel_table")
    stage = st.selectbox("Queries lost at", list(STAGES), index=STAGES.index("ranked-low"), key="lost_at",
                         bind="query-params")
    sq = stage_queries_frame(fs, ev, stage)
    st.caption(f"{len(sq)} (configuration, query) pairs at **{stage}**; open one in the Inspector.")
    st.dataframe(sq, hide_index=True, key="stage_queries",
                 column_config={"inspect": st.column_config.LinkColumn("inspect", display_text="open")})

with st.expander("Recall at every granularity, and redundancy of the top k"):
    st.caption("document: a chunk of the needle's document in the top k; section: a chunk overlapping its section; "
               "span: a chunk holding the needle whole (the table above). High document and low span recall: the "
               "retriever finds the place but the chunking splits the answer. A query is credited once, at its "
               "first qualifying chunk, however many chunks hold its needle. 95% Wilson intervals.")
    st.dataframe(granular_frame([r for r in granular_rows(ev, phrasing=phrasing) if r.config in shown],
                                ks=[1, PRIMARY_K, 20]),
                 hide_index=True, key="granular_table")
    red = [r for r in redundancy_rows(ev, k=PRIMARY_K) if r.config in shown]
    st.caption(f"Redundancy: share of the top-{PRIMARY_K} slots (all queries) whose text overlaps a higher-ranked "
               "chunk by more than half of the shorter one (wasted context); 95% interval resampling questions.")
    st.dataframe(pd.DataFrame([{"config": r.config, "k": r.k, "redundant slots": r.redundant_slots, "slots": r.slots,
                                "redundancy": str(r.redundancy)} for r in red]), hide_index=True,
                 key="redundancy_table")
