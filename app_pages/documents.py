"""Documents: what ingestion made of each file (status and reason), and a document's canonical text."""

import pandas as pd
import streamlit as st

from ragdiag.documents.ingest import STATUSES, ingest_rows
from ui.fmt import DASH
from ui.html import md_text, pages_html
from ui.state import load_corpus_only, text_part
from ui.tables import documents_view


def page() -> None:
    st.title("Documents")
    corpus = load_corpus_only()

    rows = pd.DataFrame(ingest_rows(corpus), columns=["path", "id", "type", "pages", "characters", "sections", "status",
                                                      "reason"])
    counts = rows["status"].value_counts().to_dict()
    st.caption(f"{len(rows)} files: " + ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES)
               + ". A failed file keeps its reason; the others stay searchable.")
    chosen = st.multiselect("Status", list(STATUSES), default=list(STATUSES), key="status", bind="query-params")
    shown = rows[rows["status"].isin(chosen)]
    view, constant = documents_view(shown)
    st.dataframe(view, hide_index=True, column_config={"reason": st.column_config.TextColumn(width="large")})
    if constant:
        st.caption("Same on every file shown: " + "; ".join(f"no {md_text(k)}" if v == DASH else f"{md_text(k)} {md_text(v)}"
                                                             for k, v in constant.items()) + ".")

    st.subheader("Canonical text")
    ids = [i for i in shown["id"] if i] or [d.id for d in corpus.documents]
    doc_id = st.selectbox("Document", ids, key="doc", bind="query-params",
                          help="Every offset (chunks, needles, #char= locators) indexes into this text.")
    doc = corpus.document(doc_id)
    parts = [f"{doc.kind} · extractor {doc.extractor}", f"{len(doc.text):,} characters",
             f"{sum(1 for s in doc.sections if s.title)} sections"]
    if doc.page_starts:
        parts.append(f"{len(doc.page_starts)} pages (boundaries marked)")
    st.caption(" · ".join(parts) + f" · {md_text(doc.path)}")
    for w in doc.warnings:
        st.warning(md_text(w))
    lo, hi = text_part(len(doc.text))
    st.html(pages_html(doc.text, doc.page_starts, start=lo, end=hi))


page()
