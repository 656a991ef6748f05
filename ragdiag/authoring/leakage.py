"""Leakage: how much of a query was copied from its answer.

``leakage(query, needle)`` is the share of the query's distinct content words
(:func:`ragdiag.authoring.text.content_words`: lowercased, function words and
numbers dropped, a plural ``s`` folded) that also occur in the needle. A query
that copies its answer measures string matching, not retrieval: above
:data:`LEAKAGE_WARN` the checks warn.

The threshold is set from the bundled ground truth, written by hand: its
``course`` phrasings (in the documents' words) copy a median of 57% of their
content words, four of 32 copy 80% or more (e.g. "Do SVMs provide probability
estimates directly...?" against "SVMs do not directly provide probability
estimates..."), and its ``ticket`` phrasings at most 23%. A warning needs
both the share (:data:`LEAKAGE_WARN`) and at least :data:`LEAKAGE_MIN_WORDS`
copied words, so "What is a Nystroem kernel?" is not flagged for naming its
subject.
"""

from __future__ import annotations

from dataclasses import dataclass

from .text import content_words
from ..core.words import pct

__all__ = ["Leakage", "leakage", "LEAKAGE_WARN", "LEAKAGE_MIN_WORDS"]

#: Warn when at least this share of a query's content words occur in its needle...
LEAKAGE_WARN = 0.8
#: ... and at least this many of them.
LEAKAGE_MIN_WORDS = 3


@dataclass(frozen=True)
class Leakage:
    """``share`` of the query's content ``words`` found in the needle (``copied``)."""

    share: float
    copied: tuple[str, ...]
    words: tuple[str, ...]

    @property
    def warn(self) -> bool:
        """Worth a warning: at least ``LEAKAGE_WARN`` of the words copied, and ``LEAKAGE_MIN_WORDS`` or more of them."""
        return self.share >= LEAKAGE_WARN and len(self.copied) >= LEAKAGE_MIN_WORDS

    def __str__(self) -> str:
        return f"{len(self.copied)} of {len(self.words)} content words from the needle ({pct(self.share)})"


def leakage(query: str, needle: str) -> Leakage:
    """Share of ``query``'s content words that occur in ``needle``.

    >>> str(leakage("What is the default value of C?", "C is 1 by default."))
    '1 of 2 content words from the needle (50%)'
    """
    words = content_words(query)
    copied = words & content_words(needle)
    share = len(copied) / len(words) if words else 0.0
    return Leakage(share, tuple(sorted(copied)), tuple(sorted(words)))
