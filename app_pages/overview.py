"""Overview: how each configuration retrieves (recall at the gate's k) and where answerable queries are lost."""

import pandas as pd
import streamlit as st

from ragdiag.core.defaults import KS, PRIMARY_K
from ragdiag.analyses.funnel import funnel_rows; from ragdiag.analyses.outcomes import LADDER as STAGES
from ragdiag.analyses.granular import granular_rows, redundancy_rows
from ragdiag.analyses.compare.intervals import SHARE_INTERVAL_LABEL
from ragdiag.analyses.summary import summary_rows
from ragdiag.analyses.versus import gate_rates
from ragdiag.core.words import cut_text, found_then_answered, pct
from ui.about import about_run
from ui.context import config_words, context, link_params
from ui.diag import funnels_for
from ui.diag_frames import funnel_frame, granular_frame, stage_queries_frame
from ui.fmt import dash_missing, drop_constant, highlight_row, interval, rate, said_once
from ui.inspect_words import RUNG_WORDS
from ui.frames import filter_configs, recall_long
from ui.html import md_text
from ui.jobs import evaluation, first_strategy, url_strategies
from ui.overview_charts import funnel_stack, funnel_waterfall, recall_dots
from ui.state import access, load_inputs, settings
from ui.tables import funnel_view, recall_view
from ui.chart_theme import themed


