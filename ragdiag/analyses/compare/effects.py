""""What does each chunking switch do?": the design's own contrasts, one family, simultaneous intervals.

The six strategies are three switches, so each switch has contrasts that
change it alone:

- **boundaries**: C vs A, D vs B (paragraph cuts instead of blind ones);
- **header**: E vs C, F vs D (the section header in the embedded text);
- **overlap**: B vs A, D vs C, F vs E (64 characters of the previous chunk).

Every contrast is tested per retriever, and all of them form one family,
fixed before the data are seen: the simultaneous intervals and adjusted p
come from one max-T permutation over questions
(:func:`ragdiag.analyses.compare.simultaneous.max_t`), shuffling the strategies of one
retriever within each question. ``p`` is the exact sign-flip p of the
contrast alone; destroyed needles (no chunk holds the answer whole) are shown
beside each, since they cap recall whatever the retriever.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

from ...core.defaults import ALPHA, PRIMARY_K
from ...core.words import difference_text
from .best import difference_dict

if TYPE_CHECKING:  # pragma: no cover
    from ...evaluation.records import Evaluation

__all__ = ["CONTRASTS", "EffectRow", "EffectsResult", "effects", "SWITCH_WORDS"]

#: (switch, strategy with it, strategy without it): the contrasts of the 2x2x2 design that exist.
CONTRASTS = (
    ("boundaries", "C", "A"), ("boundaries", "D", "B"),
    ("header", "E", "C"), ("header", "F", "D"),
    ("overlap", "B", "A"), ("overlap", "D", "C"), ("overlap", "F", "E"),
)
#: The switches in words (the subject of a verdict sentence).
SWITCH_WORDS = {"boundaries": "Paragraph boundaries", "header": "The section header", "overlap": "Overlap"}


@dataclass(frozen=True)
class EffectRow:
    """One contrast (``with_`` vs ``without``) for one retriever: counts over questions, p, interval, status."""

    switch: str
    with_: str
    without: str
    retriever: str
    wins: int
    losses: int
    ties: int
    p: float
    p_adjusted: float
    estimate: float
    low: float
    high: float
    destroyed: Mapping[str, int]
    family: int

    @property
    def contrast(self) -> str:
        """``"E vs C"``."""
        return f"{self.with_} vs {self.without}"

    @property
    def status(self) -> str:
        """``different`` exactly when the simultaneous interval excludes 0."""
        return "different" if self.low > 0 or self.high < 0 else "not shown different"

    def sentence(self) -> str:
        """The verdict: effect first, uncertainty second, the correction last.

        >>> r = EffectRow("header", "E", "C", "dense", 12, 2, 18, 0.01, 0.03, 0.16, 0.02, 0.30, {"E": 0, "C": 0}, 21)
        >>> r.sentence()[:80]
        'The section header helps (E vs C, dense): 12 more questions answered, 2 fewer (+'
        >>> r.sentence()[80:]
        '16 pts (+2 to +30), simultaneous over 21 contrasts; p = 0.030 adjusted).'
        """
        p = f"{self.p_adjusted:.3f}" if self.p_adjusted >= 0.001 else f"{self.p_adjusted:.2g}"
        where = f"{self.contrast}, {self.retriever}"
        if self.status == "different":
            verb = "helps" if self.estimate > 0 else "hurts"
            more, fewer = (self.wins, self.losses)
            return (f"{SWITCH_WORDS[self.switch]} {verb} ({where}): {more} more questions answered, {fewer} fewer "
                    f"({difference_text(self)}, simultaneous over {self.family} contrasts; p = {p} adjusted).")
        return (f"{SWITCH_WORDS[self.switch]} ({where}): not shown different: {difference_text(self)} "
                f"within the {self.family} contrasts; {self.wins} more "
                f"questions answered, {self.losses} fewer.")

    def as_json(self) -> dict:
        """One row of ``effects --json``."""
        return {"switch": self.switch, "contrast": self.contrast, "retriever": self.retriever, "wins": self.wins,
                "losses": self.losses, "ties": self.ties, "p": self.p, "p_adjusted": self.p_adjusted,
                "difference": difference_dict(self.estimate, self.low, self.high), "destroyed": dict(self.destroyed),
                "status": self.status, "verdict": self.sentence()}


@dataclass(frozen=True)
class EffectsResult:
    """The family of switch contrasts at ``k``."""

    rows: tuple[EffectRow, ...]
    k: int
    n_questions: int
    method: str
    alpha: float = ALPHA

    @property
    def family(self) -> str:
        """The family in words."""
        return f"the chunking design's {len(self.rows)} contrasts (each switch alone, per retriever)"

    @property
    def correction(self) -> str:
        """The correction in words."""
        return f"max-T over questions (strategies shuffled within each retriever), simultaneous; {self.method}"

    def as_json(self) -> dict:
        """The ``effects --json`` document."""
        return {"family": self.family, "k": self.k, "metric": f"R@{self.k}", "unit": "question",
                "n_questions": self.n_questions, "correction": self.correction, "alpha": self.alpha,
                "rows": [r.as_json() for r in self.rows]}


def effects(ev: Evaluation, *, k: int = PRIMARY_K, strategies: Sequence[str] | None = None,
            retrievers: Sequence[str] | None = None, phrasing: str = "all", alpha: float = ALPHA) -> EffectsResult:
    """Every switch contrast whose two strategies were evaluated, per retriever, as one family.

    Raises ``ValueError`` when no contrast can be formed (e.g. a single strategy).
    """
    from .comparisons import _pair, _with_family

    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    configs = [c for c in ev.results if not c.external]
    have = {(c.strategy, c.retriever): c for c in configs}
    strategies = list(strategies) if strategies else sorted({c.strategy for c in configs})
    retrievers = list(retrievers) if retrievers else list(dict.fromkeys(c.retriever for c in configs))
    todo = [(sw, a, b, r) for r in retrievers for sw, a, b in CONTRASTS
            if a in strategies and b in strategies and (a, r) in have and (b, r) in have]
    if not todo:
        raise ValueError("no contrast of the design can be formed: evaluate two strategies that differ by one "
                         "switch (e.g. E and C) with the same retriever")
    comps = [_pair(ev, have[(a, r)], have[(b, r)], k, phrasing) for _, a, b, r in todo]
    fam = _with_family(ev, comps, "switch contrasts", alpha=alpha, blocks_by="retriever")

    def destroyed(s: str) -> int:
        idx = ev.indexes.get(s)
        return len(idx.report.destroyed) if idx is not None else 0

    rows = tuple(EffectRow(sw, a, b, r, c.test.wins, c.test.losses, c.test.ties, c.test.p, c.p_adjusted,
                           c.interval.estimate, c.interval.low, c.interval.high, {a: destroyed(a), b: destroyed(b)},
                           len(fam))
                 for (sw, a, b, r), c in zip(todo, fam))
    n_q = fam[0].test.n_questions if fam else 0
    return EffectsResult(rows, k, n_q, fam[0].method if fam else "", alpha)
