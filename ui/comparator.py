"""One comparator everywhere: what you run today (the declared baseline) when there is one, else the runner-up.

Every surface that says "better" or "worse" says it against this one pipeline
(a configuration at the cut proposed for it for the same goal), named in words,
and colours a difference only when its interval excludes zero: otherwise it is
grey and reads "no detectable difference".
"""

from __future__ import annotations

from dataclasses import dataclass

from ragdiag.analyses.versus import Versus, detectable, no_difference as _nil, versus
from ragdiag.core.gate import Gate, cut_text
from ragdiag.core.goal import Goal
from ragdiag.evaluation.records import Evaluation
from ui.fmt import difference_text

__all__ = ["Comparator", "comparator", "declared", "versus_for", "delta_args"]


@dataclass(frozen=True)
class Comparator:
    """The pipeline a recommendation is compared with: ``config`` at ``cut``; ``who`` in words."""

    config: str
    cut: float
    who: str  # "what you run today" or "the runner-up"
    baseline: bool

    def words(self) -> str:
        """``"what you run today: paragraph cuts, hybrid retrieval (E/hybrid) at strictness 0.524"``."""
        from ui.context import config_words

        return f"{self.who}: {config_words(self.config)} at strictness {cut_text(self.cut)}"


def declared(ev: Evaluation) -> str | None:
    """The operator's declared baseline when it was evaluated here (else None; a bad declaration is None too:
    the Compare page says why)."""
    from ragdiag.analyses.compare.baseline import declared_baseline

    try:
        found = declared_baseline()
    except ValueError:
        return None
    if found is None:
        return None
    labels = {c.label for c in ev.results}
    return found.config if found.config in labels else None


def comparator(ev: Evaluation, token: str, rec, keep: int, goal: Goal) -> Comparator | None:
    """The declared baseline at its proposed cut, when it is not the recommendation itself; else the runner-up at
    its own cut (the recommendation's); None when there is nothing to compare with."""
    from ui.context import _proposed

    base = declared(ev)
    if base is not None and base != rec.config:
        return Comparator(base, float(cut_text(_proposed(ev, token, base, keep, goal))), "what you run today",
                          True)
    if rec.runner_up is None or rec.runner_up_cut is None:
        return None
    return Comparator(rec.runner_up, float(rec.runner_up_cut), "the runner-up", False)


def versus_for(ev: Evaluation, token: str, config: str, gate: Gate, other: Comparator) -> Versus:
    """:func:`ragdiag.analyses.versus.versus` of ``config`` at ``gate`` against the comparator, once per evaluation."""
    from ui import cache

    return cache.by_evaluation("versus", token, (config, gate.cut, gate.keep, other.config, other.cut),
                               lambda: versus(ev, config, gate, other.config, Gate(gate.keep, other.cut)))


def delta_args(d, *, better_up: bool) -> dict:
    """``st.metric`` keyword arguments for a difference: coloured and with an arrow only when detectable (green
    when better), else grey, no arrow, "no detectable difference"."""
    if d is None or d.estimate != d.estimate:
        return {"delta": None}
    if not detectable(d):  # the numbers are in the caption under the cards: a card stays whole at 800 px
        return {"delta": "no difference" if _nil(d) else "no detectable difference", "delta_color": "gray",
                "delta_arrow": "off"}
    up = d.estimate > 0
    good = up == better_up
    return {"delta": difference_text(d), "delta_color": "green" if good else "red",
            "delta_arrow": "up" if up else "down"}
