"""The report a page offers for download: built by the library for the context on screen (or the recommendation)."""

from __future__ import annotations

from typing import Callable

from ragdiag.evaluation.records import Evaluation
from ui.comparator import declared

__all__ = ["report_args", "report_builder", "report_cut_words", "ruler_section", "remember_ledger", "shown_ledger", "LEDGER_KEY"]

#: Where the Chunking page leaves the ledger it showed, for the report downloads: ``(evaluation token, section)``.
LEDGER_KEY = "report_ledger"


def remember_ledger(token: str, led) -> None:
    """The Chunking page's ledger (computed for the evaluation ``token``), kept for this session's report downloads."""
    import streamlit as st

    from ragdiag.present.report.ledger import LedgerSection

    st.session_state[LEDGER_KEY] = (token, LedgerSection.of(led))


def shown_ledger(token: str):
    """The repair ledger the Chunking page last showed in this session for the evaluation ``token``, as the report's
    appendix section; None when the page has not computed one (the report never computes it: it takes seconds to
    minutes)."""
    import streamlit as st

    got = st.session_state.get(LEDGER_KEY)
    return got[1] if got is not None and got[0] == token else None


def ruler_section(ev: Evaluation, args: dict):
    """The appendix's "Can this set tell?" for a report built with ``args``: the ruler at the report's k (its
    keep unless a k is given), computed here and passed to the report, which only renders it."""
    from ragdiag.authoring.ruler import report_section
    from ragdiag.core.defaults import DEFAULT_KEEP

    return report_section(ev, primary_k=args.get("k") or args.get("keep") or DEFAULT_KEEP)


def report_args(ev: Evaluation, ctx, *, recommendation: bool = False, token: str | None = None) -> dict:
    """:func:`~ragdiag.present.report.build.build_report`'s arguments for ``ctx`` (the recommendation, decided by
    the library, when ``recommendation`` or when the context is the recommendation); with the context on the native
    score, the report at its cut on that score (``score="native"``, ``native_cut``). With the evaluation's
    ``token``, the repair ledger the Chunking page already computed for it joins the appendix (``ledger``)."""
    about_rec = recommendation or ctx.is_recommendation
    args = {"config": None if about_rec else ctx.config, "cut": None if about_rec else ctx.cut, "keep": ctx.keep,
            "max_bluff": ctx.max_bluff, "min_answered": ctx.min_answered, "baseline": declared(ev), "baseline_source": "the operator"}
    if getattr(ctx, "score", "dense") == "native":  # the report at the cut on the ranking's own score
        args.update(cut=None, score="native", native_cut=ctx.native_cut)
    ledger = shown_ledger(token) if token is not None else None
    if ledger is not None:
        args["ledger"] = ledger
    return args


def report_builder(ev: Evaluation, args: dict, fmt: str = "html") -> Callable[[], str]:
    """A callable the download button runs on click (the report takes seconds: never on every page view)."""
    def build() -> str:
        from ragdiag.present.report.build import build_report

        report = build_report(ev, ruler=ruler_section(ev, args), **args)
        return report.to_html() if fmt == "html" else report.to_markdown()

    return build


def report_cut_words(ev: Evaluation, ctx, args: dict, token: str) -> str:
    """The report's cut as its download button says it: ``"cut 0.524"`` on the dense distance, ``"MaxSim score ≥
    13.39"`` on the native score (the cut the report built with ``args`` is at; the context's words when no cut
    can be had there, where the report says why)."""
    if args.get("score") != "native":
        return f"cut {ctx.cut_words}"
    from ui.context import recommendation
    from ui.native_view import native_report_cut

    config = args.get("config") or recommendation(ev, token, ctx.keep, ctx.goal).config
    at = native_report_cut(ev, config, ctx.keep, ctx.max_bluff, ctx.native_cut)
    return at.text if at is not None else f"cut {ctx.cut_words}"
