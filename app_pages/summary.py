"""Summary: what to ship, in plain words, with the goal judged and the three numbers that support it."""

from dataclasses import replace

import streamlit as st

from ragdiag.analyses.goals import judge_goals
from ragdiag.analyses.threshold.rates import rate_rows
from ragdiag.analyses.versus import difference_words, gate_rates
from ragdiag.core.gate import Gate, cut_text
from ragdiag.core.words import OUTCOME_WORDS, outcome_sentence, ship_headline
from ui import cache
from ui.about import about_run
from ui.comparator import comparator, delta_args, versus_for
from ui.context import config_words, context, link_params, recommendation, use
from ui.fmt import pct, rate
from ui.html import md_text
from ui.jobs import evaluation, first_strategy
from ui.report import report_args, report_builder, report_cut_words
from ui.ruler_view import computed_ruler
from ui.state import settings
from ui.native_view import infeasible_verdict, native_cells, native_report_cut, native_summary_line, native_table
from ragdiag.analyses.threshold.native_cuts import filter_words


def page() -> None:
    st.title("Summary")
    s = settings()
    # The first strategy's results are enough to start: the recommendation is provisional until every strategy is in.
    ev, token = evaluation(need=[first_strategy(s)], want=list(s.strategies))
    ctx = context(ev, token)
    if ctx.provisional:
        ready = sorted({c.strategy for c in ev.results if not c.external})
        st.info(f"Provisional: this is the best of the {len(ready)} of {len(s.strategies)} chunking strategies computed "
                f"so far ({', '.join(ready)}); it may change as the others finish (see the line below).")
    rec = recommendation(ev, token, ctx.keep, ctx.goal)
    n_in = int(ev.in_domain.sum())
    n_ood = len(ev.queries) - n_in

    # the four outcomes at the recommendation's gate, in the words every surface uses (ragdiag.core.words)
    at_rec = rate_rows(cache.sweep_for(token, rec.config, rec.keep, ev)[0], [rec.cut])[0]
    W = OUTCOME_WORDS
    cells = {"answered": rec.answered, "wrong_sources": at_rec.wrong_sources, "no_answer": at_rec.no_answer,
             "bluffs": rec.bluffs}
    # On the native score (context score=native) the cards, the sentence and the report are at the cut on the ranking's
    # own score (the report's cut: the context's, else the proposed one), counted as the report counts them.
    # (the visitor's native cut is on the score of the configuration on screen: the recommendation's only when it is it)
    native_at = (native_report_cut(ev, rec.config, rec.keep, ctx.max_bluff,
                                   ctx.native_cut if str(ctx.config) == str(rec.config) else None)
                 if ctx.score == "native" else None)
    if native_at is not None:
        cells = native_cells(native_table(ev, rec.config, rec.keep), native_at.cut)
    how = md_text(filter_words(rec.cut) if native_at is None else native_at.filter)
    verdict = infeasible_verdict(ev, token, ctx)  # no configuration meets both goals: that sentence, not a cut
    if verdict:
        st.markdown(f"### {md_text(verdict)}")
    elif native_at is not None:
        st.markdown(f"### {ship_headline(f'**{md_text(rec.words)}**', how=how)}")
    else:
        st.markdown(f"### {ship_headline(f'**{md_text(rec.words)}**', rec.cut)}")
    st.markdown(f"{rate(cells['answered'])} of answerable questions are {W['answered']} (a passage holding the answer), "
                f"{rate(cells['wrong_sources'])} {W['wrong_sources']} (a model would answer from them), "
                f"{rate(cells['no_answer'])} {W['no_answer']}; "
                f"{cells['bluffs'].count} of {n_ood} off-topic questions still get passages ({W['bluffs']}: "
                f"{rate(cells['bluffs'])}). "
                f"<span style='color:#757575'>{md_text(rec.config)} · at most {rec.keep} passages · "
                f"{how}</span>", unsafe_allow_html=True)
    if ctx.score == "native":  # the cut where the stack filters: the ranking's own score, higher keeps
        st.markdown(md_text(native_summary_line(ev, rec.config, rec.keep, ctx.max_bluff)))

    # ----- the goals, judged in words (the library's wording: the report's goal strip says the same) ----------
    # The answered goal (sidebar, URL ``answered``) is judged here, never optimised: the recommendation follows the bluff goal.
    for v in judge_goals({"answered": cells["answered"], "bluffs": cells["bluffs"]}, ctx.goal, n_in=n_in, n_ood=n_ood):
        mark = {True: ":green[**met**]", False: ":red[**not met**]", None: "**cannot be judged**"}[v.met]
        st.markdown(f"**Goal** · {md_text(v.goal_words)}: {mark}, {md_text(v.evidence)}.")

    # ----- the three numbers, against one comparator ----------------------------------------------------
    # on the native score nobody to compare with: another configuration's cut is on another scale
    other = comparator(ev, token, rec, ctx.keep, ctx.goal) if native_at is None else None
    vs = versus_for(ev, token, rec.config, Gate(rec.keep, rec.cut, rec.k), other) if other else None
    c1, c2, c3, c4 = st.columns(4)
    for col, key, better_up, unit in ((c1, "answered", True, "answerable questions"),
                                      (c2, "wrong_sources", False, "answerable questions"),
                                      (c3, "no_answer", False, "answerable questions"),
                                      (c4, "bluffs", False, "off-topic questions")):
        cell, label = cells[key], W[key]
        d = vs.differences[key] if vs and key in vs.differences else None
        col.metric(label, rate(cell), border=True, **(delta_args(d, better_up=better_up) if d is not None else {}),
                   help=f"Share of {unit} with its 95% range; {cell.count} queries (questions × phrasings)"
                        + (f". Below: the difference with {other.who} in points, 95% range." if other else "."))
    if native_at is None:
        st.caption(outcome_sentence(rec.cut, rec.answered.count, at_rec.wrong_sources.count, at_rec.no_answer.count,
                                    rec.bluffs.count, n_ood))
    else:
        st.caption(md_text(f"At {native_at.text} (higher keeps): of {n_in} answerable queries, {cells['answered'].count} "
                           f"{W['answered']}, {cells['wrong_sources'].count} {W['wrong_sources']}, "
                           f"{cells['no_answer'].count} {W['no_answer']}; {cells['bluffs'].count} of {n_ood} off-topic "
                           f"queries get passages ({W['bluffs']})."))
    if other is not None:
        st.caption(f"Compared with {md_text(other.words())}. "
                   + "; ".join(f"{w}: {difference_words(vs.differences[k])}"
                               for k, w in (("answered", W["answered"]), ("bluffs", W["bluffs"]),
                                            ("lost", f"not answered ({W['wrong_sources']} or {W['no_answer']})")))
                   + ". Grey: the range includes no difference.")

    # ----- the visitor's own choice, beside it ----------------------------------------------------------
    def your_choice(at_words: str, mine: dict, wrong_sources, no_answer) -> None:
        """The sidebar's choice at its cut (``at_words``): its four rates (``mine``: answered and bluffs) and each
        goal's verdict."""
        goals = judge_goals(mine, ctx.goal, n_in=n_in, n_ood=n_ood)
        st.info(f"**Your choice** (sidebar): {md_text(config_words(ctx.config))} at {at_words}, at most {ctx.keep} "
                f"passages: {W['answered']} {rate(mine['answered'])}, {W['wrong_sources']} {rate(wrong_sources)}, "
                f"{W['no_answer']} {rate(no_answer)}, {W['bluffs']} {rate(mine['bluffs'])}. "
                + "; ".join(f"Goal {md_text(v.goal_words)}: " + (v.status if v.met is not False else f"**{v.status}**")
                            for v in goals) + ".")

    mine_at = (native_report_cut(ev, ctx.config, ctx.keep, ctx.max_bluff, ctx.native_cut)
               if ctx.score == "native" and not ctx.is_recommendation else None)
    if mine_at is not None:  # the visitor's configuration at its cut on the ranking's own score
        c = native_cells(native_table(ev, ctx.config, ctx.keep), mine_at.cut)
        your_choice(f"{md_text(mine_at.text)} (higher keeps)", c, c['wrong_sources'], c['no_answer'])
    elif not ctx.is_recommendation:
        at_mine = rate_rows(cache.sweep_for(token, ctx.config, ctx.keep, ev)[0], [ctx.cut])[0]
        your_choice(f"strictness {ctx.cut_words}", gate_rates(ev, ctx.config, ctx.gate), at_mine.wrong_sources,
                    at_mine.no_answer)

    b1, b2 = st.columns(2)
    # one report per context: the Summary's button and the Export page's give the same report, and say its cut
    args = report_args(ev, ctx if native_at is not None or ctx.score != "native" else replace(ctx, score="dense"),
                       token=token)  # a configuration with no score of its own: its report on the dense distance
    b1.download_button(f"Download report at {report_cut_words(ev, ctx, args, token)}", report_builder(ev, args),
                       file_name="ragdiag-report.html", mime="text/html", icon=":material/download:", type="primary",
                       key="summary_report", on_click="ignore", width="stretch",
                       help="The context (sidebar: configuration, cut, goals), the Export page's report, as one HTML "
                            "file that opens offline.")
    b2.button("Use this configuration and cut", key="use_recommended", on_click=use, width="stretch",
              kwargs={"config": rec.config, "cut": rec.cut, "keep": rec.keep},
              disabled=ctx.is_recommendation,
              help="Every page already shows the recommendation unless you chose otherwise; this sets it back.")

    st.page_link("app_pages/glossary.py", label="What these words mean", icon=":material/menu_book:",
                 query_params=link_params())
    with st.expander("How we know"):
        st.markdown(md_text(rec.why))
        st.markdown(f"Cut chosen by: {md_text(rec.cut_method)} (goal: at most {pct(rec.max_bluff)} bluffs)."
                    + (f" {md_text(rec.guarantee[:1].upper() + rec.guarantee[1:])}." if rec.guarantee else ""))
        if len(rec.best_set) > 1:
            st.markdown(f"Statistically tied with the best ({len(rec.best_set)} of {len(ev.results)}) on answers given, "
                        "each at its own strictness for the same goal: "
                        + ", ".join(md_text(config_words(c)) for c in rec.best_set) + ".")
        if rec.runner_up:
            st.markdown(f"Runner-up: {md_text(config_words(rec.runner_up))}"
                        + (f" at strictness {cut_text(rec.runner_up_cut)}, its own for the same goal"
                           if rec.runner_up_cut is not None else "")
                        + ".")
        st.caption("Differences: each pipeline at its own cut, query by query; 95% range over questions (a "
                   "question's phrasings together): the pair's own exact test, widened where few questions differ.")
        checked = computed_ruler(token)  # said when the Grow page already checked it; never computed here
        if checked is not None:
            st.markdown(md_text(checked.headline()))
        st.page_link("app_pages/truth_review.py", label="Can this set tell? The ruler: headroom, shortcuts, leakage, "
                     "and the smallest difference these questions resolve", icon=":material/straighten:",
                     query_params=link_params())
    about_run(ev)


page()
