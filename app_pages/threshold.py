"""Threshold: the goal, the cut that meets it (one click applies it), and what the cut on screen does."""

import pandas as pd
import streamlit as st

from ragdiag.analyses.compare.intervals import upper_bound_words
from ragdiag.core.gate import Gate, cut_text
from ragdiag.core.goal import Goal
from ragdiag.analyses.threshold.gate import GATE_DISTANCE, bluffs_at, sweep
from ragdiag.analyses.threshold.export import thresholds_yaml
from ragdiag.analyses.threshold.rates import rate_rows
from ui import cache
from ui.about import about_run
from ragdiag.core.words import OUTCOME_WORDS, outcome_sentence
from ui.context import config_words, context, cut_slider, link_params, use, use_min_answered
from ui.fmt import pct, rate, share
from ui.gate_charts import x_extent
from ui.html import md_text, quote_html
from ui.jobs import evaluation
from ui.model_cut import model_cut_caption
from ui.native_view import native_section, native_table, score_switch
from ui.threshold_slices import slice_section, slice_verdict_line
from ui.threshold_view import (cost_choice, cost_goal, current_cut_audit, current_cut_inputs, current_cut_sentence,
                               how_we_know, movers, proposal_costs)
from ui.threshold_charts import TRADEOFF_CLICKS, histogram_chart, tradeoff_chart, tradeoff_table


