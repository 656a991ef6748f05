"""WCAG 2 contrast of two sRGB colours (the oracle of the theme tests): relative luminance, then (L1 + 0.05) / (L2 + 0.05).

>>> round(contrast("#000000", "#ffffff"), 1)
21.0
"""

from __future__ import annotations


def luminance(colour: str) -> float:
    """The relative luminance of ``#rrggbb`` (WCAG 2's definition)."""
    rgb = [int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """The contrast ratio of two colours, 1 to 21, whichever is lighter."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
