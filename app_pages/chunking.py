"""Chunking: what each strategy costs and destroys, and where its cuts fall in a document."""

import streamlit as st

from ragdiag.analyses.summary import chunking_rows
from ui.frames import chunk_sizes, destroyed_frame, size_summary, truncated_chunks
from ui.charts import chunk_size_chart
from ui.context import context, link_params
from ui.fmt import drop_constant, highlight_row
from ui.html import chunk_map_html, md_text
from ui.jobs import evaluation
from ui.tables import chunking_view, destroyed_view, sizes_view, truncated_view
from ui.state import text_part
from ui.chart_theme import themed
from ui.ledger_view import ledger_for, ledger_frame
from ui.report import remember_ledger


def page() -> None:
    st.title("Chunking")
    ev, token = evaluation()


    def same_caption(constant: dict) -> None:
        """Columns with one value on every row, said once instead of shown."""
        if constant:
            st.caption("Same on every row: " + "; ".join(f"{md_text(k)} {md_text(v)}" for k, v in constant.items()) + ".")


    chosen = context(ev, token).config.split("/", 1)[0]
    table, constant = chunking_view(chunking_rows(ev))
    st.caption("Per strategy, fewest destroyed needles first: needles no chunk holds whole (destroyed), chunks, embedded "
               "wordpieces (the share spent on section headers), chunks longer than the encoder window (truncated, "
               f"and the characters it never reads). Highlighted: {md_text(chosen)}, the sidebar's configuration.")
    st.dataframe(highlight_row(table, "strategy", chosen), hide_index=True, key="chunking_table")
    same_caption(constant)

    sizes = chunk_sizes(ev)
    left, right = st.columns([3, 2])
    summary = size_summary(sizes)  # one row per strategy: the chart never meets Altair's row limit
    left.altair_chart(themed(chunk_size_chart(summary)), width="stretch")
    right.dataframe(sizes_view(summary), hide_index=True)

    destroyed = destroyed_frame(ev)
    t1, t2 = st.columns(2)
    with t1:
        st.markdown("**Destroyed needles** (the cut positions fall inside the needle)")
        if destroyed.empty:
            st.caption("No strategy destroys a needle.")
        else:
            dview, dconst = destroyed_view(destroyed)
            st.dataframe(dview, hide_index=True)
            same_caption(dconst)
    with t2:
        st.markdown("**Truncated chunks** (longer than the encoder window)")
        trunc_strategy = st.selectbox("Strategy", list(ev.indexes), key="trunc", bind="query-params",
                                      label_visibility="collapsed")
        trunc = truncated_chunks(sizes, trunc_strategy)
        if trunc.empty:
            st.caption(f"No chunk of {trunc_strategy} is longer than the window.")
        else:
            st.caption(f"{len(trunc)} chunks, {int(trunc['chars_lost'].sum()):,} characters never embedded.")
            tview, tconst = truncated_view(trunc)
            st.dataframe(tview, hide_index=True)
            same_caption(tconst)

    st.subheader("Document viewer")
    docs = [d.id for d in ev.corpus.documents]
    n_destroyed = destroyed.groupby("doc_id").size().to_dict() if not destroyed.empty else {}
    default_doc = max(docs, key=lambda d: n_destroyed.get(d, 0)) if n_destroyed else docs[0]
    v1, v2 = st.columns([3, 1])
    doc_id = v1.selectbox("Document", docs, index=docs.index(default_doc), key="doc", bind="query-params",
                          help="Documents holding a destroyed needle: "
                               + (", ".join(f"{d} ({n})" for d, n in n_destroyed.items()) or "none"))
    strategy = v2.selectbox("Strategy", list(ev.indexes), key="strategy", bind="query-params")

    doc = ev.corpus.document(doc_id)
    index = ev.indexes[strategy]
    chunks = [c for c in index.chunks if c.doc_id == doc_id]
    destroyed_here = {d.question_id: d for d in index.report.destroyed if d.doc_id == doc_id}
    needles = [(q.id, q.start, q.end, q.id in destroyed_here) for q in ev.truth.questions if q.doc_id == doc_id]
    cuts = [c for d in destroyed_here.values() for c in d.cuts]
    st.caption(f"{strategy} ({index.strategy.description}): {len(chunks)} chunks in {md_text(doc_id)}, "
               f"{len(doc.text):,} characters. Shaded spans alternate per chunk (numbered at their start), "
               "purple is overlap, green a needle held whole, red a destroyed needle with ✂ where the cut falls.")
    for d in destroyed_here.values():
        st.error(f"{strategy} destroys the needle of {md_text(d.question_id)}: characters {d.start}-{d.end} cut at "
                 + ", ".join(str(c) for c in d.cuts))
    lo, hi = text_part(len(doc.text))
    st.html(chunk_map_html(doc.text, chunks, needles=needles, cuts=cuts, start=lo, end=hi))

    st.subheader("Repair ledger")
    ledger_ctx = context(ev, token)
    if ev.result(ledger_ctx.config).config.external:
        st.caption("The ledger compares ragdiag's own chunkings: pick a configuration of ours in the sidebar.")
    else:
        led, rungs = ledger_for(ev, token, ledger_ctx.config, ledger_ctx.gate)
        remember_ledger(token, led)  # the Summary's and Export's report downloads carry it in their appendix
        st.caption(md_text(led.summary()) + " One row per query a strategy or context method repairs (lost under "
                   f"{md_text(led.baseline.config)}, answered with it) or breaks; the interval is answered at the gate, "
                   "row minus baseline, over questions, simultaneous over the rows. Other strategies join with "
                   "RAGDIAG_STRATEGIES (e.g. A,B,C,D,E,F,R,M,W,S). The report downloads (Summary, Export) now carry "
                   "this ledger in their appendix.")
        lview, lconst = drop_constant(ledger_frame(led, rungs, {c.label for c in ev.results},
                                                   {k: v for k, v in link_params().items() if k != "config"}),
                                      keep=("config", "inspect"))
        st.dataframe(lview, hide_index=True, key="ledger_table",
                     column_config={"inspect": st.column_config.LinkColumn("inspect", display_text="open")})
        same_caption(lconst)


page()
