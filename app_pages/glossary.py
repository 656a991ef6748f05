"""Glossary: the words the screens use, each in one or two plain sentences (every first screen links here)."""

import streamlit as st

from ragdiag.core.words import GLOSSARY


def page() -> None:
    st.title("Glossary")
    st.caption("The words on the screens and in the report, in plain terms. A passage is a chunk of a document; a "
               "question may be asked in several phrasings, and each phrasing is one query.")

    TERMS = GLOSSARY  # the library's one list: the report's "How we know" prints the same words
    for term, words in TERMS:
        st.markdown(f"**{term}** · {words}")


page()
