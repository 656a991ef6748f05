"""The dashboard's two themes, legible: every text at least 4.5 : 1 (WCAG AA) on what it is drawn on.

The primary colour of each theme is set in ``.streamlit/config.toml`` (``[theme.light]``, ``[theme.dark]``) and
mirrored in :data:`PRIMARY` (a test holds the two equal). Streamlit uses it both as a text colour on the page (the
slider's value, a hovered secondary button) and as the fill of a primary button under white text. In the dark theme
no colour reads at 4.5 : 1 both ways (on #0e1117 and under white: at best about 4.3 : 1), so the dark theme keeps a
light primary (7.3 : 1 on the page) and its primary buttons get dark text instead of white (:func:`button_css`),
on the fill and on the hover fill (Streamlit darkens the fill on hover, to 4.5 : 1 under that text: lightened here).
"""

from __future__ import annotations

__all__ = ["BACKGROUND", "DARK_BACKGROUNDS", "TEXT_COLOUR", "PRIMARY", "PRIMARY_TEXT", "PRIMARY_HOVER", "button_css"]

#: Streamlit's page background and body text per theme (its defaults: config.toml leaves them alone). The dark
#: page is #0e1117 in Streamlit's documentation and #171614 as 1.67 draws it: every colour here reads on both.
BACKGROUND = {"light": "#ffffff", "dark": "#0e1117"}
DARK_BACKGROUNDS = ("#0e1117", "#171614")
TEXT_COLOUR = {"light": "#31333f", "dark": "#fafafa"}
#: ``theme.<kind>.primaryColor`` of .streamlit/config.toml.
PRIMARY = {"light": "#37474f", "dark": "#90a4ae"}
#: The text of a primary button, and its fill under the pointer (None: Streamlit's own, white text, darker fill).
PRIMARY_TEXT = {"light": "#ffffff", "dark": "#0e1117"}
PRIMARY_HOVER: dict[str, str | None] = {"light": None, "dark": "#b0bec5"}

#: Streamlit's primary buttons (plain, download, form submit): their test ids start with this.
_PRIMARY_BUTTON = '[data-testid^="stBaseButton-primary"]'


def button_css(kind: str) -> str:
    """CSS rules giving the primary buttons of theme ``kind`` their text and hover colours ("" where Streamlit's own
    read at 4.5 : 1)."""
    if kind not in PRIMARY:
        raise ValueError(f"theme must be 'light' or 'dark', got {kind!r}")
    if PRIMARY_TEXT[kind] == "#ffffff" and PRIMARY_HOVER[kind] is None:
        return ""
    rules = [f"{_PRIMARY_BUTTON}, {_PRIMARY_BUTTON} p {{ color: {PRIMARY_TEXT[kind]} !important; }}"]
    if PRIMARY_HOVER[kind]:
        rules.append(f"{_PRIMARY_BUTTON}:hover, {_PRIMARY_BUTTON}:focus-visible {{ background-color: "
                     f"{PRIMARY_HOVER[kind]} !important; border-color: {PRIMARY_HOVER[kind]} !important; }}")
    return "\n".join(rules)
