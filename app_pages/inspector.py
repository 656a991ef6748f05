"""Inspector: one query, why the chosen configuration answered it or not (one sentence), and what it was given."""

import html

import pandas as pd
import streamlit as st

from ragdiag.index.citations import Answer, CharLocator, cite
from ragdiag.analyses.gate_table import query_outcomes
from ragdiag.analyses.hubs import crowding
from ragdiag.analyses.threshold.gate import kept_chunks
from ragdiag.core.gate import Gate, cut_text
from ui import cache
from ui.about import about_run
from ui.context import config_words, context, url_synced, use, write_url
from ragdiag.analyses.cause import CAUSES, causes as binding_causes
from ui.diag import funnels_for
from ui.fmt import DASH, dash_missing, drop_constant, highlight_row, ordinal, said_once
from ui.frames import top_hits
from ui.html import md_text, quote_html
from ui.inspect_words import (CAUSE_WORDS, FAILURES, OUTCOMES, RUNG_WORDS, answered_under, cause_sentence,
                              failures_frame, first_failure, opening_cut, outcome_frame, outcome_of, reranks)
from ui.jobs import evaluation


def page() -> None:
    st.title("Inspector")
    ev, token = evaluation()
    ctx = context(ev, token)
    config, cut, keep = ctx.config, ctx.cut, ctx.keep
    k = keep  # the gate's k is its keep: the outcome, the stage and the citations below all read the same top k
    fs = {f.config.label: f for f in funnels_for(token, ctx.gate, ev)}
    res = ev.result(config)
    texts = {q.id: q.text for q in ev.queries}


    def outcomes(label: str) -> dict:
        """Every query's outcome under ``label`` (the library's ladder), with the funnel's words for the detail."""
        def compute():
            detail = {r.query_id: r.detail for r in fs[label].rows} if label in fs else {}
            return {o.query_id: outcome_of(o, label, detail.get(o.query_id, ""))
                    for o in query_outcomes(ev, label, Gate(keep, cut, k))}

        return cache.by_evaluation("outcomes", token, (label, k, keep, cut), compute)


    mine = outcomes(config)
    why = {c.query_id: c for c in cache.by_evaluation("causes", token, (config, k, keep, cut),
                                                      lambda: binding_causes(ev, config, Gate(keep, cut, k)))}

    f1, f2, f3 = st.columns([2, 1, 1])
    search = f1.text_input("Search queries by text or id", key="search", bind="query-params",
                           placeholder="e.g. q03 or 'kernel'")
    failures = f2.checkbox("Only failures", key="failures", bind="query-params",
                           help="Answerable queries not answered, and off-topic queries that get sources (bluffs).")
    # not bound to the URL: a bound picker keeps its words there, and links say the rung (?stage=destroyed)
    url_synced("stage", ["any", *OUTCOMES], fallback="any")
    stage = f3.selectbox("Outcome", ["any", *OUTCOMES], key="stage", format_func=lambda s: RUNG_WORDS.get(s, s),
                         help="Under the chosen configuration at the context's cut and keep.")
    write_url("stage", None if stage == "any" else stage)

    ids = [q.id for q in ev.queries]
    shown = [qid for qid in ids
             if (not search.strip() or search.strip().lower() in f"{qid} {texts[qid]}".lower())
             and (not failures or mine[qid].outcome in FAILURES) and (stage == "any" or mine[qid].outcome == stage)]
    if not shown:
        st.info("No query matches the search and filter.")
        st.stop()
    failing = [qid for qid in shown if mine[qid].outcome in FAILURES]

    # ----- the failures, grouped by what alone would fix them; a row opens it below ---------------------
    if failing:
        fcauses = [why[q] for q in failing if q in why]
        counts = {c: sum(1 for x in fcauses if x.cause == c and x.outcome != "bluff") for c in CAUSES}
        bluffs_n = sum(1 for x in fcauses if x.outcome == "bluff")
        groups = [f"{CAUSE_WORDS[c]}: {n}" for c, n in sorted(counts.items(), key=lambda kv: -kv[1]) if n]
        groups += [f"bluffs (the cut lets them through): {bluffs_n}"] if bluffs_n else []
        st.markdown(f"**{len(failing)} failures** under {md_text(config)} at cut {ctx.cut_words}, by what alone would "
                    f"fix them: " + "; ".join(groups) + ".")
        ftable, fsame = drop_constant(failures_frame(fcauses, texts), keep=["query", "text"])
        words_cols = [c for c in ftable.columns if c not in ("answer rank", "answer distance")]  # numbers stay sortable
        ftable[words_cols] = dash_missing(ftable[words_cols])

        def _open_failure() -> None:
            rows = ((st.session_state.get("failures_table") or {}).get("selection") or {}).get("rows") or []
            if rows:
                st.session_state["q"] = ftable["query"].iloc[rows[0]]

        table_box = st.expander(f"The {len(failing)} failures, grouped by cause: select one to open it below")
        table_box.dataframe(ftable, hide_index=True, key="failures_table", on_select=_open_failure,
                     selection_mode="single-row", height=min(38 + 35 * len(ftable), 320),
                     column_config={"answer rank": st.column_config.NumberColumn(format="%d"),
                                    "answer distance": st.column_config.NumberColumn(format="%.3f")})
        table_box.caption("Grouped by the change that alone would answer the query (largest group first); sort by a column's "
                   "header; select a row to open it below. answered by: how many other configurations answer it at "
                   "this cut." + (" " + md_text(said_once(fsame, "Every row")) if fsame else ""))


    def _next_failure() -> None:
        current = st.session_state.get("q")
        later = [q for q in failing if ids.index(q) > (ids.index(current) if current in ids else -1)]
        if later or failing:
            st.session_state["q"] = (later or failing)[0]


    p1, p2 = st.columns([5, 1], vertical_alignment="bottom")
    # with no query chosen, the first failure under the context's configuration at its gate (an answerable one first:
    # lost, given wrong passages or refused), not an answered query
    url_synced("q", shown, fallback=first_failure(failing, {q: mine[q].outcome for q in shown}) or shown[0])
    qid = p1.selectbox(f"Query ({len(shown)} of {len(ids)})", shown, key="q",
                       format_func=lambda q: f"{q} · {RUNG_WORDS.get(mine[q].outcome, mine[q].outcome)} · {texts[q][:80]}")
    write_url("q", qid)
    p2.button("Next failure", key="next_failure", on_click=_next_failure, disabled=not failing,
              help=f"{len(failing)} failures in this list under {config}.")
    qi = ev.query_index(qid)
    query = ev.queries[qi]
    o = mine[qid]

    st.html(f'<div style="font-size:1.3rem; font-weight:600; margin:.25rem 0" data-ragdiag="question">'
            f"{html.escape(query.text)}</div>")
    all_outcomes = [outcomes(c.label)[qid] for c in ev.results if not c.external]
    good = "answered" if query.in_domain else "abstained"
    under = answered_under(all_outcomes, good)
    named = ", ".join(under[:6]) + (f" and {len(under) - 6} more" if len(under) > 6 else "")
    said = cause_sentence(o, why.get(qid), reranker=reranks(config))
    verdict = (f"**{md_text(config_words(config))}** — {md_text(said)} "
               + (f"{'Answered' if query.in_domain else 'Correctly refused'} at this cut by: {md_text(named)}."
                  if under and o.outcome != good
                  else f"{'Answered' if query.in_domain else 'Correctly refused'} by {len(under)} of {len(all_outcomes)} "
                       "configurations at this cut."))
    (st.success if o.outcome == good else st.error)(verdict)
    # the cut or the configurations the sentence names, one click away: the context changes, the query stays
    open_cut = opening_cut(why.get(qid), o.outcome)
    if open_cut is not None or (under and o.outcome != good):
        b1, b2, b3 = st.columns([1, 2, 1], vertical_alignment="bottom")
        if open_cut is not None:
            b1.button(f"Open at that cut ({cut_text(open_cut)})", key="open_cut", on_click=use,
                      kwargs={"cut": open_cut}, icon=":material/tune:",
                      help="Sets the context's cut (every page follows it); the configuration, the passages kept and "
                           "the query stay.")
        if under and o.outcome != good:
            other = (b2.selectbox("Configuration that " + ("answers" if query.in_domain else "refuses") + " it",
                                  under, key="open_config_pick", format_func=config_words)
                     if len(under) > 1 else under[0])
            b3.button("Open with that configuration" + ("" if len(under) > 1 else f" ({other})"), key="open_config",
                      on_click=use, kwargs={"config": other, "cut": ctx.cut}, icon=":material/swap_horiz:",
                      help="Sets the context's configuration (every page follows it); the cut, the passages kept and "
                           "the query stay.")

    frame, same = drop_constant(outcome_frame(all_outcomes, config), keep=["configuration", "outcome"])
    st.dataframe(highlight_row(frame, "configuration", config), hide_index=True, key="per_config",
                 height=min(38 + 35 * len(frame), 420))
    st.caption(f"Every configuration on this query, top {keep} passages, cut {ctx.cut_words}; the chosen one "
               "first. answer rank: of the first passage holding the answer whole; closest distance: the closest of the "
               "passages the gate looks at." + (" " + md_text(said_once(same)) if same else ""))

    question = ev.truth.question(query.question_id) if query.in_domain else None
    if question is not None:
        doc = ev.corpus.document(question.doc_id)
        loc = CharLocator(question.start, question.end)
        st.markdown(f"**Answer (needle)** — {md_text(question.doc_id)} › {md_text(question.section)} · phrasings: "
                    + "; ".join(f"{md_text(p)}: {md_text(t)}" for p, t in question.queries))
        st.code(f"{doc.path or doc.id}{loc.fragment}", language=None)
        st.html(quote_html(question.needle, base=question.start, needle=(question.start, question.end)))
    else:
        st.markdown(f"**Off-topic query** ({md_text(query.kind or 'off-topic')}): the corpus does not answer it; any "
                    "source is a bluff.")

    chunks = ev.indexes[res.config.strategy].chunks
    needle_of = (lambda c: (question.start, question.end) if question is not None and c.doc_id == question.doc_id
                 else None)


    def _where(c) -> str:
        return f"{md_text(c.id)} · {md_text(c.doc_id)} › {md_text(c.section or '(preamble)')}"


    def _under(d: float) -> str:
        return "passes the cut" if ctx.gate.under(d) else "over the cut"


    crowd = crowding(ev, config, qi, keep=keep) if query.in_domain and o.outcome != "destroyed" else None
    if crowd is not None and crowd.crowders:  # the answer ranked below the places the gate fills: who took them
        ans_at = (f"ranked {ordinal(crowd.answer_rank)}" if crowd.answer_rank
                  else f"not in the top {res.top_order.shape[1]}")
        ans_d = f" at distance {crowd.answer_distance:.3f}" if crowd.answer_distance is not None else ""
        more = crowd.above - len(crowd.crowders)
        st.subheader(f"What crowded the answer out under {config}")
        st.markdown(f"The passage holding the answer is {ans_at}{ans_d}; the gate gives at most {keep} passages, and "
                    f"these {len(crowd.crowders)} ranked above it took those places"
                    + (f" ({more} more rank between them and the answer)." if more > 0 else "."))
        st.dataframe(pd.DataFrame([{
            "rank": c.rank, "passage": c.chunk, "document › section": f"{c.doc_id} › {c.section}",
            "distance": c.distance, "closer than the answer by": c.closer_by,
            "under the cut": "yes (given)" if ctx.gate.under(c.distance) else "no",
            f"in the top {keep} of (queries)": c.k_occurrence, "× expected": c.ratio,
            "boilerplate": ", ".join(c.boilerplate) or DASH,
        } for c in crowd.crowders]), hide_index=True, key="crowding",
            column_config={"distance": st.column_config.NumberColumn(format="%.3f"),
                           "closer than the answer by": st.column_config.NumberColumn(format="%+.3f"),
                           "× expected": st.column_config.NumberColumn(format="%.2f")})
        st.caption(f"closer than the answer by: the answer's distance minus the passage's (positive: the passage is "
                   f"closer to the query than the answer is). in the top {keep} of: how many queries get this passage "
                   f"in their top {keep} (× expected: against every passage being as likely; a hub crowds many).")
        for c in crowd.crowders:
            ch = chunks[int(res.top_order[qi, c.rank - 1])]
            st.markdown(f"**#{c.rank}** {_where(ch)} · distance {c.distance:.3f} ({_under(c.distance)})")
            st.html(quote_html(ch.content, base=ch.start, needle=needle_of(ch)))

    if crowd is not None and crowd.answer_position is not None:  # the answer's own passage, always quoted
        ch = chunks[crowd.answer_position]
        rank_words = (f"#{crowd.answer_rank}" if crowd.answer_rank else f"not in the top {res.top_order.shape[1]}")
        d = crowd.answer_distance
        if crowd.answer_rank and ctx.gate.in_window(crowd.answer_rank):
            given = "given" if d is not None and ctx.gate.under(d) else f"not given: over the cut {ctx.cut_words}"
        else:
            given = f"not given: only the top {keep} are"
        st.subheader("The passage holding the answer")
        st.markdown(f"**{rank_words}** {_where(ch)}"
                    + (f" · distance {d:.3f} ({_under(d)}; {given})" if d is not None else f" · {given}")
                    + (f" · one of {crowd.holders} passages holding it" if crowd.holders > 1 else ""))
        doc_ch = ev.corpus.document(ch.doc_id)
        st.code(f"{doc_ch.path or doc_ch.id}{CharLocator(ch.start, ch.end).fragment}", language=None)
        st.html(quote_html(ch.content, base=ch.start, needle=needle_of(ch)))
    elif query.in_domain and o.outcome == "destroyed":
        st.markdown("**No passage holds the answer whole**: the chunking split it, so there is no passage to quote "
                    "(the answer itself is quoted above).")

    hits = top_hits(ev, config, qi, n=10)
    shown_hits, same_hits = drop_constant(hits.drop(columns=["position"]).rename(columns={"doc_id": "document"}),
                                          keep=["rank"])
    if crowd is None or not crowd.crowders:  # the passages the gate looks at, quoted (else quoted above)
        st.subheader(f"Top {keep} passages of {config}")
        for _, h in hits.head(keep).iterrows():
            c = chunks[int(h["position"])]
            mark = " · holds the answer" if h["holds needle"] else ""
            st.markdown(f"**#{h['rank']}** {_where(c)} · score {h['score']:.4f} · distance {h['distance']:.3f} "
                        f"({_under(h['distance'])}){mark}")
            st.html(quote_html(c.content, base=c.start, needle=needle_of(c)))
    with st.expander(f"All top {len(hits)} hits of {config}"):
        st.dataframe(shown_hits, hide_index=True, key="top_hits",
                     column_config={"score": st.column_config.NumberColumn(format="%.4f"),
                                    "distance": st.column_config.NumberColumn(format="%.3f")})
        if same_hits:
            st.caption(md_text(said_once(same_hits, "Every hit")))

    st.subheader("Citation preview")
    kept = [(chunks[pos], d) for pos, d in kept_chunks(res, qi, Gate(keep, cut))]
    answer = cite(query.text, kept, ev.corpus, Gate(keep, cut))
    if isinstance(answer, Answer):
        st.caption(f"{len(answer.citations)} source(s) pass the cut {cut_text(cut)}. The model writes [n]; the server "
                   "attaches document, section and locator.")
        st.dataframe(pd.DataFrame([
            {"n": c.index, "document": c.doc_name, "section": c.label, "locator": c.fragment, "url": c.url,
             "distance": c.distance, "quote": c.quote[:160]}
            for c in answer.citations
        ]), hide_index=True, column_config={"distance": st.column_config.NumberColumn(format="%.3f")})
        st.markdown("**The exact prompt**")
        st.code(answer.prompt, language=None, wrap_lines=True)
    else:
        st.markdown("**NO ANSWER**")
        st.text(answer.message)
    about_run(ev)


page()
