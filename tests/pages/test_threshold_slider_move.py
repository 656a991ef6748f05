"""A move of the Threshold page's slider, headless on the FAKE encoder: both cut charts are sent with the same id and
the same spec as before the move (the browser redraws them in place, ``ui.threshold_charts``), and only the rows of
the data sets that hold the cut change: the titles' lines and the rules at the new cut."""

from __future__ import annotations

import json

from fakeapp import app, fake_app  # noqa: F401 - fixtures

from ui.gate_charts import CURVE_MARKS, HISTOGRAM_CUT

PAGE = "app_pages/threshold.py"


def _charts(at) -> list:
    """The page's histogram and trade-off (the first two charts; the slices' chart follows them)."""
    return list(at.get("vega_lite_chart"))[:2]


def _rows(chart, name: str) -> list[dict]:
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    data = next(d.data.data for d in chart.proto.datasets if d.name == name)
    return convert_arrow_bytes_to_pandas_df(data).to_dict("records")


def _slider(at):
    return next(w for w in at.select_slider if w.key == "threshold_cut")


def test_a_move_sends_the_same_charts_with_the_new_cut_s_rows(fake_app):
    at = app(PAGE, config="E/hybrid")
    stops = [float(s) for s in _slider(at).options]
    seen = []
    for step in range(3):  # three stops in a row from the middle of the slider
        slider = _slider(at)
        at_cut = stops[len(stops) // 2 + step]
        slider.set_value(slider.options[len(stops) // 2 + step]).run()
        histogram, tradeoff = _charts(at)
        cut_words = f"{at_cut:.3f}"
        assert [r["cut"] for r in _rows(histogram, HISTOGRAM_CUT)] == [at_cut]
        hist_title = _rows(histogram, HISTOGRAM_CUT)[0]["title"].split("\t")[0]
        assert hist_title.startswith(f"At cut {cut_words}: "), hist_title
        marks = _rows(tradeoff, CURVE_MARKS)
        assert any(r["name"].startswith("on screen") and abs(r["cut"] - at_cut) < 1e-4 for r in marks), marks
        widest = marks[0]["title"].split("\t")[0]  # the title's lines on the widest chart
        assert widest.endswith(f"at cut {cut_words}"), widest
        seen.append([(c.proto.id, c.proto.spec) for c in (histogram, tradeoff)])
    assert seen[0] == seen[1] == seen[2]  # the same element and spec: only the data sets' rows moved
    assert all(json.loads(spec)["title"]["text"]["expr"] for _, spec in seen[0])
