"""Export: the shareable report, per-query results and standard TREC files, as downloads."""

import streamlit as st

from ragdiag.present.export import trec_zip
from ragdiag.present.report.build import build_report
from ragdiag.present.export import per_query_parquet, summary_json
from ragdiag.present.per_query import per_query_frame
from ui import cache
from ui.context import config_words, context
from ui.html import md_text
from ui.report import report_args, report_cut_words, ruler_section
from ui.jobs import evaluation


def page() -> None:
    st.title("Export")
    st.caption("Everything here is computed by the library for the evaluation on screen; nothing is recomputed "
               "by the page. The report opens offline in any browser (charts are inline SVG).")

    ev, token = evaluation()


    def _report(token: str, ev, args: dict) -> tuple[str, str]:
        def build():
            report = build_report(ev, ruler=ruler_section(ev, args), **args)
            return report.to_html(), report.to_markdown()

        with st.spinner("Building the report…"):
            return cache.data_by_evaluation("report", token, tuple(sorted(args.items())), build)


    def _tables(token: str, ev) -> tuple[bytes, bytes, bytes, bytes]:
        def build():
            csv = per_query_frame(ev).to_csv(index=False).encode("utf-8")
            return csv, per_query_parquet(ev), summary_json(ev).encode("utf-8"), trec_zip(ev)

        return cache.data_by_evaluation("tables", token, (), build)


    st.subheader("Report for product owners")
    ctx = context(ev, token)
    config, keep = ctx.config, ctx.keep
    about = ("the recommendation" if ctx.is_recommendation else "your choice (sidebar)")
    args = report_args(ev, ctx, token=token)
    at = report_cut_words(ev, ctx, args, token)  # the cut in its score: "cut 0.524" or "MaxSim score ≥ 13.39"
    st.caption(f"About {md_text(config_words(config))} at {md_text(at)}, keeping at most {keep} passages: "
               f"{about}.")
    try:
        html, markdown = _report(token, ev, args)
    except ValueError as exc:  # a context the report cannot be made at: said, not raised
        html = markdown = None
        st.info(f"No report at {md_text(at)}: {md_text(exc)}. The files below do not depend on the cut.")
    if html is not None:
        b1, b2 = st.columns(2)
        b1.download_button(f"Download report at {at} (HTML)", html, file_name="ragdiag-report.html", mime="text/html",
                           icon=":material/download:", width="stretch")
        b2.download_button(f"Download report at {at} (Markdown)", markdown, file_name="ragdiag-report.md", mime="text/markdown",
                           icon=":material/download:", width="stretch")

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


page()
