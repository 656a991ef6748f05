"""Chart titles at every width (issue 45: at 800 px they were cut): ``ui.chart_theme.fit_title``, read from the spec.

A title too long for a narrow chart becomes a Vega expression that picks its lines by the chart's ``width``; for
each width the chosen lines fit (at 9 px a character, 16 px bold), and a title that fits the narrowest chart stays
as it was. Subtitles come in lines of at most 56 characters. The browser reads the drawn titles at 800 px in
tests/test_browser_every_page.py.
"""

from __future__ import annotations

import json
import re

import altair as alt
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.chart_theme import SUBTITLE_CHARS, TITLE_CHAR_PX, TITLE_WIDTHS, fit_title, themed, wrap_lines

BRANCH = re.compile(r"^\(width \+ (\d+) >= (\d+) \? (\[.*?\]) : (.*)\)$", re.S)


def lines_at(text, width: float) -> list[str]:
    """The lines a fitted title shows on a chart whose plot is ``width`` px wide (the expression evaluated)."""
    if not isinstance(text, dict):
        return [text] if isinstance(text, str) else list(text)
    expr = text["expr"]
    while (m := BRANCH.match(expr)):
        slack, at, lines, rest = int(m[1]), int(m[2]), m[3], m[4]
        if width + slack >= at:
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
    room = max(plot + 30, min(TITLE_WIDTHS))
    assert all(len(line) * TITLE_CHAR_PX <= room for line in shown), (plot, shown)


def test_wide_charts_keep_one_line_and_narrow_ones_wrap():
    title = themed(_chart(LONG)).to_dict()["title"]["text"]
    assert lines_at(title, 1000) == [LONG]
    assert len(lines_at(title, 300)) >= 3


def test_a_short_title_stays_as_it_was():
    assert themed(_chart("Hubs")).to_dict()["title"] in ("Hubs", {"text": "Hubs"})


def test_subtitles_come_in_short_lines_and_the_data_is_untouched():
    chart = _chart("Trade-off", ["share of answerable and of off-topic queries, 95% bands; hover the curve for counts "
                                 "and the queries that change; click it to set the cut"])
    before, after = chart.to_dict(), themed(chart).to_dict()
    sub = after["title"]["subtitle"]
    assert all(len(line) <= SUBTITLE_CHARS for line in sub) and len(sub) == 3, sub
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
    room = max(plot + 30, min(TITLE_WIDTHS))
    assert all(len(line) * TITLE_CHAR_PX <= room or " " not in line for line in shown), shown


def test_wrap_lines_by_hand():
    assert wrap_lines("aa bb cc", 5) == ["aa bb", "cc"]
    assert wrap_lines(["aa bb", "c"], 2) == ["aa", "bb", "c"]
    assert wrap_lines("averyverylongword x", 4) == ["averyverylongword", "x"]
