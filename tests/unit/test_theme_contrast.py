"""Both themes legible (issue 45): every text colour the dashboard's theme gives reads at 4.5 : 1 (WCAG AA).

Read from ``.streamlit/config.toml`` (the primary colour per theme) and ``ui.theme`` (what the app adds): the text of a
primary button on its fill and on its hover fill, the primary colour as text on the page (the slider's value, a
hovered secondary button), the body text, and the chart theme's text colours (``ui.chart_theme``). The contrast is
WCAG 2's, with hand-checked anchors in tests/test_chart_theme.py; the browser reads the rendered button in
tests/test_browser_themes.py.
"""

from __future__ import annotations

import colorsys
import tomllib
from pathlib import Path

import pytest

from wcag import contrast
from ui import chart_theme, theme

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"
KINDS = ("light", "dark")


def config_theme() -> dict:
    return tomllib.loads(CONFIG.read_text(encoding="utf-8"))["theme"]


def darken(colour: str, amount: float) -> str:
    """Streamlit's ``darken`` (HSL lightness minus ``amount``): the fill of a primary button under the pointer."""
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, lightness, s = colorsys.rgb_to_hls(r, g, b)
    rgb = colorsys.hls_to_rgb(h, max(0.0, lightness - amount), s)
    return "#" + "".join(f"{round(v * 255):02x}" for v in rgb)


def test_the_primary_colours_are_the_configs():
    cfg = config_theme()
    assert {k: cfg[k]["primaryColor"].lower() for k in KINDS} == theme.PRIMARY
    assert "base" not in cfg  # the theme follows the visitor's system: both must read
    assert chart_theme.TEXT.keys() == theme.BACKGROUND.keys()


def test_no_one_colour_serves_both_ways_in_the_dark():
    """Why the dark theme's buttons get dark text: a primary under white text and as text on #0e1117, both at
    4.5 : 1, does not exist (the best grey reaches about 4.3 : 1 both ways)."""
    best = max(min(contrast(g, "#ffffff"), contrast(g, theme.BACKGROUND["dark"]))
               for g in (f"#{v:02x}{v:02x}{v:02x}" for v in range(256)))
    assert 4.0 < best < 4.5
    assert contrast("#90a4ae", "#ffffff") < 3  # Streamlit's own white on the dark primary: 2.6 : 1, as reported


@pytest.mark.parametrize("kind", KINDS)
def test_primary_button_text_reads_on_its_fill_and_its_hover_fill(kind):
    primary, text = theme.PRIMARY[kind], theme.PRIMARY_TEXT[kind]
    hover = theme.PRIMARY_HOVER[kind] or darken(primary, 0.15)
    assert contrast(text, primary) >= 4.5, (kind, text, primary, contrast(text, primary))
    assert contrast(text, hover) >= 4.5, (kind, text, hover, contrast(text, hover))


@pytest.mark.parametrize("kind", KINDS)
def test_every_text_colour_reads_on_the_page(kind):
    colours = {"primary (slider value, hovered buttons)": theme.PRIMARY[kind], "body text": theme.TEXT_COLOUR[kind],
               **{f"chart text {i}": c for i, c in enumerate(chart_theme.TEXT[kind])}}
    for bg in (theme.DARK_BACKGROUNDS if kind == "dark" else (theme.BACKGROUND[kind],)):
        low = {name: round(contrast(c, bg), 2) for name, c in colours.items() if contrast(c, bg) < 4.5}
        assert not low, (kind, bg, low)


@pytest.mark.parametrize("kind, expected", [("light", ""), ("dark", "color: #0e1117 !important")])
def test_the_css_the_app_adds(kind, expected):
    css = theme.button_css(kind)
    assert (expected in css) if expected else css == ""
    if kind == "dark":
        assert '[data-testid^="stBaseButton-primary"]:hover' in css and "#b0bec5" in css
        assert "\n\n" not in css  # a blank line would end Markdown's HTML block: the rules would show as text


def test_an_unknown_theme_is_refused():
    with pytest.raises(ValueError, match="light"):
        theme.button_css("sepia")
