"""Export: the shareable report, per-query results and standard TREC files, as downloads."""

import streamlit as st

from ragdiag.present.export import trec_zip
from ragdiag.present.report.build import build_report
from ragdiag.present.export import per_query_parquet, summary_json
from ragdiag.present.per_query import per_query_frame
from ui import cache
from ui.context import config_words, context
from ui.html import md_text
from ui.jobs import evaluation

st.title("Export")
st.caption("Everything here is computed by the library for the evaluation on screen; nothing is recomputed "
           "by the page. The report opens offline in any browser (charts are inline SVG).")

ev, token = evaluation()


def _report(token: str, config: str, cut: float, keep: int, ev) -> tuple[str, str]:
    def build():
        report = build_report(ev, config=config, cut=cut, keep=keep)
        return report.to_html(), report.to_markdown()

    with st.spinner("Building the report…"):
        return cache.data_by_evaluation("report", token, (config, cut, keep), build)


def _tables(token: str, ev) -> tuple[bytes, bytes, bytes, bytes]:
    def build():
        csv = per_query_frame(ev).to_csv(index=False).encode("utf-8")
        return csv, per_query_parquet(ev), summary_json(ev).encode("utf-8"), trec_zip(ev)

    return cache.data_by_evaluation("tables", token, (), build)


st.subheader("Report for product owners")
ctx = context(ev, token)
config, cut, keep = ctx.config, ctx.cut, ctx.keep
st.caption(f"About {config_words(config)} at cut {cut:.4f}, keeping at most {keep} chunks (the sidebar's context).")
try:
    html, markdown = _report(token, config, cut, keep, ev)
except ValueError as exc:  # a context the report cannot be priced at (a cut of 0 keeps nothing): said, not raised
    html = markdown = None
    st.info(f"No report at cut {cut:.4f}: {md_text(exc)}. A cut of 0 keeps no chunk at all; set a cut above 0 in "
            "the sidebar (the default is 0.6). The files below do not depend on the cut.")
if html is not None:
    b1, b2 = st.columns(2)
    b1.download_button("Download report (HTML)", html, file_name="ragdiag-report.html", mime="text/html",
                       icon=":material/download:", width="stretch")
    b2.download_button("Download report (Markdown)", markdown, file_name="ragdiag-report.md", mime="text/markdown",
                       icon=":material/download:", width="stretch")
    st.caption(f"Chosen configuration {md_text(config)}, gate: keep at most {keep} chunks closer than {cut:.3f}.")

st.subheader("Per-query results and standard files")
csv, parquet, summary, trec = _tables(token, ev)
c1, c2, c3, c4 = st.columns(4)
c1.download_button("per_query.csv", csv, file_name="per_query.csv", mime="text/csv", width="stretch")
c2.download_button("per_query.parquet", parquet, file_name="per_query.parquet",
                   mime="application/vnd.apache.parquet", width="stretch")
c3.download_button("summary.json", summary, file_name="summary.json", mime="application/json", width="stretch")
c4.download_button("TREC runs + qrels (zip)", trec, file_name="ragdiag-trec.zip", mime="application/zip",
                   width="stretch")
st.caption("The TREC files load in ranx and pytrec_eval: one run per configuration (docno = chunk id, "
           "score = 1/rank so the order survives re-sorting) and one qrels per strategy (a chunk is relevant "
           "when it holds the needle whole; a destroyed needle's queries get the placeholder "
           "`ragdiag-no-chunk-holds-the-needle`, which no run retrieves, so ranx and pytrec_eval count them as "
           "misses and their means equal the tables).")
