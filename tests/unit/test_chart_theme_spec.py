"""ui.chart_theme.themed hands Streamlit the themed spec itself (no chart rebuilt from it): what the browser gets is
the same spec the rebuilt chart gave, for the Threshold page's three charts, in both themes.

Rebuilding a chart from its dict (``Chart.from_dict``) matched every node against the Vega-Lite schema and cost
more than the rest of a slider move's run (``benchmarks/bench_slider.py``); the spec is still validated once, when
the chart is turned into it.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import pytest
from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec

from ui.chart_theme import ThemedChart, themed
from ui.gate_charts import mirrored_histogram, tradeoff_curve


def _tradeoff():
    curve = pd.DataFrame([{"cut": c, "outcome": o, "queries": q, "rate": q / 5, "low": 0.0, "high": 1.0}
                          for c in (0.3, 0.4, 0.5) for o, q in (("answered", 2), ("bluffs (all ood)", 1))])
    return tradeoff_curve(curve, cut=0.4, extent=(0.3, 0.5), markers={"proposed": 0.45, "fitted here": 0.35},
                          pick="pick", title="Answered 40%, bluffs 20% at cut 0.400")


def _histogram():
    frame = pd.DataFrame({"key": ["answer", "answer", "answer", "near", "far", "kept"],
                          "distance": [0.31, 0.42, 0.55, 0.38, 0.61, np.nan]})
    return mirrored_histogram(frame, cut=0.45, markers={"you run today": 0.5})


def _slices():
    from ui.threshold_slices import slice_multiples

    frame = pd.DataFrame({"slice": ["en", "en", "de"], "layer": ["bars", "cut", "cut"], "series": ["answerable", "", ""],
                          "start": [0.3, np.nan, np.nan], "end": [0.32, np.nan, np.nan], "count": [2, 0, 0],
                          "y0": [0.0, np.nan, np.nan], "y1": [2.0, np.nan, np.nan], "cut": [np.nan, 0.4, 0.4],
                          "which": ["", "global cut", "global cut"]})
    return slice_multiples(frame, order=["en", "de"], extent=(0.2, 0.6), title="Per language at the global cut 0.400")


def _unchecked(cls: type) -> type:
    """``cls`` whose ``to_dict`` skips Altair's schema check: a subtitle fitted to the chart's width is a Vega
    expression, which Vega-Lite draws though its schema lists only text there."""
    return type(cls.__name__, (cls,), {"to_dict": lambda self, validate=False, **kw: cls.to_dict(self, validate=False,
                                                                                                   **kw)})


@pytest.mark.parametrize("kind", ["light", "dark"])
@pytest.mark.parametrize("build", [_tradeoff, _histogram, _slices], ids=["tradeoff", "histogram", "slices"])
def test_streamlit_gets_the_spec_the_rebuilt_chart_gave(build, kind):
    chart = build()
    sent = _convert_altair_to_vega_lite_spec(themed(chart, kind))
    spec = themed(chart, kind).to_dict()
    rebuilt = _convert_altair_to_vega_lite_spec(_unchecked(type(chart)).from_dict(spec, validate=False))  # before
    assert sent == rebuilt
    assert sent["datasets"] and sent["config"]["axis"]["labelColor"]  # the data inline, the theme applied


def test_each_read_of_the_spec_is_a_copy():
    themed_ = themed(_tradeoff(), "light")
    first = themed_.to_dict()
    first["datasets"].clear()
    first["config"]["axis"]["labelColor"] = "#000000"
    again = themed_.to_dict()
    assert again["datasets"] and again["config"]["axis"]["labelColor"] != "#000000"
    assert isinstance(themed_, ThemedChart)


def test_an_invalid_chart_is_still_refused():
    chart = alt.Chart(pd.DataFrame({"a": [1]})).mark_point().encode(x="a:Q")
    chart["width"] = "very wide"  # not a number, "container" or a step: the schema refuses it
    with pytest.raises(Exception, match="width"):
        themed(chart, "light")
