"""The dashboard's pure helpers: the one table grammar, the mirrored histogram's bins, the Inspector's sentence."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ragdiag.evaluation.rows import RateCell
from ragdiag.core.stats import wilson
from ragdiag.core.gate import Gate


def test_a_rate_reads_one_way():
    from ui.fmt import DASH, interval, ordinal, pct, rate

    assert rate(RateCell(35, 35 / 64, 0.4210, 0.6670)) == "55% (42–67)"
    assert rate(wilson(38, 64)) == f"59% ({100 * wilson(38, 64).low:.0f}–{100 * wilson(38, 64).high:.0f})"
    assert rate(RateCell(0, None, 0.0, 0.0)) == DASH and rate(None) == DASH
    assert interval(float("nan"), 0, 1) == DASH
    assert pct(0.5469) == "55%" and pct(0.5469, 1) == "54.7%" and pct(None) == DASH and pct(float("nan")) == DASH
    assert [ordinal(n) for n in (1, 2, 3, 4, 10, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "10th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]


def test_constant_columns_are_said_once_and_nothing_reads_none():
    from ui.fmt import DASH, dash_missing, drop_constant

    df = pd.DataFrame({"configuration": ["A/dense", "E/dense"], "queries": [64, 64], "cut": [0.6, 0.6],
                       "destroyed": [4, 0]})
    shown, const = drop_constant(df, keep=["configuration"])
    assert list(shown.columns) == ["configuration", "destroyed"] and const == {"queries": 64, "cut": 0.6}
    one, none = drop_constant(df.head(1))
    assert list(one.columns) == list(df.columns) and none == {}  # one row: every column stays
    assert dash_missing(pd.DataFrame({"rank": [1, None], "x": [float("nan"), 2.0]})).to_dict("list") == {
        "rank": ["1", DASH], "x": [DASH, "2"]}  # one type per column (Arrow), a whole number without .0


def test_mirrored_bins_stack_off_topic_below_and_count_every_value():
    from ui.gate_charts import FAR, NEAR, mirrored_bins

    frame = pd.DataFrame({"key": ["answer", "answer", "near", "far", "far"],
                          "distance": [0.31, 0.33, 0.55, 0.55, 0.95], "series": "x"})
    bins = mirrored_bins(frame, step=0.1)
    # 0.31 and 0.33 share the bin [0.3, 0.4): one bar of 2 above the axis
    answer = bins[bins["series"] == "answerable"]
    assert answer[["start", "y0", "y1"]].round(6).values.tolist() == [[0.3, 0.0, 2.0]]
    # near and far in [0.5, 0.6): near from 0 to -1, far stacked under it from -1 to -2
    near = bins[bins["series"] == NEAR].iloc[0]
    far = bins[(bins["series"] == FAR) & (bins["start"].round(6) == 0.5)].iloc[0]
    assert (near["y0"], near["y1"]) == (0, -1) and (far["y0"], far["y1"]) == (-1, -2)
    assert int(bins["count"].sum()) == len(frame)


def test_x_extent_trims_to_the_data_and_the_marks():
    from ui.gate_charts import x_extent

    assert x_extent([0.18, 0.95], 0.6, pad=0.02) == (0.16, 0.97)
    assert x_extent([0.3, 0.4], 0.9, pad=0.0) == (0.3, 0.9)
    assert x_extent([math.inf], pad=0.0) == (0.0, 1.0)


@pytest.mark.parametrize("outcome, expected", [
    ("ranked-low", "Retrieved too low: the answer ranked 10th (k = 4); nothing was closer than the cut 0.600 (closest 0.660), "
                   "so NO ANSWER."),
    ("answered", "Answered: the answer ranked 10th (k = 4) at distance 0.700, under the cut 0.600."),
])
def test_the_inspector_says_why_in_one_sentence(outcome, expected):
    from ui.inspect_words import Outcome, sentence

    o = Outcome("E/hybrid", outcome, 10, 0.7, 0.66, 0, "", Gate(4, 0.6, 4))
    assert sentence(o) == expected


def test_off_topic_sentences():
    from ui.inspect_words import Outcome, sentence

    bluff = Outcome("E/hybrid", "bluff", None, None, 0.497, 2, "", Gate(4, 0.6, 4))
    assert sentence(bluff) == ("Bluff: the corpus does not answer it, yet the gate passed 2 chunks under the cut "
                               "0.600 (closest 0.497): a model would answer from them.")
    quiet = Outcome("E/hybrid", "abstained", None, None, 0.71, 0, "", Gate(4, 0.6, 4))
    assert sentence(quiet).startswith("Correctly refused: ")


def test_tradeoff_tooltip_names_the_queries_that_change_outcome_at_each_step():
    from ui.gate_charts import tradeoff_curve

    cuts = [0.3, 0.4, 0.5, 0.6]
    curve = pd.DataFrame([{"cut": c, "outcome": o, "queries": q, "rate": q / 5, "low": 0.0, "high": 1.0}
                          for c in cuts for o, q in (("answered", sum(v < c for v in (0.35, 0.45, 0.46, 0.47, 0.48))),
                                                     ("bluffs (all ood)", int(c > 0.55)))])
    chart = tradeoff_curve(curve, cut=0.5, extent=(0.3, 0.6), markers={"default": 0.5, "proposed": 0.51},
                           queries={"answered": (["a1", "a2", "a3", "a4", "a5"], [0.35, 0.45, 0.46, 0.47, 0.48]),
                                    "bluffs": (["o1"], [0.55])})
    spec = chart.to_dict()
    rows = next(v for v in spec["datasets"].values() if v and "changes here" in v[0])
    said = {(r["measure"], r["cut"]): r["changes here"] for r in rows}
    assert said[("answered", 0.4)] == "a1"
    assert said[("answered", 0.5)] == "a2, a3, a4 +1 more"  # 4 between 0.4 and 0.5, closest first
    assert said[("answered", 0.6)] == "–" and said[("bluffs", 0.6)] == "o1"
    # the markers 0.5 (on screen = default) and 0.51 (proposed) are too close for two labels side by side on one
    # row: one goes to another row, or left of its rule (tests/test_marker_labels.py checks their boxes)
    marks = next(v for v in spec["datasets"].values() if v and "name" in v[0] and "y" in v[0])
    assert len(marks) == 2 and (marks[0]["y"] != marks[1]["y"] or marks[0]["right"] != marks[1]["right"]), marks
