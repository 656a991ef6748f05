"""Charts legible in the visitor's theme: chart text at least 4.5 : 1 against the page, light or dark.

Streamlit follows the visitor's system theme, but a chart's text colours are
fixed when the chart is built, and no grey reads at 4.5 : 1 on both white and
near-black. :func:`themed` takes a built chart and the theme the browser
reported (``st.context.theme.type``) and sets the axis, legend, title and text
colours for it, swapping the few fixed colours the builders use for text and
markers (:data:`SWAPS`) for ones that read on that background. The builders
stay pure (``DataFrame -> alt.Chart``); pages call ``st.altair_chart(themed(chart))``.

:func:`themed` returns the spec itself behind a chart's ``to_dict`` (:class:`ThemedChart`), not a chart rebuilt
from it: rebuilding a chart from its dict (``Chart.from_dict``) matches every node against the Vega-Lite schema,
which cost more than the rest of the Threshold page's run together (a slider move redraws every chart).
"""

from __future__ import annotations

import copy
from typing import Any

import altair as alt
import streamlit as st

from ui.fmt import ACCENT, NEUTRAL

__all__ = ["TEXT", "SWAPS", "ThemedChart", "scheme", "themed"]

#: Chart text per theme: (main, secondary). On white: 10.4 and 6.4 : 1; on Streamlit's dark #0e1117: 13.5 and 8.3 : 1.
TEXT = {"light": ("#424242", "#5f5f5f"), "dark": ("#e0e0e0", "#b0b0b0")}
#: Fixed colours the builders use for text and markers, as each theme draws them (at least 4.5 : 1 on its background).
SWAPS = {
    "light": {NEUTRAL: "#5f5f5f", "#757575": "#616161", "#90a4ae": "#546e7a", "#00897b": "#00796b"},
    "dark": {NEUTRAL: "#b0b0b0", ACCENT: "#64b5f6", "#757575": "#a0a0a0", "#90a4ae": "#b0bec5",
             "#00897b": "#4db6ac", "#6a1b9a": "#ce93d8", "#546e7a": "#90a4ae", "#424242": "#bdbdbd",
             "#c62828": "#ef5350"},
}


def scheme() -> str:
    """The visitor's theme as the browser reported it: "dark" or "light" (light when unknown, e.g. headless)."""
    try:
        kind = st.context.theme.type
    except AttributeError:  # an older Streamlit without the theme in the context
        kind = None
    return "dark" if kind == "dark" else "light"


def _swap(node: Any, swaps: dict[str, str]) -> Any:
    if isinstance(node, dict):
        return {k: (node[k] if k in ("datasets", "data") else _swap(v, swaps)) for k, v in node.items()}
    if isinstance(node, list):
        return [_swap(v, swaps) for v in node]
    if isinstance(node, str):
        return swaps.get(node.lower(), swaps.get(node, node))
    return node


class ThemedChart:
    """A chart's Vega-Lite spec, themed: what ``st.altair_chart`` reads of a chart (its ``to_dict()``), already
    made (validated against the Vega-Lite schema when the chart was turned into it)."""

    def __init__(self, spec: dict[str, Any]):
        self._spec = spec

    def to_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The spec (a copy: Streamlit fills in its datasets)."""
        return copy.deepcopy(self._spec)


def themed(chart: alt.TopLevelMixin, kind: str | None = None) -> ThemedChart:
    """``chart`` with its text and marker colours set for the theme ``kind`` (default: the visitor's), for
    ``st.altair_chart``.

    Data values are never touched, only the spec's colours: every swapped colour is one of :data:`SWAPS`.
    """
    kind = kind or scheme()
    if kind not in TEXT:
        raise ValueError(f"theme must be 'light' or 'dark', got {kind!r}")
    main, secondary = TEXT[kind]
    spec = _swap(chart.to_dict(), {k.lower(): v for k, v in SWAPS[kind].items()})
    config = spec.setdefault("config", {})
    for part in ("axis", "legend", "header"):
        config.setdefault(part, {}).update(labelColor=main, titleColor=main)
    config.setdefault("title", {}).update(color=main, subtitleColor=secondary)
    config.setdefault("text", {}).setdefault("color", main)
    return ThemedChart(spec)
