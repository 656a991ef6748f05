"""Chart titles at every width (issue 45: at 800 px they were cut): ``ui.chart_theme.fit_title``, read from the spec.

A title (or subtitle) too long for a narrow chart becomes a Vega expression that picks its lines by the chart's
plot ``width`` (Vega-Lite cuts a longer line with "…"); for each width the chosen lines fit (at 7.6 px a character for
a 16 px bold title, 5.6 px for an 11 px subtitle), and a title that fits the narrowest chart stays as it was. The
browser reads the drawn titles at 800 px in tests/test_browser_every_page.py.
"""

from __future__ import annotations

import json
import re

import altair as alt
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.chart_theme import SUBTITLE_CHAR_PX, TITLE_CHAR_PX, TITLE_WIDTHS, fit_title, themed, wrap_lines

BRANCH = re.compile(r"^\(width >= (\d+) \? (\[.*?\]) : (.*)\)$", re.S)


def lines_at(text, width: float) -> list[str]:
    """The lines a fitted title shows on a chart whose plot is ``width`` px wide (the expression evaluated)."""
    if not isinstance(text, dict):
        return [text] if isinstance(text, str) else list(text)
    expr = text["expr"]
    while (m := BRANCH.match(expr)):
        at, lines, rest = int(m[1]), m[2], m[3]
        if width >= at:
            return json.loads(lines)
        expr = rest
    return json.loads(expr)


def _chart(title, subtitle=None):
    frame = pd.DataFrame({"x": [0.1, 0.5], "y": [1, 2]})
    params = alt.TitleParams(title, subtitle=subtitle, anchor="start") if subtitle else title
    return alt.Chart(frame).mark_point().encode(x="x:Q", y="y:Q").properties(title=params)


LONG = "Answered 48%, given wrong passages 23%, refused 29% at cut 0.524 (E/hybrid, at most 4 passages)"


@pytest.mark.parametrize("plot", [190, 240, 300, 330, 420, 520, 700, 900, 1200])
def test_a_long_title_fits_every_width(plot):
    title = fit_title(themed(_chart(LONG)).to_dict())["title"]["text"]
    shown = lines_at(title, plot)
    assert " ".join(shown) == LONG  # every word, in order
    room = max(plot, min(TITLE_WIDTHS))
    assert all(len(line) * TITLE_CHAR_PX <= room for line in shown), (plot, shown)


def test_wide_charts_keep_one_line_and_narrow_ones_wrap():
    title = themed(_chart(LONG)).to_dict()["title"]["text"]
    assert lines_at(title, 1000) == [LONG]
    assert len(lines_at(title, 300)) >= 3


def test_a_short_title_stays_as_it_was():
    assert themed(_chart("Hubs")).to_dict()["title"] in ("Hubs", {"text": "Hubs"})


def test_subtitles_fit_too_and_the_data_is_untouched():
    sub = ("share of answerable and of off-topic queries, 95% bands; hover the curve for counts and the queries that "
           "change; click it to set the cut")
    chart = _chart("Trade-off", [sub])
    before, after = chart.to_dict(), themed(chart).to_dict()  # drawn by Streamlit: to_dict() as it calls it
    for plot in (220, 300, 480, 900):
        shown = lines_at(after["title"]["subtitle"], plot)
        assert " ".join(shown) == sub and all(len(line) * SUBTITLE_CHAR_PX <= max(plot, 220) for line in shown)
    assert lines_at(after["title"]["subtitle"], 1100) == [sub]
    assert after["datasets"] == before["datasets"]


def test_a_concatenation_keeps_its_title():
    spec = {"hconcat": [], "title": LONG}
    assert fit_title(spec) is spec


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet="abcdefghij%0.", min_size=1, max_size=14), min_size=1, max_size=16),
       st.sampled_from([200, 260, 350, 480, 640, 900]))
def test_any_title_keeps_its_words_and_fits(words, plot):
    text = " ".join(words)
    shown = lines_at(fit_title({"title": text})["title"]["text"], plot)
    assert " ".join(shown).split() == text.split()
    room = max(plot, min(TITLE_WIDTHS))
    assert all(len(line) * TITLE_CHAR_PX <= room or " " not in line for line in shown), shown


def test_wrap_lines_by_hand():
    assert wrap_lines("aa bb cc", 5) == ["aa bb", "cc"]
    assert wrap_lines(["aa bb", "c"], 2) == ["aa", "bb", "c"]
    assert wrap_lines("averyverylongword x", 4) == ["averyverylongword", "x"]
