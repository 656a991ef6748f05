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

__all__ = ["TEXT", "SWAPS", "TITLE_CHAR_PX", "SUBTITLE_CHAR_PX", "TITLE_WIDTHS", "ThemedChart", "scheme", "themed",
           "fit_title", "wrap_lines"]

#: Chart text per theme: (main, secondary). On white: 10.4 and 6.4 : 1; on Streamlit's dark #0e1117: 13.5 and 8.3 : 1.
TEXT = {"light": ("#424242", "#5f5f5f"), "dark": ("#e0e0e0", "#b0b0b0")}
#: Fixed colours the builders use for text and markers, as each theme draws them (at least 4.5 : 1 on its background).
SWAPS = {
    "light": {NEUTRAL: "#5f5f5f", "#757575": "#616161", "#90a4ae": "#546e7a", "#00897b": "#00796b"},
    "dark": {NEUTRAL: "#b0b0b0", ACCENT: "#64b5f6", "#757575": "#a0a0a0", "#90a4ae": "#b0bec5",
             "#00897b": "#4db6ac", "#6a1b9a": "#ce93d8", "#546e7a": "#90a4ae", "#424242": "#bdbdbd",
             "#c62828": "#ef5350"},
}


#: Widths per character no title (16 px bold, Streamlit's: about 7 px a character as drawn) or subtitle (11 px:
#: about 5.2 px) exceeds on average, in pixels.
TITLE_CHAR_PX, SUBTITLE_CHAR_PX = 7.6, 5.6
#: The plot widths a title is wrapped for (px, widest first, every 20 px): the chart picks the lines of the widest
#: that fits.
TITLE_WIDTHS = tuple(range(1200, 199, -20))


def wrap_lines(text, chars: int) -> list[str]:
    """``text`` (a string or its lines) as lines of at most ``chars`` characters, broken at spaces (a word longer
    than that keeps its line)."""
    import textwrap

    lines = [text] if isinstance(text, str) else list(text)
    return [w for line in lines for w in (textwrap.wrap(str(line), chars, break_long_words=False,
                                                        break_on_hyphens=False) or [""])]


def _by_width(text, char_px: float = TITLE_CHAR_PX):
    """``text`` as a Vega expression choosing its lines by the chart's plot width (``width``: Vega-Lite cuts a title
    longer than that with "…"), or ``text`` itself where it fits the narrowest chart as it is."""
    import json

    wraps = [wrap_lines(text, max(8, int(w / char_px))) for w in TITLE_WIDTHS]
    if wraps[-1] == wrap_lines(text, 10_000):
        return text
    expr = json.dumps(wraps[-1])
    for w, lines, narrower in zip(TITLE_WIDTHS[-2::-1], wraps[-2::-1], wraps[:0:-1]):
        if lines != narrower:  # the same lines as the next narrower width: one branch for both
            expr = f"(width >= {w} ? {json.dumps(lines)} : {expr})"
    return {"expr": expr}


def fit_title(spec: dict) -> dict:
    """``spec`` (a chart's dict) with its title and subtitle wrapped to the chart's width (the lines of the widest of
    :data:`TITLE_WIDTHS` that fits): at 800 px and in a narrow column, every line shows whole rather than cut with
    "…". A chart without a ``width`` of its own (a concatenation) keeps its title."""
    title = spec.get("title")
    if not title or any(k in spec for k in ("hconcat", "vconcat", "concat", "facet", "repeat")):
        return spec
    title = {"text": title} if isinstance(title, (str, list)) else dict(title)
    if isinstance(title.get("text"), (str, list)):
        title["text"] = _by_width(title["text"])
    if isinstance(title.get("subtitle"), (str, list)):
        title["subtitle"] = _by_width(title["subtitle"], SUBTITLE_CHAR_PX)
    return {**spec, "title": title}


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
    """``chart`` with its text and marker colours set for the theme ``kind`` (default: the visitor's), and its
    title's lines chosen by its width (:func:`fit_title`), for ``st.altair_chart``.

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
    return ThemedChart(fit_title(spec))
