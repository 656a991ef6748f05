"""ragdiag dashboard: entry point and router (pages live in app_pages/)."""

import streamlit as st

from ragdiag.corpus import CorpusError, load_corpus

st.set_page_config(page_title="ragdiag", layout="wide")


@st.cache_resource(max_entries=4)
def _corpus(root: str | None):
    return load_corpus(root)


st.title("ragdiag")
try:
    corpus = _corpus(None)
except CorpusError as exc:
    st.error(str(exc))
    st.stop()
c1, c2, c3 = st.columns(3)
c1.metric("documents", len(corpus.documents))
c2.metric("characters", f"{corpus.n_chars:,}")
c3.metric("sections", corpus.n_sections)