def page() -> None:
    st.title("Overview")
    corpus, truth = load_inputs()
    # The table needs one strategy: the first the URL names, else the default; the rest follow in the background.
    s = settings()
    named = url_strategies(s)
    ev, token = evaluation(need=named[:1] or [first_strategy(s)], want=named)
    ctx = context(ev, token)

    strategies = list(s.strategies)  # every configured one, ready or not: picking one moves it to the front
    retrievers = list(dict.fromkeys(c.retriever for c in ev.results))
    f1, f2, f3 = st.columns([2, 2, 1])
    chosen_s = f1.multiselect("Strategies", strategies, default=strategies, key="strategies", bind="query-params")
    pending = [x for x in chosen_s if x not in ev.indexes]  # picked ones moved to the front (they are in the URL)
    chosen_r = f2.multiselect("Retrievers", retrievers, default=retrievers, key="retrievers", bind="query-params")
    phrasing = f3.segmented_control("Phrasing", ["all", *truth.phrasings], default="all", key="phrasing",
                                    bind="query-params", required=True) or "all"

    shown = set(filter_configs([c.label for c in ev.results], chosen_s, chosen_r))
    rows = [r for r in summary_rows(ev, phrasing=phrasing) if r.config in shown]
    if not rows and pending:
        st.info(f"Computing {', '.join(pending)} (moved to the front); its rows appear here when it is ready.")
        st.stop()
    if not rows:
        st.info("Choose at least one strategy and one retriever.")
        st.stop()

    # ----- the first line: how "found in the top k" becomes the Summary's "answered" (the cut in between) ------------
    found = next((r for r in summary_rows(ev, ks=(ctx.keep,)) if r.config == ctx.config), None)  # every phrasing
    try:  # an external run without distances has no cut to apply: no such line
        answered = gate_rates(ev, ctx.config, ctx.gate)["answered"] if found is not None else None
    except ValueError:
        answered = None
    if answered is not None and answered.rate is not None and found.recall[ctx.keep].estimate is not None:
        l1, l2 = st.columns([5, 1], vertical_alignment="center")
        l1.markdown(f"{md_text(ctx.config)}: " + md_text(found_then_answered(found.recall[ctx.keep].estimate,
                                                                           answered.rate, ctx.keep, ctx.cut)),
                    help="Found: a passage holding the answer is among the top passages, before the cut. Answered: "
                         "it is also closer than the cut, so it is given. The Summary leads with the answered share.")
        l2.page_link("app_pages/summary.py", label="See the Summary", icon=":material/flag:", query_params=link_params())

    best = max(rows, key=lambda r: (r.recall[PRIMARY_K].estimate, r.mrr.estimate))
    mine = next((r for r in rows if r.config == ctx.config), None)
    headline = (f"At k = {PRIMARY_K}, **{md_text(config_words(best.config))}** finds the answer for "
                f"{rate(best.recall[PRIMARY_K])} of {best.queries} queries ({phrasing})")
    if mine is not None and mine.config != best.config:
        headline += f"; the context's {md_text(config_words(mine.config))}: {rate(mine.recall[PRIMARY_K])}"
    st.markdown(headline + ".")
    st.altair_chart(themed(recall_dots(recall_long(rows, ks=[PRIMARY_K]), k=PRIMARY_K, chosen=ctx.config,
                                title=f"Recall at k = {PRIMARY_K}: highest estimate {best.config} "
                                      f"({pct(best.recall[PRIMARY_K].estimate)}); Compare says which differ")))
    table, constant = recall_view(rows, ks=KS, primary=PRIMARY_K)
    st.dataframe(highlight_row(table, "configuration", ctx.config), hide_index=True, key="recall_table",
                 height=min(38 + 35 * len(table), 880))
    st.caption(f"{rows[0].queries} answerable queries ({phrasing}: questions × phrasings)"
               + "".join(f"; {md_text(k)}: {v}" for k, v in constant.items() if k != "queries")
               + ". R@k: share whose answer (needle) is whole in a chunk of the top k, 95% interval in points (clustered Wilson over questions, exact at 4 or fewer hits or misses). "
                 "destroyed: questions whose needle no chunk holds (recall capped at 0). Sorted by "
                 f"R@{PRIMARY_K}; the context's configuration highlighted.")

    # ----- the funnel: where each answerable query was lost ----------------------------------------------
    fs = [f for f in funnels_for(token, ctx.gate, ev) if f.config.label in shown]  # k = keep
    if fs:
        carry = {k: v for k, v in link_params().items() if k != "config"}  # every link keeps the cut, keep and goal
        frame = funnel_frame(fs, carry)
        ff = {f.config.label: f for f in fs}
        chosen = ctx.config if ctx.config in ff else fs[0].config.label
        n_ans = ff[chosen].counts().get("answered", 0)
        st.subheader(f"Where answers are lost: {md_text(chosen)} answers {n_ans} of {len(ff[chosen].rows)} "
                     f"answerable queries")
        left, right = st.columns([3, 2])
        left.altair_chart(themed(funnel_stack(frame, chosen=chosen)), width="stretch")
        right.altair_chart(themed(funnel_waterfall(frame, chosen)), width="stretch")
        R = RUNG_WORDS
        st.caption(f"Every answerable query gets the first stage that lost its answer, in pipeline order: "
                   f"{R['destroyed']}, {R['truncated']} (the encoder window), {R['not-in-pool']} (not in the top 25; for "
                   f"a reranker: not among those it re-scores), {R['ranked-low']} (below the top {ctx.keep}), "
                   f"{R['refused']} or {R['kept-but-wrong']} (cut {cut_text(ctx.cut)}, "
                   f"at most {ctx.keep} passages), or "
                   f"{R['answered']}. Counts are over all phrasings.")
        with st.expander("The bars as a table, with their links (for the keyboard and screen readers)"):
            bars = frame[frame["queries"] > 0]
            btable, bsame = drop_constant(pd.DataFrame({
                "configuration": bars["config"], "outcome": [RUNG_WORDS.get(s, s) for s in bars["stage"]],
                "queries": bars["queries"], "of (queries)": bars["of"],
                "share (95% interval)": [interval(s, lo, hi) for s, lo, hi in zip(bars["share"], bars["low"], bars["high"])],
                "link": bars["link"]}), keep=["configuration", "outcome", "link"])
            st.dataframe(btable, hide_index=True, key="funnel_links",
                         column_config={"link": st.column_config.LinkColumn("link", display_text="open in the Inspector")})
            st.caption("What a bar's hover says and where its click goes: each configuration's queries at each stage."
                       + (" " + md_text(said_once(bsame)) if bsame else ""))
        ftable, fconst = funnel_view(funnel_rows(fs))
        st.dataframe(highlight_row(ftable, "configuration", chosen), hide_index=True, key="funnel_table")
        if fconst:
            st.caption("Same on every row: " + "; ".join(f"{md_text(k)} {v}" for k, v in fconst.items()) + ".")
        stage = st.selectbox("Queries lost at", list(STAGES), index=STAGES.index("ranked-low"), key="lost_at",
                             bind="query-params", format_func=lambda s: RUNG_WORDS.get(s, s))
        sq = stage_queries_frame(fs, ev, stage, carry)
        st.caption(f"{len(sq)} (configuration, query) pairs at **{RUNG_WORDS.get(stage, stage)}**; open one in the "
                   "Inspector.")
        sq = sq.rename(columns={"config": "configuration", "query_id": "query", "dense_rank": "dense rank",
                                "bm25_rank": "BM25 rank", "pool_rank": "pool rank", "final_rank": "final rank"})
        st.dataframe(sq.astype(object).where(sq.notna(), "–"), hide_index=True, key="stage_queries",
                     column_config={"inspect": st.column_config.LinkColumn("inspect", display_text="open")})

    with st.expander("Recall at every granularity, and redundancy of the top k"):
        st.caption("document: a chunk of the needle's document in the top k; section: a chunk overlapping its section; "
                   "span: a chunk holding the needle whole (the table above). High document and low span recall: the "
                   "retriever finds the place but the chunking splits the answer. A query is credited once, at its "
                   "first qualifying chunk, however many chunks hold its needle. 95% clustered Wilson intervals over "
                   "questions, exact at 4 or fewer hits or misses.")
        gtable, gsame = drop_constant(dash_missing(granular_frame(
            [r for r in granular_rows(ev, phrasing=phrasing) if r.config in shown], ks=[1, PRIMARY_K, 20])),
            keep=["configuration", "config"])
        st.dataframe(gtable, hide_index=True, key="granular_table")
        if gsame:
            st.caption(md_text(said_once(gsame)))
        red = [r for r in redundancy_rows(ev, k=PRIMARY_K) if r.config in shown]
        st.caption(f"Redundancy: share of the top-{PRIMARY_K} slots (all queries) whose text overlaps a higher-ranked "
                   "chunk by more than half of the shorter one (wasted context); " + SHARE_INTERVAL_LABEL + ".")
        rtable, rsame = drop_constant(pd.DataFrame([{"configuration": r.config, "redundant slots": r.redundant_slots,
                                                     "slots": r.slots, "redundancy (share of slots)": rate(r.redundancy)}
                                                    for r in red]), keep=["configuration"])
        st.dataframe(rtable, hide_index=True, key="redundancy_table")
        if rsame:
            st.caption(md_text(said_once(rsame)))

    with st.expander("Slices: is one kind of question worse than the rest?"):
        from ui.collection_view import slices_section

        slices_section(ev, ctx.config, k=PRIMARY_K, st=st)

    with st.expander("Inputs: corpus and ground truth"):
        n_in = sum(1 for q in truth.queries if q.in_domain)
        st.caption(f"Corpus {md_text(corpus.name if access().locked else corpus.root)} · sha256 {corpus.sha256[:12]}")
        c1, c2, c3, c4, c5, c6 = st.columns(6)
        c1.metric("documents", len(corpus.documents))
        c2.metric("characters", f"{corpus.n_chars:,}")
        c3.metric("sections", corpus.n_sections)
        c4.metric("questions", len(truth.questions))
        c5.metric("in-domain queries", n_in, help="phrasings: " + ", ".join(truth.phrasings))
        c6.metric("out-of-domain", len(truth.ood))
        st.caption(md_text(truth.source) + " · phrasings: " + ", ".join(truth.phrasings))
        if corpus.failures:
            st.caption(f"{len(corpus.failures)} file(s) could not be loaded; the others are searchable.")
            st.table(pd.DataFrame([{"file": md_text(f.path), "reason": md_text(f.reason)} for f in corpus.failures]),
                     hide_index=True)  # a table renders Markdown: data is escaped
    about_run(ev)


page()
