"""The Inspector's words: one outcome per (configuration, query) in one vocabulary, and why, in one sentence.

The vocabulary is the library's ladder (:mod:`ragdiag.analyses.outcomes`): answerable
queries are destroyed → truncated → not-in-pool → ranked-low → refused /
kept-but-wrong / answered, at the gate's k, cut and keep; off-topic queries are
a bluff (the gate passes a source) or abstained. Pure functions (no streamlit).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ragdiag.analyses.outcomes import OUTCOMES, QueryOutcome
from ui.fmt import DASH, ordinal

__all__ = ["OUTCOMES", "FAILURES", "Outcome", "outcome_of", "sentence", "outcome_frame", "answered_under"]

#: Outcomes a person would want to look at.
FAILURES = frozenset(OUTCOMES) - {"answered", "abstained"}


@dataclass(frozen=True)
class Outcome:
    """One query under one configuration: its outcome, the answer's rank and distance, the gate's closest chunk."""

    config: str
    outcome: str
    rank: int | None  # of the first chunk holding the answer (None: off-topic, or none in the list)
    answer_distance: float | None
    closest: float  # the closest of the top ``keep`` (what the gate compares first)
    passed: int  # chunks the gate passes
    detail: str
    k: int
    keep: int
    cut: float


def outcome_of(q: QueryOutcome, config: str, detail: str = "") -> Outcome:
    """The Inspector's record of one :class:`~ragdiag.analyses.outcomes.QueryOutcome` under ``config`` (``detail``: the
    funnel's words on where the answer went, e.g. where the chunking cut it)."""
    return Outcome(config, q.outcome, q.needle_rank if q.in_domain else None, q.needle_distance,
                   float("inf") if q.closest is None else q.closest, q.kept, detail, q.k, q.keep, q.cut)


def _gate_words(o: Outcome) -> str:
    if o.passed == 0 and o.closest == float("inf"):
        return "nothing was retrieved, so NO ANSWER"
    if o.passed == 0:
        return f"nothing was closer than the cut {o.cut:.3f} (closest {o.closest:.3f}), so NO ANSWER"
    return (f"the gate passed {o.passed} chunk{'s' if o.passed > 1 else ''} under the cut {o.cut:.3f} "
            f"(closest {o.closest:.3f})")


def sentence(o: Outcome) -> str:
    """Why, in one sentence ("Lost: the answer ranked 10th (k = 4); nothing was closer than the cut ...")."""
    ranked = f"the answer ranked {ordinal(o.rank)}" if o.rank else "no chunk holding the answer was in the list"
    at = f" at distance {o.answer_distance:.3f}" if o.answer_distance is not None else ""
    if o.outcome == "answered":
        return f"Answered: {ranked} (k = {o.k}){at}, under the cut {o.cut:.3f}."
    if o.outcome == "destroyed":
        cut_at = f" ({o.detail})" if o.detail else ""
        return f"Lost: no chunk holds the answer whole, the chunking cut it{cut_at}; {_gate_words(o)}."
    if o.outcome == "truncated":
        return (f"Lost: {o.detail or 'the encoder window cuts every chunk holding the answer before it'}, so its "
                f"vector never saw the answer; {_gate_words(o)}.")
    if o.outcome == "not-in-pool":
        why = f" ({o.detail})" if o.detail else ""
        return f"Lost: the answer never reached the reranker{why}; {_gate_words(o)}."
    if o.outcome == "ranked-low":
        return f"Lost: {ranked} (k = {o.k}); {_gate_words(o)}."
    if o.outcome == "refused":
        return f"Lost: {ranked} (k = {o.k}){at}, but {_gate_words(o)}."
    if o.outcome == "kept-but-wrong":
        return f"Lost: {ranked}{at}, over the cut {o.cut:.3f}; {_gate_words(o)}, none holding the answer."
    if o.outcome == "bluff":
        return (f"Bluff: the corpus does not answer it, yet {_gate_words(o)}: a model would answer from "
                f"{'them' if o.passed > 1 else 'it'}.")
    return f"Abstained, as it should: the corpus does not answer it and {_gate_words(o)}."


def answered_under(outcomes: list[Outcome], good: str) -> list[str]:
    """The configurations whose outcome is ``good`` (answered, or abstained for an off-topic query)."""
    return [o.config for o in outcomes if o.outcome == good]


def outcome_frame(outcomes: list[Outcome], chosen: str) -> pd.DataFrame:
    """One row per configuration, the chosen one first, the others by outcome (best first) then name."""
    order = {name: i for i, name in enumerate(("answered", "abstained", "kept-but-wrong", "refused", "ranked-low",
                                               "not-in-pool", "truncated", "destroyed", "bluff"))}
    rows = sorted(outcomes, key=lambda o: (o.config != chosen, order.get(o.outcome, 99), o.config))
    return pd.DataFrame([{
        "configuration": o.config, "outcome": o.outcome,
        "answer rank": ordinal(o.rank) if o.rank else DASH,
        "answer distance": f"{o.answer_distance:.3f}" if o.answer_distance is not None else DASH,
        "closest distance": f"{o.closest:.3f}", "chunks passed": o.passed,
    } for o in rows])
