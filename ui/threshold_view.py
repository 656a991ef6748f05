"""The Threshold page's decision panels around the proposal: the cut a team runs today, what the proposal costs
(the next cuts where an outcome changes), the queries that alone move it, and the cost goal.

Each panel reads the library (:mod:`ragdiag.analyses.threshold.proposal`, the same functions ``ragdiag threshold``
prints with ``--current``, ``--bluff-cost`` and its candidate table) and draws one part of the page; the page
decides where. The cut a team runs today and the cost goal live in the context (:mod:`ui.context`), so the URL
and every in-app link carry them.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ragdiag.analyses.gate_table import GateTable
from ragdiag.analyses.threshold.choice import Goal, Proposal
from ragdiag.analyses.threshold.proposal import (UNITS, Candidate, CostChoice, CurrentCut, Mover, audit, candidates,
                                                 cost_cut, sensitivity)
from ragdiag.core.gate import cut_text
from ui import cache
from ui.context import MAX_BLUFF_COST, Context, link_params, use, use_bluff_cost, use_current
from ui.fmt import DASH, rate
from ui.html import md_text
from ragdiag.core.words import pct

__all__ = ["UNITS_HELP", "current_cut_inputs", "current_cut_audit", "current_cut_sentence", "proposal_costs",
           "movers", "mover_links", "cost_choice", "cost_goal", "how_we_know", "candidates_frame",
           "constant_columns"]

#: The units switch's help: which consumers give their number in which units.
UNITS_HELP = ("distance: a cosine distance, lower is stricter (a Chroma distance, a pgvector <=> filter); "
              "similarity: a cosine similarity s, higher is stricter, read as the distance 1 - s (a LangChain "
              "score_threshold, a LlamaIndex similarity_cutoff, a Qdrant score_threshold).")


def current_cut_inputs(ctx: Context):
    """"The cut you run today": a number and its units, drawn from the context (allowed in locked mode: a number,
    not a path), in a narrow column; returns the wide column beside it (for :func:`current_cut_sentence`). A change
    sets the context (sidebar note, URL, every link)."""
    _follow(ctx)
    c1, c2 = st.columns([1, 3])
    c1.number_input("The cut you run today", min_value=-1.0, max_value=2.0, value=None, step=0.01,
                    format="%.3f", placeholder="none", key="current_cut",
                    on_change=_typed, args=(ctx,),
                    help="The number in your retriever's config (a score_threshold, a similarity_cutoff, a distance "
                         "filter). Empty: none. `ragdiag threshold --current` prints the same sentence.")
    c1.segmented_control("its units", list(UNITS), key="current_units", required=True,
                         on_change=lambda: _units_changed(ctx, st.session_state["current_units"]),
                         help=UNITS_HELP, label_visibility="collapsed")
    return c2


def _follow(ctx: Context) -> None:
    """The two fields take the context's number and units whenever the context's pair changes (a link, a typed
    value, the sidebar's undo); otherwise they keep what the visitor left (units chosen before the number).

    Their keys stay the same from run to run: a key per value made a new pair of fields on each change, and during
    the rerun the browser drew the old pair beside the new one (the charts below moved down a screen).
    """
    pair = (ctx.current, ctx.units)
    if st.session_state.get("_current_pair") != pair or "current_cut" not in st.session_state:
        st.session_state["current_cut"] = ctx.current  # a number field that can be emptied (drawn with value=None)
        st.session_state["current_units"] = ctx.units or UNITS[0]
        st.session_state["_current_pair"] = pair


def _start(key: str, value: float | None) -> None:
    """A number field that can be emptied (drawn with ``value=None``) starts at the context's ``value``."""
    if key not in st.session_state:
        st.session_state[key] = value


def _typed(ctx: Context) -> None:
    """The number field: the value in the units the switch shows; not a cut in them (a similarity of 1.5): said in
    the context's note, and the field goes back to the context's value."""
    units = st.session_state.get("current_units") or ctx.units
    if not use_current(st.session_state["current_cut"], units):
        st.session_state["current_cut"] = ctx.current


def _units_changed(ctx: Context, units: str | None) -> None:
    """The units switch: with a value, the value is read in the new units; without one, the switch waits for it."""
    if units and units != ctx.units and ctx.current is not None and not use_current(ctx.current, units):
        st.session_state["current_units"] = ctx.units  # not a cut in those units: back


def current_cut_audit(ctx: Context, table: GateTable, goal: Goal, proposed: float | None) -> CurrentCut | None:
    """:func:`~ragdiag.analyses.threshold.proposal.audit` of the context's current cut (None when none is set)."""
    if ctx.current is None:
        return None
    return cache.by_evaluation("audit", _table_key(table), (ctx.current, ctx.units, goal, proposed),
                               lambda: audit(table, ctx.current, ctx.units, goal, proposed))


def current_cut_sentence(cur: CurrentCut | None, where=None) -> None:
    """The CLI's sentence for the cut a team runs today, and the queries the proposal would change, by name (in
    ``where``, a container; default the page)."""
    where = where or st.container()
    if cur is None:
        where.caption("The cut your retriever runs with today (a number in its config, in its units): type it to see "
                      "what it does here, beside the proposal, and where it sits on both charts.")
        return
    where.markdown(md_text(cur.sentence()))
    changes = [(name, ids) for name, ids in (("answered only with the proposal", cur.gained),
                                             ("answered only with yours", cur.lost),
                                             ("bluff only with the proposal", cur.bluffs_added),
                                             ("bluff only with yours", cur.bluffs_removed)) if ids]
    if changes:
        where.caption(" · ".join(f"{md_text(name)}: {md_text(', '.join(ids))}" for name, ids in changes))


def candidates_frame(cands: tuple[Candidate, ...]) -> pd.DataFrame:
    """The candidate cuts in plain headers, one row each, the proposed one marked."""
    return pd.DataFrame({
        "cut": [cut_text(c.cut) + ("  (proposed)" if c.proposed else "") for c in cands],
        "answered (queries)": [rate(c.answered) for c in cands],
        "lost (queries)": [rate(c.lost) for c in cands],
        "bluffs (queries)": [rate(c.bluffs) for c in cands],
        "new off-topic questions that bluff, at most": [DASH if c.guarantee is None else f"{pct(c.guarantee, 1)}"
                                                        for c in cands],
        "meets the goal?": ["yes" if c.meets_goal else "no" for c in cands],
    })


def constant_columns(frame: pd.DataFrame, *, keep: tuple[str, ...] = ("cut",)) -> tuple[pd.DataFrame, dict]:
    """``frame`` without the columns that hold one value on every row (two rows or more), and those values.

    >>> constant_columns(pd.DataFrame({"cut": ["0.1", "0.2"], "a": [1, 2], "b": ["x", "x"]}))[1]
    {'b': 'x'}
    """
    if len(frame) < 2:
        return frame, {}
    same = {c: frame[c].iloc[0] for c in frame.columns if c not in keep and frame[c].nunique(dropna=False) == 1}
    return frame.drop(columns=list(same)), same


def proposal_costs(table: GateTable, goal: Goal, proposal: Proposal) -> None:
    """Both sides of the proposal: answered, lost and bluffs at the proposed cut and at the next cuts where an
    outcome changes; when no cut meets the goal, one sentence and the closest cuts; a proposal that fails its own
    check (fitted to too few off-topic questions) says so instead of standing as a promise."""
    proposed = proposal.cut
    cands = cache.by_evaluation("candidates", _table_key(table), (goal, proposed),
                                lambda: candidates(table, goal, proposed))
    if not cands:
        return
    if proposed is None:
        st.markdown("No cut meets this goal on these questions"
                    + (f" ({md_text(proposal.guarantee)})" if proposal.guarantee else "") + "; the closest cuts:")
    else:
        c = cands[0]
        st.markdown(f"The proposed cut **{cut_text(proposed)}** answers {rate(c.answered)} of answerable queries and "
                    f"loses {rate(c.lost)}; {rate(c.bluffs)} of off-topic queries still get passages.")
        if not c.meets_goal:
            st.markdown(f":red[Fitted to these questions only, cut {cut_text(proposed)} does not pass its own check "
                        f"for new ones: {md_text(proposal.guarantee or 'no guarantee')}.]")
    frame, same = constant_columns(candidates_frame(cands))
    st.dataframe(frame, hide_index=True, key="candidates")
    words = ("The proposed cut and the next cuts where an outcome changes (each lets one more off-topic query "
             "through)." if proposed is not None else "The closest cuts (each lets one more off-topic query through).")
    if same:  # a column with one value on every row is said once, not repeated
        words += " At every cut listed: " + "; ".join(f"{name.replace(' (queries)', '').rstrip('?')}: {value}"
                                                     for name, value in same.items()) + "."
    st.caption(words)


def movers(table: GateTable, goal: Goal, proposed: float | None) -> tuple[Mover, ...]:
    """The off-topic queries that alone move the proposed cut, each by name with a link to the Inspector."""
    found = cache.by_evaluation("movers", _table_key(table), (goal, proposed),
                                lambda: sensitivity(table, goal, proposed))
    for words, params in mover_links(found, proposed):
        c1, c2 = st.columns([4, 1], vertical_alignment="center")
        c1.markdown(md_text(words))
        c2.page_link("app_pages/inspector.py", label=f"Inspect {md_text(params['q'])}", icon=":material/search:",
                     query_params=params)
    return found


def mover_links(found: tuple[Mover, ...], proposed: float | None) -> list[tuple[str, dict[str, str]]]:
    """Per query that alone moves the cut: its sentence ("o08 alone moves the cut from 0.445 to 0.240 ...") and
    the Inspector link's parameters (the full context and the query)."""
    return [(m.words(proposed), link_params(q=m.query_id)) for m in found] if proposed is not None else []


def cost_choice(ctx: Context, table: GateTable, *, folds: int) -> CostChoice | None:
    """:func:`~ragdiag.analyses.threshold.proposal.cost_cut` at the context's cost goal (None when it is off)."""
    if ctx.bluff_cost is None:
        return None
    return cache.by_evaluation("cost_cut", _table_key(table), (ctx.goal, folds),
                               lambda: cost_cut(table, ctx.goal, folds=folds))


def cost_goal(ctx: Context, cc: CostChoice | None) -> None:
    """The cost goal: "a bluff costs as much as N lost answers" (a number; empty is off), the cut that minimises
    the expected cost (``cc``, from :func:`cost_choice`), its cross-validated rates and the guarantee sentence for
    its bluff rate."""
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    key = f"bluff_cost_{ctx.bluff_cost}"
    _start(key, ctx.bluff_cost)
    c1.number_input("A bluff costs as much as N lost answers", min_value=0.01, max_value=MAX_BLUFF_COST,
                    value=None, step=1.0, placeholder="off", key=key,
                    on_change=lambda: use_bluff_cost(st.session_state[key]),
                    help="Empty: off. The cut then minimises N × bluffs + lost answers over these queries. "
                         "`ragdiag threshold --bluff-cost N` prints the same.")
    if cc is None:
        c2.caption("A third goal beside the two rates: how many lost answers one bluff is worth to you.")
        return
    c2.button(f"Use the cheapest cut: {cut_text(cc.cut)}", key="use_cost_cut", on_click=use, kwargs={"cut": cc.cut},
              disabled=cut_text(cc.cut) == ctx.cut_words)
    st.markdown(f"If a bluff costs as much as {cc.bluff_cost:g} lost answers, the cheapest cut is "
                f"**{cut_text(cc.cut)}**: answered {rate(cc.answered)}, bluffs {rate(cc.bluffs)} "
                f"(on questions it was not chosen on: answered {rate(cc.cross_validated['answered'])}, bluffs "
                f"{rate(cc.cross_validated['bluffs'])}); {md_text(cc.guarantee_words)}.")


def how_we_know(*, folds: int) -> None:
    """The method behind the three panels, one click away from the first screen."""
    with st.expander("How we know"):
        st.markdown(
            "- **Guarantee of a cut.** A cut at or under the j-th smallest of the n off-topic distances lets at most "
            "j / (n + 1) of new off-topic questions through, on average over sets of off-topic questions "
            "(split conformal prediction; it assumes the new questions are exchangeable with these).\n"
            "- **The next cuts.** Each sits on the next off-topic distance (rounded down to 3 decimals), so it lets "
            "exactly one more off-topic query through than the cut before it.\n"
            "- **A query that moves the cut.** Leave one out: the proposal is recomputed without each off-topic "
            "query at or under it; a query whose removal alone changes answered by 5 points or more is named.\n"
            f"- **The cost goal.** The cut minimising N × bluffs + lost answers (the lowest on ties); "
            f"cross-validated in {folds} folds grouped by question (each fold's cut chosen on the others).\n"
            "- Intervals: 95%, answerable shares over questions, off-topic shares Wilson.")


def _table_key(table: GateTable) -> str:
    """A cache key for a gate table: its queries and values (cheap; the table itself is not hashed)."""
    import hashlib

    import numpy as np

    h = hashlib.sha256()
    h.update("\0".join(table.query_ids).encode())
    for a in (table.in_domain, table.closest, table.closest_holder):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()
