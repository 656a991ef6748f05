"""Grow the ground truth: how many more questions a decision needs and where (the plan), then drafts to review.

The plan reads the shared evaluation (:func:`ragdiag.authoring.plan.plan`, the
power of compare's sign-flip test at the observed discordance); the review queue
writes the configured ground-truth file through the Ground truth page's editor
(same session copy, same save and conflict check).
"""

import streamlit as st

from ragdiag.core.defaults import PRACTICAL_MARGIN, PRIMARY_K
from ragdiag.present.serving import AccessError
from ui.context import context, recommendation
from ui.html import md_text
from ui.jobs import evaluation
from ui.review_queue import pick_words, plan_view, planned, review_queue
from ui.ruler_view import checked_ruler, ruler_view
from ui.state import access, config_labels, default_config, load_corpus_only, settings
from ui.truth_editor import file_state, save_target


def page() -> None:
    st.title("Grow the ground truth")
    ev, token = evaluation()
    labels = [c.label for c in ev.results if not c.external] or config_labels(ev)
    if len(labels) >= 2:
        # the Summary's recommendation: its pick against its runner-up (the decision more questions would settle)
        ctx = context(ev, token)
        rec = (recommendation(ev, token, ctx.keep, ctx.goal) if any(not c.external for c in ev.results)
               else None)
        a = rec.config if rec is not None and rec.config in labels else (default_config(ev) if default_config(ev) in labels else labels[0])
        others = [x for x in labels if x != a]
        pick = (rec.runner_up if rec is not None and rec.runner_up in others
                else next((x for x in others if x.split("/")[1] == a.split("/")[1]), others[0]))
        c1, c2, c3 = st.columns([2, 2, 1])
        a = c1.selectbox("Plan for", labels, index=labels.index(a), key="gt_plan_a", format_func=pick_words(rec))
        others = [x for x in labels if x != a]
        b = c2.selectbox("against", others, index=others.index(pick) if pick in others else 0, key="gt_plan_b",
                         format_func=pick_words(rec))
        locked = access().locked  # served: the practical margin only, so a visitor's work is one plan per pair
        margin = c3.number_input("difference worth detecting", 0.01, 0.5, PRACTICAL_MARGIN, 0.01, key="gt_plan_margin",
                                 disabled=locked, help="fixed when served read-only" if locked else None)
        margin = PRACTICAL_MARGIN if locked else round(float(margin), 4)
        result = planned(ev, token, a, b, k=PRIMARY_K, margin=margin)  # once per evaluation and input, not per visitor
        plan_view(result)
    else:
        st.info("Only one configuration was evaluated: a plan compares two.")

    st.subheader("Can this set tell?")
    if st.toggle("Check the ruler: headroom per k, shortcuts, leakage, and what this many questions resolve "
                 "(a permutation over every configuration: seconds)", key="gt_ruler"):
        with st.spinner("Checking the ruler…"):
            checked = checked_ruler(ev, token, PRIMARY_K)
        ruler_view(checked)

    st.subheader("Drafts to start from")
    if access().locked:
        st.info("This dashboard is served read-only (RAGDIAG_LOCKED): drafts are reviewed on the operator's own instance.")
        st.stop()
    conf = settings()
    corpus = load_corpus_only(conf)
    try:
        target, note = save_target(conf)
        state = file_state(target)
    except (AccessError, ValueError) as exc:
        st.error(f"Cannot edit a ground truth here: {md_text(exc)}.")
        st.stop()
    if note:
        st.warning(note)
    st.caption(f"Question drafts from needle suggestions, by rules per language (no LLM); where no rule applies there "
               f"is no draft. Accepted drafts are saved to **{md_text(target.name)}** with `source: draft`.")
    review_queue(corpus, target, state)


page()
