"""The report a page offers for download: built by the library for the context on screen (or the recommendation)."""

from __future__ import annotations

from typing import Callable

from ragdiag.evaluation.records import Evaluation
from ui.comparator import declared

__all__ = ["report_args", "report_builder", "ruler_section", "remember_ledger", "shown_ledger", "LEDGER_KEY"]

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
    the library, when ``recommendation`` or when the context is the recommendation). With the evaluation's
    ``token``, the repair ledger the Chunking page already computed for it joins the appendix (``ledger``)."""
    about_rec = recommendation or ctx.is_recommendation
    args = {"config": None if about_rec else ctx.config, "cut": None if about_rec else ctx.cut, "keep": ctx.keep,
            "max_bluff": ctx.max_bluff, "min_answered": ctx.min_answered, "baseline": declared(ev), "baseline_source": "the operator"}
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