def page() -> None:
    st.title("Threshold")
    ev, token = evaluation()
    ctx = context(ev, token)
    config, cut, keep = ctx.config, ctx.cut, ctx.keep
    inputs, table, curve = cache.sweep_for(token, config, keep, ev)
    row = sweep(inputs, [cut]).row(cut)
    rates = rate_rows(inputs, [cut])[0]
    n_in, n_ood = table.n_in, table.n_ood

    # ----- the goal first, and the cut that meets it -------------------------------------------------
    def _goal_kind() -> None:
        """Picking "answered at least" with no answered goal in the context sets the one the field shows (50%)."""
        if st.session_state.get("goal") == "answered at least":
            use_min_answered(0.5, if_unset=True)


    ntable = native_table(ev, config, keep)  # the ranking's own score, when it has one: a switch beside the goal
    g1, g2, g3, *g4 = st.columns([2, 1.4, 1.7, 1.7] if ntable is not None else [2, 1, 2], vertical_alignment="bottom")
    kind = g1.segmented_control("Goal", ["bluffs at most", "answered at least"], default="bluffs at most",
                                key="goal", required=True, on_change=_goal_kind) or "bluffs at most"
    if kind == "bluffs at most":  # the bluff goal is the context's: the recommendation and every page follow it
        target_pct = g2.number_input("percent of off-topic queries", min_value=0.5, max_value=99.5, step=1.0,
                                     value=100 * ctx.max_bluff, key=f"goal_bluffs_{ctx.max_bluff}",
                                     on_change=lambda: use(max_bluff=st.session_state[f"goal_bluffs_{ctx.max_bluff}"] / 100))
    else:  # the answered goal is the context's too (the Summary and the report judge it); the recommendation does not
        # follow it. Picking this goal with none set yet sets the one shown (50%), so every page judges the same goal.
        answered_pct = 100 * (0.5 if ctx.min_answered is None else ctx.min_answered)
        answered_key = f"goal_answered_{answered_pct:g}"
        target_pct = g2.number_input("percent of answerable queries", min_value=0.0, max_value=100.0, step=1.0,
                                     key=answered_key, value=answered_pct,
                                     on_change=lambda: use_min_answered(st.session_state[answered_key] / 100))
    target = target_pct / 100
    goal = Goal(max_bluff=target) if kind == "bluffs at most" else Goal(min_answered=target)
    if score_switch(g4[0] if g4 else None, ctx, ntable) == "native" and ntable is not None:
        native_section(ev, ctx, ntable, goal.max_bluff)  # slider, sentence, both charts and the export on that score
        about_run(ev)
        st.stop()
    choice = cache.choice_for(token, config, keep, goal, ev)
    # For a bluff goal the library proposes the conformal cut (a guarantee for new off-topic queries); the in-sample
    # rule's cut is optimistic. Too few off-topic queries for a conformal cut: the in-sample one, said so.
    conformal = goal.max_bluff is not None and choice.conformal_cut is not None
    proposed = choice.proposal.cut  # what `threshold` proposes and `--export` writes
    if proposed is None:
        g3.warning("No cut reaches this goal on this set.")
    else:
        g3.button(f"Use this cut: {cut_text(proposed)}", type="primary", key="use_cut", on_click=use,
                  kwargs={"cut": proposed}, disabled=cut_text(proposed) == cut_text(cut),
                  help="Sets the cut of the context (sidebar and URL) for every page.")

    def _meets(count: int, total: int) -> bool:
        return goal.met_by(count / total if total else 0.0)


    # ----- the cut: a slider bound to the context (every page follows), and what it does, in one sentence -----
    cut_slider(ev, token, ctx, key="threshold_cut")
    whose = "the recommendation" if ctx.is_recommendation else "your choice"
    meets = _meets(*((row.bluffs, n_ood) if goal.max_bluff is not None else (row.answered, n_in)))
    st.markdown(outcome_sentence(cut, row.answered, row.wrong_sources, row.no_answer, row.bluffs, n_ood, whose)
                + (" Meets the goal." if meets else " :red[Misses the goal.]"))

    # ----- what the cut on screen does ----------------------------------------------------------------
    today = current_cut_audit(ctx, inputs, goal, proposed)  # the cut you run today (its fields sit below the charts)
    cost = cost_choice(ctx, inputs, folds=choice.folds)
    # (the thresholds download and the configuration's caption sit under the charts: the first screen reaches them)
    today_at = {"you run today": today.cut_distance if today is not None else None}
    lo, hi = x_extent(cache.distances_for(token, config, keep, ev)["distance"], cut,
                      *(c for c in (choice.cut, choice.conformal_cut, today_at["you run today"],
                                    cost.cut if cost is not None else None) if c is not None), pad=0.03)
    h, t = st.columns(2)
    dist = cache.distances_for(token, config, keep, ev)
    # Both charts are made once per evaluation, goal and x range; a move of the cut sends only the rows that hold it,
    # and the browser redraws each chart in place (ui.threshold_charts).
    h.container(key="threshold_histogram").altair_chart(  # keyed: a browser test reads this one chart by its key
        histogram_chart(token, config, keep, dist, cut=cut, markers=today_at), width="stretch")
    # The same chart from one cut to the next (a new key would make the browser build it anew); a new one after each
    # click, so that a click on the step clicked before still applies it.
    TRADEOFF = f"tradeoff_{st.session_state.get(TRADEOFF_CLICKS, 0)}"


    def _picked() -> None:
        """A click on the curve: the cut of the clicked step becomes the context's (the visitor chose it)."""
        points = ((st.session_state.get(TRADEOFF) or {}).get("selection") or {}).get("pick") or []
        st.session_state[TRADEOFF_CLICKS] = st.session_state.get(TRADEOFF_CLICKS, 0) + 1
        if points and points[0].get("cut") is not None:
            use(cut=float(points[0]["cut"]))


    t = t.container(key="threshold_curve")  # keyed: a browser test reads this one chart by its key
    t.altair_chart(tradeoff_chart(token, config, keep, curve, cut=cut, goal=target,
                                  goal_kind="bluffs" if goal.max_bluff is not None else "answered", extent=(lo, hi),
                                  pick="pick", markers={"fitted here": choice.cut, "proposed": proposed, **today_at,
                                                        "cost goal": cost.cut if cost is not None else None},
                                  queries={"answered": ([q for q, i in zip(inputs.query_ids, inputs.in_domain) if i],
                                                        inputs.closest_holder[inputs.in_domain]),
                                           "bluffs": ([q for q, i in zip(inputs.query_ids, inputs.in_domain) if not i],
                                                      inputs.closest[~inputs.in_domain])},
                                  title=f"Answered {pct(row.answered / n_in if n_in else None)}, bluffs "
                                        f"{pct(row.bluffs / n_ood if n_ood else None)} at cut {ctx.cut_words}"),
                   width="stretch", key=TRADEOFF, on_select=_picked, selection_mode="pick")

    # ----- below the charts: the goal's verdict in full, the proposal's rule and guarantee, slices, today ----
    for note in choice.notes:  # what this set cannot measure (no off-topic queries, too few questions)
        st.info(md_text(note))
    measured, total = (row.bluffs, n_ood) if goal.max_bluff is not None else (row.answered, n_in)
    what = ("off-topic questions still get passages" if goal.max_bluff is not None
            else "answerable questions get a passage holding the answer")
    goal_words = f"{'at most' if goal.max_bluff is not None else 'at least'} {pct(target)}"
    if _meets(measured, total):
        st.markdown(f"At strictness **{ctx.cut_words}** ({whose}), {share(measured, total)} {what} "
                    f"({pct(measured / total if total else None)}): it meets the goal of {goal_words} on these queries "
                    f"only (a rate measured on the queries a cut was chosen on is optimistic for new ones).")
    else:
        st.markdown(f":red[**At strictness {ctx.cut_words} ({whose}), {share(measured, total)} {what} "
                    f"({pct(measured / total if total else None)}): it misses the goal of {goal_words}.**]")
    key = "bluffs" if goal.max_bluff is not None else "answered"
    cv = choice.cross_validated.get(key)
    # Without a conformal cut the proposal is the rule's cut as printed (rounded to keep what the rule counted): the
    # sentence prints that number, the one the button applies, and its rates at it, so what is printed is what is used.
    at_proposed = (rate_rows(inputs, [proposed])[0] if proposed is not None and not conformal
                   else choice.in_sample)
    ins = at_proposed.outcome(key) if at_proposed else None
    if conformal:
        at = choice.conformal_rates.outcome(key) if getattr(choice, "conformal_rates", None) else None
        st.markdown(f"Proposed cut **{cut_text(proposed)}**, set to hold for new off-topic questions: "
                    f"{md_text(choice.conformal)}"
                    + (f"; here {rate(at)} {key}" if at else "") + ".")
    if choice.cut is not None:
        shown_cut = choice.cut if conformal or proposed is None else proposed
        sentence = (f"{'The cut fitted to these questions' if conformal else 'Proposed cut'} **{cut_text(shown_cut)}** "
                    f"({md_text(choice.rule)})"
                    f": in sample (optimistic) {rate(ins)} {key}"
                    + (f"; cross-validated ({choice.folds} folds by question) {rate(cv)}" if cv else "") + ".")
        if cv is not None and cv.rate is not None and not goal.met_by(cv.rate):
            sentence += f" :red[On questions it was not chosen on, that rule misses the goal ({pct(cv.rate)} {key}).]"
        (st.caption if conformal else st.markdown)(sentence)

    # ----- one cut for every slice? the verdict here, the slices' distances in their section below -------
    slice_verdict_line(ev, token, config, keep, ctx.max_bluff)


    # the cut you run today: a number and its units (the context's), and the CLI's sentence for it
    current_cut_sentence(today, current_cut_inputs(ctx))

    # the cut on screen as the thresholds file a service reads (`threshold --export` writes the proposed one)
    model = (ev.retriever_stamps.get(config) or {}).get("model") or dict(ev.encoder_stamp)
    st.download_button(f"Download the thresholds at cut {cut_text(cut)} (YAML)", key="export_thresholds",
                       mime="application/x-yaml",
                       # written when clicked (not on every move of the cut)
                       data=lambda: thresholds_yaml(inputs, choice, config=config, model=model,
                                                    describe=config_words(config), cut=cut),
                       file_name=f"thresholds-{config.replace('/', '-')}.yaml",
                       help="The cut on screen in every consumer's units, the rates at it, the goal, the proposal with "
                            "its guarantee and the model the distances belong to.")

    st.caption(f"Configuration **{md_text(config_words(config))}** · keep at most {keep} chunks · {GATE_DISTANCE}.")

    with st.expander("The trade-off as a table: every cut where a query changes outcome"):
        st.dataframe(cache.by_evaluation("tradeoff_table", token, (config, keep), lambda: tradeoff_table(inputs)),
                     hide_index=True, key="tradeoff_table", height=320)
        st.caption("What the curve's hover shows, for the keyboard and screen readers: the cuts the slider "
                   "stops at, the counts at each, and the queries that change between one and the next.")


    def _costs():
        """What the proposal costs, the queries that alone move it, and the cost goal."""
        st.subheader("What the proposal costs")
        proposal_costs(inputs, goal, choice.proposal)
        movers(inputs, goal, proposed)
        cost_goal(ctx, cost)
        how_we_know(folds=choice.folds)


    labels = {"answered": (OUTCOME_WORDS["answered"], n_in), "wrong_sources": (OUTCOME_WORDS["wrong_sources"], n_in),
              "no_answer": (f"{OUTCOME_WORDS['no_answer']} (nothing close enough)", n_in),
              "bluffs": ("bluffs (off-topic, all)", n_ood),
              "bluffs_near": ("bluffs (off-topic, near)", table.n_by_kind.get("near", 0)),
              "bluffs_far": ("bluffs (off-topic, far)", table.n_by_kind.get("far", 0))}
    records = [{"outcome": name, "queries": rates.outcome(key).count, "of (queries)": n,
                "share (95% interval)": rate(rates.outcome(key))} for key, (name, n) in labels.items() if n]
    if not conformal and choice.cut is not None and at_proposed is not None:
        for r in records:
            key = next(k for k, (name, _) in labels.items() if name == r["outcome"])
            r["at the proposed cut"] = rate(at_proposed.outcome(key))
            if key in choice.cross_validated:
                r["proposed, cross-validated"] = rate(choice.cross_validated[key])
    # keyed container: a browser test reads this one table by its key
    st.container(key="threshold_rates").dataframe(pd.DataFrame(records), hide_index=True, key="rates")
    st.caption(f"At cut {ctx.cut_words}, keep {keep}: {n_in} answerable and {n_ood} off-topic queries (questions × phrasings). "
               "95% intervals: answerable shares over questions (a question's phrasings are one unit); off-topic Wilson, "
               "exact (Clopper-Pearson) at 4 or fewer events.")
    if not conformal:
        st.caption("Conformal: " + md_text(choice.conformal))
    model_cut_caption(ev, token, config, cut)
    _costs()  # under the rates at the cut on screen (the page's first table)

    slice_section(ev, token, config, keep, ctx.max_bluff)  # each slice's distances on one scale, its own cut

    bluffs = bluffs_at(ev.result(config), ev.queries, Gate(keep, cut))
    st.subheader(f"{share(len(bluffs), n_ood)} off-topic queries get sources at cut {ctx.cut_words}")
    words = [upper_bound_words(row.bluffs, n_ood, "out-of-domain queries bluff")]
    words += [upper_bound_words(row.bluffs_by_kind[k], v, f"{k} ones") for k, v in table.n_by_kind.items() if v]
    st.caption("; ".join(words) + ".")
    chunks = ev.indexes[ev.result(config).config.strategy].chunks
    texts = {q.id: q.text for q in ev.queries}
    for b in bluffs:
        pos, dist_ = b.kept[0]
        chunk = chunks[pos]
        with st.container(border=True):
            st.markdown(f"**{md_text(b.query_id)}** ({md_text(b.kind or 'off-topic')}) — closest source at distance "
                        f"**{dist_:.3f}**, {len(b.kept)} kept")
            st.text(texts[b.query_id])
            st.caption(f"nearest miss: {md_text(chunk.id)} · {md_text(chunk.doc_id)} › "
                       f"{md_text(chunk.section or '(preamble)')}")
            st.html(quote_html(chunk.content, base=chunk.start, max_height=160))
            st.page_link("app_pages/inspector.py", label=f"Inspect {md_text(b.query_id)}", icon=":material/search:",
                         query_params=link_params(q=b.query_id))
    about_run(ev)


page()
