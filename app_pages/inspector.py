"""Inspector: one query under every configuration, its top hits, and what a model would be given."""

import html

import pandas as pd
import streamlit as st

from ragdiag.citations import Answer, CharLocator, cite
from ui.diag_frames import stage_frame
from ragdiag.funnel import STAGES
from ragdiag.hubs import crowding
from ragdiag.threshold import gate
from ui.frames import per_config_frame, query_frame, top_hits
from ui.html import md_text, quote_html
from ui.diag import funnels_for
from ui.state import config_select, cut_keep_sliders, evaluation

st.title("Inspector")
ev, token = evaluation()

with st.container(border=True):
    f1, f2, f3 = st.columns([2, 2, 1])
    config = config_select(ev, "Configuration (top hits, citations, failures)", container=f1)
    search = f2.text_input("Search queries by text or id", key="search", bind="query-params",
                           placeholder="e.g. q03 or 'kernel'")
    failures = f3.checkbox("Only failures", key="failures", bind="query-params",
                           help="In-domain queries whose answer the gate does not deliver at this cut, "
                                "and out-of-domain queries that bluff.")
    g1, g2, g3 = st.columns([3, 1, 1])
    cut, keep = cut_keep_sliders(g1, g2)
    k = keep  # the gate's k is its keep: the stage, the outcome and the citations below all read the same top k
    stage = g3.selectbox("Lost at stage", ["any", *STAGES], key="stage", bind="query-params",
                         help="Answerable queries whose answer this configuration lost first at this stage "
                              "(k = keep, at this cut): see the funnel on the Overview.")

fs = {f.config.label: f for f in funnels_for(token, k, cut, keep, ev)}

qf = query_frame(ev, config, cut=cut, keep=keep, k=k)
shown = qf
if search.strip():
    needle = search.strip().lower()
    shown = shown[shown["query_id"].str.lower().str.contains(needle, regex=False)
                  | shown["text"].str.lower().str.contains(needle, regex=False)]
if failures:
    shown = shown[shown["failure"]]
if stage != "any":
    in_stage = set(fs[config].queries(stage)) if config in fs else set()
    shown = shown[shown["query_id"].isin(in_stage)]
if shown.empty:
    st.info("No query matches the search and filter.")
    st.stop()

# Options are the query ids themselves: a bound selectbox writes its shown label into the URL.
qid = st.selectbox(f"Query ({len(shown)} of {len(qf)} match)", list(shown["query_id"]), key="q",
                   bind="query-params")
with st.expander(f"Matching queries ({len(shown)})"):
    st.dataframe(shown.drop(columns=["failure"]), hide_index=True)
qi = ev.query_index(qid)
query = ev.queries[qi]

st.html(f'<div style="font-size:1.3rem; font-weight:600; margin:.25rem 0" data-ragdiag="question">'
        f"{html.escape(query.text)}</div>")
question = ev.truth.question(query.question_id) if query.in_domain else None
if question is not None:
    doc = ev.corpus.document(question.doc_id)
    loc = CharLocator(question.start, question.end)
    st.table(pd.DataFrame([{"phrasing": md_text(p), "query": md_text(t)} for p, t in question.queries]),
             hide_index=True)  # a table renders Markdown: data is escaped
    st.markdown(f"**Needle** — {md_text(question.doc_id)} › {md_text(question.section)}")
    st.code(f"{doc.path or doc.id}{loc.fragment}", language=None)
    st.html(quote_html(question.needle, base=question.start, needle=(question.start, question.end)))
else:
    st.markdown(f"**Out-of-domain query** ({query.kind}): the corpus does not answer it; any source is a bluff.")

st.subheader("Per configuration")
st.dataframe(per_config_frame(ev, qi, cut=cut, keep=keep, k=k), hide_index=True,
             column_config={"needle_distance": st.column_config.NumberColumn("needle distance", format="%.3f"),
                            "top1_distance": st.column_config.NumberColumn("top-1 distance", format="%.3f")})
st.caption("rank: of the first chunk holding the needle whole (empty: none in the list). diagnosis: destroyed "
           "(no chunk holds it), truncated (the window cuts it), ranked-low, hit, not-retrieved (BM25: the chunk "
           "shares no word with the query). at the cut: the query's outcome (the stage that lost the answer, or what "
           "the gate does: refused, kept-but-wrong, answered; out-of-domain: bluff or abstained) at k = keep.")

if query.in_domain and fs:
    st.subheader("Where it was lost")
    st.dataframe(stage_frame(list(fs.values()), qid), hide_index=True, key="stages")
    st.caption(f"stage: the first stage that lost the answer (k = {k}, cut {cut:.3f}, keep {keep}). "
               "Ranks of the first chunk holding the needle: dense and bm25 (hybrid's inputs), pool (the ranking "
               "the top 25 is cut from: hybrid for rerankers), final. rerank: promoted into or demoted out of the "
               "top k by the reranker.")

res = ev.result(config)
chunks = ev.indexes[res.config.strategy].chunks
if query.in_domain and config in fs and fs[config].stage_of(qid).stage in ("ranked-low", "not-in-pool", "truncated"):
    st.subheader(f"What crowded the answer out under {config}")
    st.caption(f"The chunks ranked above the first chunk holding the needle, with how many queries have each in "
               f"their top {k} (k-occurrence; ratio to the expectation if uniform) and boilerplate flags.")
    st.dataframe(pd.DataFrame(crowding(ev, config, qi, k=k)), hide_index=True, key="crowding",
                 column_config={"distance": st.column_config.NumberColumn(format="%.3f")})
st.subheader(f"Top hits of {config}")
hits = top_hits(ev, config, qi, n=10)
st.dataframe(hits.drop(columns=["position"]), hide_index=True,
             column_config={"score": st.column_config.NumberColumn(format="%.4f"),
                            "distance": st.column_config.NumberColumn(format="%.3f")})
for _, h in hits.head(keep).iterrows():
    c = chunks[int(h["position"])]
    mark = " · holds the needle" if h["holds needle"] else ""
    passed = "passes the cut" if h["distance"] < cut else "over the cut"
    st.markdown(f"**#{h['rank']}** {md_text(c.id)} · {md_text(c.doc_id)} › {md_text(c.section or '(preamble)')} · score {h['score']:.4f} · "
                f"distance {h['distance']:.3f} ({passed}){mark}")
    needle_span = (question.start, question.end) if question is not None and c.doc_id == question.doc_id else None
    st.html(quote_html(c.content, base=c.start, needle=needle_span))

st.subheader("Citation preview")
kept = [(chunks[pos], d) for pos, d in gate(res, qi, cut=cut, keep=keep)]
answer = cite(query.text, kept, ev.corpus, cut=cut, keep=keep)
if isinstance(answer, Answer):
    st.caption(f"{len(answer.citations)} source(s) pass the cut {cut:.3f}. The model writes [n]; the server "
               "attaches document, section and locator.")
    st.dataframe(pd.DataFrame([
        {"n": c.index, "document": c.doc_name, "section": c.label, "locator": c.fragment, "url": c.url,
         "distance": c.distance, "quote": c.quote[:160]}
        for c in answer.citations
    ]), hide_index=True, column_config={"distance": st.column_config.NumberColumn(format="%.3f")})
    st.markdown("**The exact prompt**")
    st.code(answer.prompt, language=None, wrap_lines=True)
else:
    st.error("NO ANSWER")
    st.text(answer.message)
