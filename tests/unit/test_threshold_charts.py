"""The Threshold page's charts as a slider move sends them (:mod:`ui.threshold_charts`): the same spec at every cut
(so the browser redraws the drawn chart in place), new rows for the cut, and what is drawn is exactly the chart
the builders give at that cut (:func:`ui.gate_charts.mirrored_histogram`, :func:`ui.gate_charts.tradeoff_curve`).

What Streamlit sends is read through its own marshalling (the spec string after its stabilising, and each data
set's Arrow bytes read back as rows).
"""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.elements.vega_charts import (_convert_altair_to_vega_lite_spec, _marshall_chart_data,
                                            _stabilize_vega_json_spec)
from streamlit.proto.VegaLiteChart_pb2 import VegaLiteChart

from ui.chart_theme import TITLE_WIDTHS, fit_title, themed, wrap_lines
from ui.gate_charts import CURVE_MARKS, HISTOGRAM_CUT, mirrored_histogram, tradeoff_curve
from ui.threshold_charts import histogram_chart, title_expr, title_rows, tradeoff_chart

#: Gate values by hand: three answerable queries with an answer-holding chunk, one without, two off-topic.
FRAME = pd.DataFrame({"key": ["answer", "answer", "answer", "near", "far", "kept", "kept", "kept", "kept"],
                      "distance": [0.31, 0.42, 0.55, 0.38, 0.61, 0.3, 0.4, 0.5, 0.6]})
CUTS = [0.3, 0.35, 0.4, 0.42, 0.5, 0.6]  # inside the distances: the x range stays
CURVE = pd.DataFrame([{"cut": c, "outcome": o, "queries": q, "rate": q / 4, "low": 0.0, "high": 1.0}
                      for c in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
                      for o, q in (("answered", int(10 * c) - 2), ("bluffs (all ood)", int(c > 0.45)))])
MARKERS = {"fitted here": 0.45, "proposed": 0.44, "you run today": 0.5, "cost goal": None}
QUERIES = {"answered": (["a1", "a2", "a3"], [0.31, 0.42, 0.55]), "bluffs": (["o1", "o2"], [0.38, 0.61])}


def sent(chart) -> tuple[str, dict[str, list[dict]]]:
    """What ``st.altair_chart(chart)`` sends: the spec string and each named data set's rows."""
    spec = _convert_altair_to_vega_lite_spec(chart)
    proto = VegaLiteChart()
    _marshall_chart_data(proto, spec)
    rows = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data).to_dict("records") for d in proto.datasets}
    return _stabilize_vega_json_spec(json.dumps(spec)), rows


def _histogram(cut, kind="light"):
    return histogram_chart("token", "A/dense", 4, FRAME, cut=cut, markers={"you run today": 0.5}, kind=kind)


def _tradeoff(cut, kind="light", title=None):
    return tradeoff_chart("token", "A/dense", 4, CURVE, cut=cut, title=title or f"Answered at cut {cut:.3f}",
                          extent=(0.29, 0.62), goal=0.25, markers=MARKERS, queries=QUERIES, pick="pick", kind=kind)


@pytest.mark.parametrize("build", [_histogram, _tradeoff], ids=["histogram", "tradeoff"])
def test_every_cut_sends_the_same_spec_and_new_rows(build):
    specs, rows = zip(*(sent(build(cut)) for cut in CUTS))
    assert len(set(specs)) == 1  # the browser compares this (data set names aside): one chart, redrawn in place
    assert len({json.dumps(r, sort_keys=True, default=str) for r in rows}) == len(CUTS)  # the rows follow the cut
    assert len({tuple(r) for r in rows}) == 1  # the same data sets, in the same order


def _lines_at(title: dict, rows: list[dict], width: float) -> list[str]:
    """The lines the title expression of :func:`title_expr` picks at a plot ``width`` (its numbers read from it)."""
    expr = title["text"]["expr"]
    widest, step, last = map(int, re.search(r"clamp\(ceil\(\((\d+) - width\) / (\d+)\), 0, (\d+)\)", expr).groups())
    assert r"split(split(data('" in expr and r"].title, '\t')[" in expr and r"], '\n')" in expr, expr
    i = min(max(math.ceil((widest - width) / step), 0), last)
    return rows[0]["title"].split("\t")[i].split("\n")


