"""The "Can this set tell?" panel: the ruler check of the shared evaluation (:func:`ragdiag.authoring.ruler.ruler`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ragdiag.authoring.ruler import Ruler, ruler
from ragdiag.core.defaults import PRIMARY_K
from ui.cache import by_evaluation
from ui.html import md_text
from ragdiag.core.words import pct_span

__all__ = ["ruler_view", "checked_ruler", "computed_ruler"]


class _NotChecked(Exception):
    """Raised instead of computing: a cache miss is not cached (Streamlit keeps no result for an exception)."""


def _not_checked():
    raise _NotChecked


def checked_ruler(ev, token: str, k: int = PRIMARY_K) -> Ruler:
    """The ruler of the evaluation ``token`` at R@``k``, computed once per evaluation (a permutation: seconds)."""
    return by_evaluation("ruler", token, (k,), lambda: ruler(ev, primary_k=k))


def computed_ruler(token: str, k: int = PRIMARY_K) -> Ruler | None:
    """The ruler of ``token`` when a page has already checked it (None otherwise): never computes it."""
    try:
        return by_evaluation("ruler", token, (k,), _not_checked)
    except _NotChecked:
        return None


def ruler_view(r: Ruler) -> None:
    """The verdict first, then headroom per k, shortcuts, leakage and discrimination, each in its own sentence."""
    st.markdown(f"**{md_text(r.headline())}**")
    for p in r.problems():
        st.markdown(f"- {md_text(p)}")
    st.dataframe(pd.DataFrame([{"measure": h.measure, "configurations": f"{pct_span(h.low, h.high, 1)}",
                                "found by every configuration": h.ceiling, "found by none": h.floor,
                                "saturated": "yes" if h.saturated else "no"} for h in r.headroom]),
                 hide_index=True)
    st.markdown(f"**Shortcuts.** {md_text(r.shortcuts.sentence())}.")
    if r.shortcuts.copies:
        st.caption("Queries that copy their needle's words: " + md_text(", ".join(q for q, _, _ in r.shortcuts.copies)))
    st.markdown(f"**Leakage.** {md_text(r.leaks.sentence())}.")
    st.markdown(f"**Discrimination.** {md_text(r.discrimination.sentence())}.")
