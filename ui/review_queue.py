"""Growing the ground truth on the dashboard: the plan (how many questions, where) and the review queue of drafts.

:func:`plan_view` draws :func:`ragdiag.authoring.plan.plan` for two configurations of
the shared evaluation; :func:`review_queue` shows the drafts one at a time,
keyboard first (A accept, S skip, 1-4 reject with a reason, W save), and writes
through the Ground truth editor's session copy and save (:mod:`ui.truth_editor`),
so its conflict check holds here too.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import streamlit as st

from ragdiag.authoring.coverage import phrasing_names
from ragdiag.authoring.drafts import draft_suggestions
from ragdiag.authoring.leakage import leakage
from ragdiag.authoring.review import REJECT_REASONS, accept, pending, reject
from ragdiag.documents.corpus import Corpus
from ui.html import md_text
from ui.truth_editor import CONFLICT, pop_message, reload, save, say
from ragdiag.core.words import pct

__all__ = ["plan_view", "planned", "pick_words", "review_queue", "KEYS"]

#: Places of the plan shown before the rest is folded away.
SHOWN = 10
#: The queue's keys, in words (shown under it).
KEYS = "A accept · S skip · 1–4 reject with that reason · W save the file · edit the text box, then A"


def _section_link(doc_id: str) -> str:
    return f"documents?doc={quote(doc_id)}"


def pick_words(rec):
    """How the plan's pickers list a configuration: the Summary's pick and runner-up (of ``rec``, a
    :class:`~ragdiag.analyses.recommend.Recommendation` or None) say so."""
    roles = {} if rec is None else {rec.config: "recommended", rec.runner_up: "runner-up"}
    return lambda c: f"{c} · {roles[c]}" if c in roles else c


class _NotPlanned(Exception):
    """Raised instead of planning: a cache miss is not cached (Streamlit keeps no result for an exception)."""


def _not_planned():
    raise _NotPlanned


def planned(ev, token: str, config: str, versus: str, *, k: int, margin: float):
    """:func:`ragdiag.authoring.plan.plan` of ``config`` against ``versus``, once per evaluation and input; when it
    is not planned yet, planned here with a progress bar counting the library's steps (the exact powers take
    minutes on a large set), then kept for every visitor."""
    from ragdiag.authoring.plan import plan
    from ui.cache import by_evaluation

    key = (config, versus, margin, k)
    try:
        return by_evaluation("truth plan", token, key, _not_planned)
    except _NotPlanned:
        pass
    bar = st.progress(0.0, text="Planning (exact power of the sign-flip test)…")

    def step(e) -> None:
        bar.progress(e.fraction, text=f"Planning: {e.words} (step {e.done} of {e.total})")

    fresh = plan(ev, config, versus=versus, k=k, margin=margin, progress=step)  # outside the cache: the bar is live
    bar.empty()
    return by_evaluation("truth plan", token, key, lambda: fresh)


def plan_view(p) -> None:
    """The plan as a sentence, then one line per place with a count, its reason and a link to the text."""
    st.markdown(f"**{md_text(p.headline(quote=''))}**")  # no code quotes: escaped, they would show as typed
    st.caption(f"How many: {md_text(p.basis)}. Test: {md_text(p.test)}.")
    lines = [f"- **{pl.count}** in [{md_text(pl.doc)} › {md_text(pl.section or '(preamble)')}]"
             f"({_section_link(pl.doc)}): {md_text(pl.reason)}" for pl in p.where]
    if lines:
        st.markdown("\n".join(lines[:SHOWN]))
    if len(lines) > SHOWN:
        with st.expander(f"The other {len(lines) - SHOWN} places"):
            st.markdown("\n".join(lines[SHOWN:]))
    with st.expander(f"Sections no needle covers ({len(p.uncovered)})"):
        st.markdown("\n".join(f"- [{md_text(d)} › {md_text(s or '(preamble)')}]({_section_link(d)})"
                              for d, s in p.uncovered) or "none")
    if p.slices:
        st.caption("Slices: " + md_text("; ".join(p.slices)))
    for note in p.notes:
        st.caption(md_text(note))


def _drafts(corpus: Corpus, n: int):
    key = ("gt_rq_drafts", corpus.sha256, n)
    if st.session_state.get("gt_rq_drafts_key") != key:
        st.session_state["gt_rq_drafts"] = draft_suggestions(corpus, n)
        st.session_state["gt_rq_drafts_key"] = key
    return st.session_state["gt_rq_drafts"]


@st.fragment
def review_queue(corpus: Corpus, target: Path, state: dict, *, n: int = 40) -> None:
    """One draft at a time: accept (edited or not), skip, reject with a reason; save with the editor's save."""
    drafts = _drafts(corpus, n)
    data = state["data"]
    skipped = st.session_state.setdefault("gt_rq_skipped", [])
    queue = pending(drafts.drafts, data, skipped)
    names = list(phrasing_names(data))
    phrasing = names[0]
    done = st.session_state.setdefault("gt_rq_done", {"accepted": 0, "edited": 0, "rejected": 0})
    dirty = data != state["base"].data
    st.caption(f"{len(drafts.drafts)} of {len(drafts.drafts) + len(drafts.undrafted)} suggestions have a draft "
               f"({pct(drafts.share)}) · {len(queue)} to review · accepted {done['accepted']} "
               f"({done['edited']} edited) · rejected {done['rejected']} · skipped {len(skipped)} · "
               + ("**unsaved changes**" if dirty else "saved"))
    if CONFLICT in st.session_state:
        st.error(st.session_state[CONFLICT])
        st.button("Reload and keep my edits", on_click=reload, args=(target, state, True), key="gt_rq_merge")
    msg = pop_message()
    if msg:
        getattr(st, msg[0])(msg[1])
    st.button("Save", key="gt_rq_save", shortcut="W", type="primary" if dirty else "secondary",
              on_click=save, args=(target, state), disabled=not dirty)
    if not queue:
        st.success("No drafts left to review.")
        return
    d = queue[0]
    st.markdown(f"**{md_text(d.doc_id)} › {md_text(d.section or '(preamble)')}** · rule `{d.rule}` · "
                f"language {d.language}")
    st.container(key="gt_rq_needle").code(d.needle, language=None, wrap_lines=True)
    box = "gt_rq_text"
    if st.session_state.get("gt_rq_current") != d.needle:  # a new draft: the box shows it, edits start from it
        st.session_state["gt_rq_current"] = d.needle
        st.session_state[box] = d.question
    text = st.text_input(f"Question (phrasing '{phrasing}'; a draft: rewrite it as a person would ask)", key=box)
    lk = leakage(text, d.needle)
    leak = st.container(key="gt_rq_leakage")
    (leak.warning if lk.warn else leak.caption)(f"Leakage: {md_text(lk)}"
                                                + (" — rewrite it in other words" if lk.warn else ""))

    def _accept() -> None:
        typed = st.session_state.get(box, "")
        try:
            new, qid = accept(state["data"], d, typed, phrasing)
        except ValueError as exc:
            say("error", str(exc))
            return
        state["data"] = new
        done["accepted"] += 1
        done["edited"] += typed.strip() != d.question
        say("success", f"Accepted as {qid} (source: draft; not saved yet).")

    def _skip() -> None:
        if d.needle in skipped:
            skipped.remove(d.needle)
        skipped.append(d.needle)

    def _reject(reason: str) -> None:
        state["data"] = reject(state["data"], d, reason)
        done["rejected"] += 1
        say("info", f"Rejected: {reason} (not saved yet).")

    cols = st.columns([1, 1, 4])
    cols[0].button("Accept", key="gt_rq_accept", shortcut="A", on_click=_accept, type="primary")
    cols[1].button("Skip", key="gt_rq_skip", shortcut="S", on_click=_skip)
    with cols[2]:
        st.caption("Reject because:")
        for i, reason in enumerate(REJECT_REASONS, 1):
            st.button(reason, key=f"gt_rq_reject_{i}", shortcut=str(i), on_click=_reject, args=(reason,))
    st.caption(KEYS)
