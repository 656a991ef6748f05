"""The "Can this set tell?" panel: the ruler check of the shared evaluation (:func:`ragdiag.authoring.ruler.ruler`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ragdiag.authoring.ruler import Ruler
from ui.html import md_text

__all__ = ["ruler_view"]


def ruler_view(r: Ruler) -> None:
    """The verdict first, then headroom per k, shortcuts, leakage and discrimination, each in its own sentence."""
    st.markdown(f"**{md_text(r.headline())}**")
    for p in r.problems():
        st.markdown(f"- {md_text(p)}")
    st.dataframe(pd.DataFrame([{"measure": h.measure, "configurations": f"{100 * h.low:.1f}–{100 * h.high:.1f}%",
                                "found by every configuration": h.ceiling, "found by none": h.floor,
                                "saturated": "yes" if h.saturated else "no"} for h in r.headroom]),
                 hide_index=True)
    st.markdown(f"**Shortcuts.** {md_text(r.shortcuts.sentence())}.")
    if r.shortcuts.copies:
        st.caption("Queries that copy their needle's words: " + md_text(", ".join(q for q, _, _ in r.shortcuts.copies)))
    st.markdown(f"**Leakage.** {md_text(r.leaks.sentence())}.")
    st.markdown(f"**Discrimination.** {md_text(r.discrimination.sentence())}.")
