"""Documents: what ingestion made of each file (status and reason), and a document's canonical text."""

import pandas as pd
import streamlit as st

from ui.html import pages_html
from ui.state import load_corpus_only

st.title("Documents")
corpus = load_corpus_only()

try:
    from ragdiag.ingest import ingest_rows
except ImportError as exc:  # the ingestion report is optional; the text viewer still works
    ingest_rows = None
    st.info(f"The per-document ingestion report is not available here ({exc}).")

if ingest_rows is not None:
    rows = pd.DataFrame(ingest_rows(corpus))
    statuses = sorted(rows["status"].astype(str).unique()) if "status" in rows else []
    chosen = st.multiselect("Status", statuses, default=statuses, key="status", bind="query-params")
    shown = rows[rows["status"].astype(str).isin(chosen)] if statuses else rows
    st.caption(f"{len(shown)} of {len(rows)} files. A failed file keeps its reason; the others stay searchable.")
    st.dataframe(shown, hide_index=True)

st.subheader("Canonical text")
ids = [d.id for d in corpus.documents]
doc_id = st.selectbox("Document", ids, key="doc", bind="query-params")
doc = corpus.document(doc_id)
parts = [f"{doc.kind} · extractor {doc.extractor}", f"{len(doc.text):,} characters",
         f"{sum(1 for s in doc.sections if s.title)} sections"]
if doc.page_starts:
    parts.append(f"{len(doc.page_starts)} pages (boundaries marked)")
st.caption(" · ".join(parts) + f" · {doc.path}")
for w in doc.warnings:
    st.warning(w)
st.html(pages_html(doc.text, doc.page_starts))
