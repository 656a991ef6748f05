"""ui.chart_theme: every colour a themed chart gives its text reads at 4.5 : 1 on the theme's background.

The contrast is WCAG 2's (relative luminance, (L1 + 0.05) / (L2 + 0.05)); its two anchors are checked by hand:
black on white is 21 : 1, a colour on itself 1 : 1. The browser test (tests/browser/test_browser_themes.py) reads the
rendered SVG; this one checks the specs of the real chart builders, quickly.
"""

from __future__ import annotations

import pandas as pd
import pytest

from wcag import contrast

from ui.chart_theme import SWAPS, TEXT, themed

#: The page backgrounds of Streamlit's light and dark themes.
BACKGROUND = {"light": "#ffffff", "dark": "#0e1117"}


def test_contrast_anchors():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#7a7a7a", "#7a7a7a") == pytest.approx(1.0)
    # why a theme is needed: the builders' one grey reads on neither background at 4.5 : 1
    assert contrast("#7a7a7a", BACKGROUND["light"]) < 4.5 and contrast("#7a7a7a", BACKGROUND["dark"]) < 4.5


@pytest.mark.parametrize("kind", ["light", "dark"])
def test_every_text_and_swapped_colour_reads_on_its_background(kind):
    for colour in (*TEXT[kind], *SWAPS[kind].values()):
        assert contrast(colour, BACKGROUND[kind]) >= 4.5, (kind, colour)


def _tradeoff():
    from ui.gate_charts import tradeoff_curve

    curve = pd.DataFrame([{"cut": c, "outcome": o, "queries": q, "rate": q / 5, "low": 0.0, "high": 1.0}
                          for c in (0.3, 0.4, 0.5) for o, q in (("answered", 2), ("bluffs (all ood)", 1))])
    return tradeoff_curve(curve, cut=0.4, extent=(0.3, 0.5), markers={"proposed": 0.45, "fitted here": 0.35})


def _colours(node, key=None):
    """(key, value) of every colour-valued entry of a spec, data sets left out."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k != "datasets":
                yield from _colours(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _colours(v, key)
    elif isinstance(node, str) and node.startswith("#") and len(node) == 7:
        yield key, node


@pytest.mark.parametrize("kind", ["light", "dark"])
def test_a_themed_chart_keeps_its_data_and_its_text_reads(kind):
    chart = _tradeoff()
    before, after = chart.to_dict(), themed(chart, kind).to_dict()
    assert after["datasets"] == before["datasets"]  # only colours change
    cfg = after["config"]
    for part in ("axis", "legend"):
        assert contrast(cfg[part]["labelColor"], BACKGROUND[kind]) >= 4.5
    assert contrast(cfg["title"]["subtitleColor"], BACKGROUND[kind]) >= 4.5
    # every fixed colour the spec gives a text mark, a title or a marker reads on the background
    text_keys = {"color", "fill", "subtitleColor", "labelColor", "titleColor"}
    low = [(k, c) for k, c in _colours(after) if k in text_keys and contrast(c, BACKGROUND[kind]) < 4.5
           and c.lower() not in {"#c62828", "#ef9a9a", "#546e7a", "#bdbdbd", "#9e9e9e"}]  # area/bar fills
    assert not low, low


def test_an_unknown_theme_is_refused():
    with pytest.raises(ValueError, match="light"):
        themed(_tradeoff(), "sepia")