def _by_width(text: str, width: float) -> list[str]:
    """The lines :func:`ui.chart_theme.fit_title` gives a title at a plot ``width``: those of the widest of
    TITLE_WIDTHS at or under it (the narrowest under all)."""
    w = max([w for w in TITLE_WIDTHS if w <= width] or [min(TITLE_WIDTHS)])
    return wrap_lines(text, max(8, int(w / 7.6)))


@pytest.mark.parametrize("kind", ["light", "dark"])
@pytest.mark.parametrize("cut", CUTS)
def test_the_histogram_draws_what_the_builder_draws_at_that_cut(cut, kind):
    moving, moving_rows = sent(_histogram(cut, kind))
    plain, plain_rows = sent(themed(mirrored_histogram(FRAME, cut=cut, markers={"you run today": 0.5}), kind))
    moving, plain = json.loads(moving), json.loads(plain)
    title = moving.pop("title")
    plain_title = plain.pop("title")
    assert moving == plain  # every layer, scale, colour and data set name
    cut_rows = moving_rows.pop(HISTOGRAM_CUT)
    assert [{k: v for k, v in r.items() if k != "title"} for r in cut_rows] == plain_rows.pop(HISTOGRAM_CUT)
    assert moving_rows == plain_rows
    text = mirrored_histogram(FRAME, cut=cut).to_dict()["title"]["text"]
    assert text.startswith(f"At cut {cut:.3f}: ")
    for width in (150, 200, 239, 240, 333, 700, 1199, 1200, 1600):
        assert _lines_at(title, cut_rows, width) == _by_width(text, width)
    assert {k: v for k, v in title.items() if k != "text"} == {k: v for k, v in plain_title.items() if k != "text"}


@pytest.mark.parametrize("cut", CUTS)
def test_the_tradeoff_draws_what_the_builder_draws_at_that_cut(cut):
    words = f"Answered {int(100 * cut)}%, bluffs 25% at cut {cut:.3f}"
    moving, moving_rows = sent(_tradeoff(cut, title=words))
    plain, plain_rows = sent(themed(tradeoff_curve(CURVE, cut=cut, goal=0.25, markers=MARKERS, extent=(0.29, 0.62),
                                                   queries=QUERIES, pick="pick", title=words), "light"))
    moving, plain = json.loads(moving), json.loads(plain)
    title, plain_title = moving.pop("title"), plain.pop("title")
    assert moving == plain
    marks = moving_rows.pop(CURVE_MARKS)
    assert [{k: v for k, v in r.items() if k != "title"} for r in marks] == plain_rows.pop(CURVE_MARKS)
    assert moving_rows == plain_rows
    assert any(r["name"].startswith("on screen") and r["cut"] == pytest.approx(cut) for r in marks)
    for width in (150, 240, 480, 1300):
        assert _lines_at(title, marks, width) == _by_width(words, width)
    assert plain_title["subtitle"] == title["subtitle"]


def test_title_rows_are_the_lines_fit_title_picks():
    """The expression's index is the widest width at or under the chart's: checked against fit_title's own
    expression at every width it branches on (its branches are literal line lists)."""
    text = "At cut 0.447: 12 answered, 3 off-topic bluff"
    expr = fit_title({"title": text})["title"]["text"]["expr"]
    branches = [(int(w), json.loads(lines)) for w, lines in re.findall(r"width >= (\d+) \? (\[.*?\]) :", expr)]
    assert branches  # the title wraps at some widths
    rows = [title_rows(text)]
    for w, lines in branches:
        assert _lines_at({"text": title_expr("x")}, rows, w) == lines
    assert _lines_at({"text": title_expr("x")}, rows, 100) == json.loads(expr.rsplit(" : ", 1)[1].rstrip(")"))


def test_a_title_with_a_tab_is_refused():
    with pytest.raises(ValueError, match="tab"):
        title_rows("At cut\t0.4")


def test_a_chart_with_no_markers_in_range_still_has_the_same_layers():
    """The marker layers stay when none of their rows shows (an empty data set), so a move never adds a layer."""
    inside = json.loads(sent(_tradeoff(0.4))[0])
    spec = tradeoff_curve(CURVE, cut=0.9, goal=0.25, extent=(0.29, 0.62)).to_dict()
    assert spec["datasets"][CURVE_MARKS] == []
    assert [layer["mark"] for layer in spec["layer"]] == [layer["mark"] for layer in inside["layer"]]
