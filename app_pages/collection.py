"""Collection: the operator's collection (BEIR, TREC, ir_datasets, SQuAD): the field's measures and the slices."""

import streamlit as st

from ui.html import md_text

from ragdiag.analyses.measures import INTERVAL_WORDS, MEASURE_NAMES, measure_rows, primary_measure
from ragdiag.documents.collections import DOCUMENT_LEVEL_NOTE, NO_OOD_NOTE, CollectionError
from ui.cache import collection_runs
from ui.collection_view import collection_settings, measure_frame, slice_frame


def page() -> None:
    K = 10
    spec, split, strategies, retrievers = collection_settings()
    st.title("Collection")
    try:
        collection, runs = collection_runs(spec, split, strategies, retrievers)
    except CollectionError as exc:
        st.error(f"The configured collection cannot be read: {md_text(exc)}")
        st.stop()
    primary = primary_measure(collection.document_level)
    rows = measure_rows(runs, k=K)
    best = rows[0]
    name = MEASURE_NAMES[primary].format(k=K)
    st.markdown(f"**{md_text(best.config)}** ranks the judged {'documents' if collection.document_level else 'passages'} "
                f"best on {md_text(collection.name)}: {md_text(name)} {best.cell(primary).words()} over "
                f"{collection.n_questions} questions.")
    if collection.document_level:
        st.info(DOCUMENT_LEVEL_NOTE)
    else:
        st.caption("The answers are spans, so the whole analysis applies: `python -m ragdiag convert "
                   f"{collection.format}:… --out DIR` writes it as a corpus and ground truth to serve with "
                   "`./run.sh dashboard --corpus DIR` (Threshold, Inspector, Chunking and the rest).")
    if not collection.ood:
        st.caption(NO_OOD_NOTE)
    st.dataframe(measure_frame(rows, primary), hide_index=True)
    st.caption(f"k = {K}; {INTERVAL_WORDS}; nDCG gains are the grades (TREC's default). Verdicts use {md_text(name)}; the "
               "other measures are descriptive.")

    if any(runs.tags):
        from ragdiag.analyses.slices import SIMULTANEOUS_WORDS, slice_table

        st.subheader("Slices by tag")
        cfg = runs.configs[[c.label for c in runs.configs].index(best.config)]
        table = slice_table(runs.values(cfg, primary, k=K), runs.groups, runs.tags, by="tag", config=best.config,
                            measure=name, share=primary == "success")
        st.markdown(table.headline())
        st.dataframe(slice_frame(table), hide_index=True)
        st.caption(f"{best.config}; {SIMULTANEOUS_WORDS}.")
    for note in collection.notes:
        st.caption(note)


page()
