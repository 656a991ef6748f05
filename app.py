"""ragdiag dashboard: page config, the navigation by job, the sidebar's data and context, and the router.

Run with ``streamlit run app.py``. Pages live in ``app_pages/``; each reads the
shared context (configuration, cut, keep, goal: :mod:`ui.context`, kept in the URL),
calls the library, and draws.

Environment (all optional): ``RAGDIAG_CORPUS`` and ``RAGDIAG_TRUTH`` (the
sidebar's defaults), ``RAGDIAG_STRATEGIES`` (e.g. ``A,E``),
``RAGDIAG_RETRIEVERS`` (e.g. ``dense,bm25,hybrid``), ``RAGDIAG_CACHE`` (the
store's folder), ``RAGDIAG_PLUGINS`` (modules that register retrievers or
chunking strategies),
``RAGDIAG_ROOTS`` (further folders visitors may open),
``RAGDIAG_MONITOR_LOG`` (the query log of the Monitor page, set by the operator),
``RAGDIAG_LOCKED=1`` (no path fields at all), ``RAGDIAG_COLLECTION`` (a collection in another
format, e.g. ``beir:DIR``, shown on its own page instead; ``RAGDIAG_COLLECTION_SPLIT``,
``RAGDIAG_COLLECTION_OOD``) and the ``RAGDIAG_MAX_*`` limits
(see ``ragdiag/present/serving.py`` and ``ragdiag/core/limits.py``).
"""

import streamlit as st

from ragdiag.retrieval.registry import load_plugins
from ui.chart_theme import scheme
from ui.collection_view import collection_spec
from ui.context import context_done, context_sidebar
from ui.html import NARROW_SIDEBAR
from ui.state import FAVICON, sidebar
from ui.theme import button_css

load_plugins()  # idempotent: a module is imported once per process

st.set_page_config(page_title="ragdiag", page_icon=FAVICON, layout="wide")

#: The navigation by job: each section's pages as (file in app_pages/, title, Material icon); the Summary opens
#: by default.
NAVIGATION = {
    "Results": [
        ("summary", "Summary", "flag"),
        ("overview", "Overview", "table_chart"),
        ("compare", "Compare", "compare_arrows"),
        ("history", "History", "timeline"),
    ],
    "Decide the cut": [
        ("threshold", "Threshold", "tune"),
        ("monitor", "Monitor", "monitor_heart"),
    ],
    "Diagnose": [
        ("inspector", "Inspector", "search"),
        ("chunking", "Chunking", "content_cut"),
        ("hubs", "Hubs", "hub"),
        ("cost", "Cost", "speed"),
        ("variants", "Variants", "stacked_bar_chart"),
    ],
    "Data and more": [
        ("documents", "Documents", "description"),
        ("ground_truth", "Ground truth", "edit_note"),
        ("truth_review", "Grow the ground truth", "playlist_add_check"),
        ("external", "External run", "upload_file"),
        ("export", "Export", "download"),
        ("glossary", "Glossary", "menu_book"),
    ],
}
PAGES = {section: [st.Page(f"app_pages/{file}.py", title=title, icon=f":material/{icon}:", default=file == "summary")
                   for file, title, icon in pages]
         for section, pages in NAVIGATION.items()}

# Under 1,000 px: columns wrap (cards stay whole) and a card's number wraps rather than being cut with "…".
# (Markdown in the sidebar: a style-only st.html would be an event element, read as the page's last HTML block.)
st.sidebar.markdown("""<style>
[data-testid="stMetricValue"] > div { white-space: normal !important; overflow: visible !important;
                                      text-overflow: clip !important; }
[data-testid="stElementContainer"]:has(#ragdiag-narrow-sidebar) { display: none !important; }
@media (max-width: 1000px) {
  [data-testid="stHorizontalBlock"] { flex-wrap: wrap !important; }
  [data-testid="stHorizontalBlock"] > [data-testid="stColumn"] { min-width: 220px !important; flex: 1 1 220px !important; }
}
""" + button_css(scheme()) + "</style>", unsafe_allow_html=True)  # primary buttons legible in the visitor's theme

# Under 1,000 px the sidebar starts folded, once per tab (the visitor may open it again): Streamlit's own "auto" folds it
# only under 768 px. Drawn first in the main block (a sidebar element would be the last HTML block a page shows); its
# container takes no room.
st.html(NARROW_SIDEBAR, unsafe_allow_javascript=True)

collection = bool(collection_spec())
if collection:  # the operator opened a collection (RAGDIAG_COLLECTION): its page alone
    page = st.navigation({"Results": [st.Page("app_pages/collection.py", title="Collection",
                                               icon=":material/library_books:", default=True)]})
else:
    page = st.navigation(PAGES, expanded=True)  # every section in view: 18 pages would fold behind "View more"
    context_sidebar()  # reads a link's context; the page's first context() call draws the fields
    sidebar()
page.run()
if not collection:
    context_done()  # a page that never asked for the context: the sidebar still says what it is
