"""The trade-off chart's marker labels never overlap (issue 45: on the held-out corpus they did).

Read from the chart's spec, not its pixels: every text layer's labels (the cut they stand at, their lane's y in
pixels, align, dx, font size) give a box on a plot of a given width, the text ``0.6 × font size`` per character wide
(an estimate of the average sans-serif letter, independent of the layout's own) and a lane's 14 px high; no two
boxes intersect at any plot width from the narrowest (240 px) to a wide one, and every label stays inside the plot.
"""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ui.gate_charts import MARKER_COLORS, label_layout, tradeoff_curve

WIDTHS = (240, 320, 480, 700, 1100)


def _curve(lo: float, hi: float) -> pd.DataFrame:
    cuts = [lo + (hi - lo) * i / 10 for i in range(11)]
    return pd.DataFrame([{"cut": c, "outcome": o, "queries": 3, "rate": 0.5, "low": 0.3, "high": 0.7}
                         for c in cuts for o in ("answered", "bluffs (all ood)")])


def label_boxes(chart, width: float) -> list[tuple[str, float, float, float, float]]:
    """``(text, x0, x1, y0, y1)`` of every marker label the chart's spec draws, on a plot ``width`` px wide."""
    spec = chart.to_dict()
    datasets = spec["datasets"]
    lo, hi = next(layer["encoding"]["x"]["scale"]["domain"] for layer in spec["layer"]
                  if layer.get("encoding", {}).get("x", {}).get("scale", {}).get("domain"))
    boxes = []
    for layer in spec["layer"]:
        mark = layer["mark"]
        if not (isinstance(mark, dict) and mark.get("type") == "text" and layer["encoding"]["text"]["field"] == "name"):
            continue
        size, dx = mark["fontSize"], mark.get("dx", 0)
        for row in datasets[layer["data"]["name"]]:
            x, w = (row["cut"] - lo) / (hi - lo) * width + dx, len(row["name"]) * 0.6 * size
            x0 = x - w if mark["align"] == "right" else x
            assert mark["baseline"] == "middle"
            boxes.append((row["name"], x0, x0 + w, row["y"] - 7, row["y"] + 7))
    return boxes


def overlaps(boxes) -> list[tuple[str, str]]:
    return [(a[0], b[0]) for a, b in itertools.combinations(boxes, 2)
            if a[1] < b[2] and b[1] < a[2] and a[3] < b[4] and b[3] < a[4]]


def _chart(cut: float, markers: dict, lo: float, hi: float):
    return tradeoff_curve(_curve(lo, hi), cut=cut, goal=0.05, markers=markers, extent=(lo, hi))


#: As on the held-out corpus (data/de-haushalt): the cut on screen, the cut fitted here, the proposed one, the cut a
#: team runs today and the cost goal's within a few hundredths of each other, at both ends of the range too.
CROWDED = [
    (0.524, {"fitted here": 0.531, "proposed": 0.527, "you run today": 0.535, "cost goal": 0.52}, 0.40, 0.70),
    (0.69, {"fitted here": 0.695, "proposed": 0.685, "you run today": 0.70}, 0.40, 0.70),
    (0.41, {"fitted here": 0.40, "proposed": 0.405, "conformal": 0.415}, 0.40, 0.70),
]


@pytest.mark.parametrize("cut, markers, lo, hi", CROWDED)
@pytest.mark.parametrize("width", WIDTHS)
def test_crowded_marker_labels_do_not_overlap_and_stay_in_the_plot(cut, markers, lo, hi, width):
    boxes = label_boxes(_chart(cut, markers, lo, hi), width)
    assert len(boxes) == 1 + len(markers)  # every marker is named (none coincide here)
    assert not overlaps(boxes), (width, overlaps(boxes), boxes)
    assert all(-0.5 <= b[1] and b[2] <= width + 0.5 for b in boxes), (width, boxes)


def test_crowded_labels_take_lanes_of_their_own():
    """Lanes by a fixed share of the x range (22%, as before) ignored the texts' length: five markers within 0.015
    of each other on a 240 px plot need at least three rows."""
    cut, markers, lo, hi = CROWDED[0]
    boxes = label_boxes(_chart(cut, markers, lo, hi), 240)
    assert len({b[3] for b in boxes}) >= 3  # at least three lanes: they sit close together


def test_coinciding_markers_share_one_label():
    boxes = label_boxes(_chart(0.5, {"proposed": 0.5, "fitted here": 0.6}, 0.4, 0.7), 480)
    assert sorted(b[0] for b in boxes) == ["fitted here", "on screen = proposed"]


@settings(max_examples=60, deadline=None)
@example(markers=[("conformal", 0.78125), ("cost goal", 0.0), ("default", 0.7578125), ("fitted here", 0.0)], cut=0.0,
         width=480)  # two labels facing each other: apart at 240 px, met at 480 before lanes held at every width
@given(st.lists(st.tuples(st.sampled_from(sorted(MARKER_COLORS)), st.floats(0.0, 1.0)), min_size=1, max_size=6,
                unique_by=lambda t: t[0]),
       st.floats(0.0, 1.0), st.sampled_from(WIDTHS))
def test_no_two_labels_overlap_wherever_the_markers_fall(markers, cut, width):
    chart = tradeoff_curve(_curve(0.0, 1.0), cut=cut, markers=dict(markers), extent=(0.0, 1.0))
    assert not overlaps(label_boxes(chart, width))


def test_the_layout_in_numbers():
    """By hand, on a 240 px plot from 0 to 1: "proposed" at 0.50 (x = 120) runs to 124 + 8 × 6.9 = 179.2; "on screen"
    at 0.51 (x = 122.4) would start at 126.4, inside it: the next lane; "today" at 0.95 (x = 228) would run past 240:
    it goes left of its rule, in the first lane (it starts at 228 - 4 - 34.5 = 189.5, after 179.2)."""
    assert label_layout(["proposed", "on screen", "today"], [0.50, 0.51, 0.95], lo=0.0, hi=1.0) == [
        (0, False), (1, False), (0, True)]
    assert label_layout(["a"], [0.5], lo=0.5, hi=0.5) == [(0, False)]  # an empty range: no division by zero
