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

PAGES = {
    "Results": [
        st.Page("app_pages/summary.py", title="Summary", icon=":material/flag:", default=True),
        st.Page("app_pages/overview.py", title="Overview", icon=":material/table_chart:"),
        st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page("app_pages/history.py", title="History", icon=":material/timeline:"),
    ],
    "Decide the cut": [
        st.Page("app_pages/threshold.py", title="Threshold", icon=":material/tune:"),
        st.Page("app_pages/monitor.py", title="Monitor", icon=":material/monitor_heart:"),
    ],
    "Diagnose": [
        st.Page("app_pages/inspector.py", title="Inspector", icon=":material/search:"),
        st.Page("app_pages/chunking.py", title="Chunking", icon=":material/content_cut:"),
        st.Page("app_pages/hubs.py", title="Hubs", icon=":material/hub:"),
        st.Page("app_pages/cost.py", title="Cost", icon=":material/speed:"),
        st.Page("app_pages/variants.py", title="Variants", icon=":material/stacked_bar_chart:"),
    ],
    "Data and more": [
        st.Page("app_pages/documents.py", title="Documents", icon=":material/description:"),
        st.Page("app_pages/ground_truth.py", title="Ground truth", icon=":material/edit_note:"),
        st.Page("app_pages/truth_review.py", title="Grow the ground truth", icon=":material/playlist_add_check:"),
        st.Page("app_pages/external.py", title="External run", icon=":material/upload_file:"),
        st.Page("app_pages/export.py", title="Export", icon=":material/download:"),
        st.Page("app_pages/glossary.py", title="Glossary", icon=":material/menu_book:"),
    ],
}

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
