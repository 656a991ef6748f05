"""Hubs: chunks in the top k of unusually many queries, boilerplate-like text, and the queries they displaced."""

import streamlit as st

from ragdiag.core.defaults import KS, PRIMARY_K
from ui.diag_frames import hub_frame, inspector_url
from ragdiag.analyses.hubs import HUB_MIN_CLUSTERS, HUB_RATIO, hubness, hubs
from ui.diag_charts import hub_chart
from ui.context import context, link_params
from ui.html import md_text
from ui.fmt import dash_missing, drop_constant
from ui.jobs import evaluation
from ui.chart_theme import themed


def page() -> None:
    st.title("Hubs")
    st.caption("A hub is a chunk that reaches the top k of an unusually large share of queries: its k-occurrence "
               "(queries, out-of-domain ones included, with the chunk in their top k) against the expectation if "
               "every chunk were equally likely (queries × k / chunks). Boilerplate-like text (navigation, licence "
               "lines, reference lists, code-only or table-only chunks) is flagged. A hub displaced a query when it "
               "sat in that query's top k while the needle did not.")
    ev, token = evaluation()
    labels = [c.label for c in ev.results if not c.external]
    if not labels:
        st.info("No configuration of ours was evaluated (external runs have no chunks of ours).")
        st.stop()
    c1, c2, c3 = st.columns([2, 1, 1])
    config = context(ev, token).config
    c1.caption(f"Configuration {config} (sidebar).")
    if config not in labels:
        st.info(f"{config} is an external run: its hits are not chunks of ours. Choose another configuration.")
        st.stop()
    k = c2.selectbox("k", list(KS), index=list(KS).index(PRIMARY_K), key="k", bind="query-params")
    # a float field read as a whole number: Streamlit checks a float typed in the URL (?top=1e999 falls back to 20)
    # but turns one for a whole-number field into int(inf), an error
    top = round(c3.number_input("Chunks listed", 5.0, 200.0, 20.0, step=5.0, format="%.0f", key="top",
                                bind="query-params"))
    only = st.checkbox(f"Only hubs (≥ {HUB_RATIO:g}× expected, in the top k of ≥ {HUB_MIN_CLUSTERS} questions)",
                       key="only_hubs", bind="query-params")

    items = hubs(ev, config, k=int(k), top=int(top), only_hubs=only)
    n_hubs = sum(h.hub for h in hubs(ev, config, k=int(k), top=None))
    m1, m2, m3 = st.columns(3)
    m1.metric("hubs", n_hubs)
    m2.metric("k-occurrence skewness", f"{hubness(ev, config, k=int(k)):.2f}",
              help="Skewness of the k-occurrence over all chunks: 0 without hubs, large and positive with them.")
    m3.metric("boilerplate-like among those listed", sum(bool(h.flags) for h in items))
    if not items:
        st.info("No chunk matches.")
        st.stop()
    frame = hub_frame(items)
    st.altair_chart(themed(hub_chart(frame)), width="stretch")
    shown = frame.rename(columns={"doc_id": "document", "occurrences": "occurrences (queries)",
                                  "questions": "questions (in whose top k)", "expected": "expected (queries)",
                                  "hub": "hub", "displaced": "displaced (queries)"})
    shown["hub"] = shown["hub"].map({True: "yes", False: ""})
    shown, same = drop_constant(dash_missing(shown), keep=["chunk"])
    st.dataframe(shown, hide_index=True, key="hub_table",
                 column_config={"expected (queries)": st.column_config.NumberColumn(format="%.3f"),
                                "ratio": st.column_config.NumberColumn(format="%.1f")})
    if same:
        st.caption("Same on every row: " + "; ".join(f"{md_text(k)} {md_text(v)}" for k, v in same.items()) + ".")

    displaced = [(h, q) for h in items for q in h.displaced]
    st.subheader(f"Queries displaced ({len(displaced)})")
    st.caption(f"Answerable queries with a listed chunk in their top {k} while no chunk holding their needle was.")
    for h, qid in displaced:
        st.page_link("app_pages/inspector.py", label=f"{md_text(qid)} · crowded by {md_text(h.chunk_id)}",
                     icon=":material/search:", query_params=link_params(q=qid, config=config))
    if not displaced:
        st.caption("None.")
    st.caption(f"Link format for other tools: {inspector_url(q='QUERY', config=config)}")


page()
