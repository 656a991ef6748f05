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
from ragdiag.core.gate import Gate, OnGate
from ragdiag.core.words import RUNG_WORDS, cut_text, f3  # the ladder's rungs in words: one vocabulary, the library's
from ui.fmt import DASH, ordinal

__all__ = ["OUTCOMES", "FAILURES", "Outcome", "outcome_of", "sentence", "outcome_frame", "answered_under", "RUNG_WORDS",
           "CAUSE_WORDS", "cause_sentence", "failures_frame", "reranks", "first_failure", "opening_cut"]

#: The binding causes (:mod:`ragdiag.analyses.cause`) as a failures table groups them.
CAUSE_WORDS = {"cut": "the cut is too strict for it", "ranking": "ranked too low (the cut would pass it)",
               "both": "ranked too low and too far", "chunking": "no passage holds the answer whole"}

#: Outcomes a person would want to look at.
FAILURES = frozenset(OUTCOMES) - {"answered", "abstained"}


@dataclass(frozen=True)
class Outcome(OnGate):
    """One query under one configuration at ``gate``: its outcome, the answer's rank and distance, the gate's closest
    chunk."""

    config: str
    outcome: str
    rank: int | None  # of the first chunk holding the answer (None: off-topic, or none in the list)
    answer_distance: float | None
    closest: float  # the closest of the top ``keep`` (what the gate compares first)
    passed: int  # chunks the gate passes
    detail: str
    gate: Gate


def outcome_of(q: QueryOutcome, config: str, detail: str = "") -> Outcome:
    """The Inspector's record of one :class:`~ragdiag.analyses.outcomes.QueryOutcome` under ``config`` (``detail``: the
    funnel's words on where the answer went, e.g. where the chunking cut it)."""
    return Outcome(config, q.outcome, q.needle_rank if q.in_domain else None, q.needle_distance,
                   float("inf") if q.closest is None else q.closest, q.kept, detail, q.gate)


def _gate_words(o: Outcome) -> str:
    if o.passed == 0 and o.closest == float("inf"):
        return "nothing was retrieved, so NO ANSWER"
    if o.passed == 0:
        return f"nothing was closer than the cut {cut_text(o.cut)} (closest {o.closest:.3f}), so NO ANSWER"
    return (f"the gate passed {o.passed} chunk{'s' if o.passed > 1 else ''} under the cut {cut_text(o.cut)} "
            f"(closest {o.closest:.3f})")


def _lead(outcome: str) -> str:
    """A sentence's first words: the rung's one name (:data:`RUNG_WORDS`), capitalised."""
    w = RUNG_WORDS.get(outcome, outcome)
    return w[:1].upper() + w[1:]


def sentence(o: Outcome) -> str:
    """Why, in one sentence, led by the rung's name ("Retrieved too low: the answer ranked 10th (k = 4); nothing was
    closer than the cut ...")."""
    ranked = f"the answer ranked {ordinal(o.rank)}" if o.rank else "no chunk holding the answer was in the list"
    at = f" at distance {o.answer_distance:.3f}" if o.answer_distance is not None else ""
    lead = _lead(o.outcome)
    if o.outcome == "answered":
        return f"{lead}: {ranked} (k = {o.k}){at}, under the cut {cut_text(o.cut)}."
    if o.outcome == "destroyed":
        cut_at = f" ({o.detail})" if o.detail else ""
        return f"{lead}: no chunk holds the answer whole{cut_at}; {_gate_words(o)}."
    if o.outcome == "truncated":
        return (f"{lead}: {o.detail or 'the encoder window cuts every chunk holding the answer before it'}, so its "
                f"vector never saw the answer; {_gate_words(o)}.")
    if o.outcome == "not-in-pool":
        why = f" ({o.detail})" if o.detail else ""
        return f"{lead}: the answer never reached the reranker{why}; {_gate_words(o)}."
    if o.outcome == "ranked-low":
        return f"{lead}: {ranked} (k = {o.k}); {_gate_words(o)}."
    if o.outcome == "refused":
        return f"{lead}: {ranked} (k = {o.k}){at}, but {_gate_words(o)}."
    if o.outcome == "kept-but-wrong":
        return f"{lead}: {ranked}{at}, over the cut {cut_text(o.cut)}; {_gate_words(o)}, none holding the answer."
    if o.outcome == "bluff":
        return (f"{lead}: the corpus does not answer it, yet {_gate_words(o)}: a model would answer from "
                f"{'them' if o.passed > 1 else 'it'}.")
    return f"{lead}: the corpus does not answer it and {_gate_words(o)}."


def first_failure(failing: list[str], outcomes: dict[str, str]) -> str | None:
    """The query the Inspector opens on when none is chosen: the first of ``failing`` (query ids in order) whose
    outcome is an answerable query's failure (lost, given wrong passages, refused), else the first failure (a bluff),
    else None.

    >>> first_failure(["o1", "q2"], {"o1": "bluff", "q2": "refused"}), first_failure(["o1"], {"o1": "bluff"})
    ('q2', 'o1')
    """
    lost = [q for q in failing if outcomes.get(q) not in ("bluff", "answered", "abstained")]
    return (lost or failing or [None])[0]


def opening_cut(c, outcome: str) -> float | None:
    """The cut the cause sentence names as the one that alone answers the query (or, for a bluff, refuses it), for
    an "Open at that cut" button; None when no cut alone does (ranking, both, chunking) or nothing failed."""
    if c is None or c.cause != "cut" or c.answer_cut is None or outcome in ("answered", "abstained"):
        return None
    return float(c.answer_cut)


def answered_under(outcomes: list[Outcome], good: str) -> list[str]:
    """The configurations whose outcome is ``good`` (answered, or abstained for an off-topic query)."""
    return [o.config for o in outcomes if o.outcome == good]


def outcome_frame(outcomes: list[Outcome], chosen: str) -> pd.DataFrame:
    """One row per configuration, the chosen one first, the others by outcome (best first) then name."""
    order = {name: i for i, name in enumerate(("answered", "abstained", "kept-but-wrong", "refused", "ranked-low",
                                               "not-in-pool", "truncated", "destroyed", "bluff"))}
    rows = sorted(outcomes, key=lambda o: (o.config != chosen, order.get(o.outcome, 99), o.config))
    return pd.DataFrame([{
        "configuration": o.config, "outcome": RUNG_WORDS.get(o.outcome, o.outcome),
        "answer rank": ordinal(o.rank) if o.rank else DASH,
        "answer distance": f"{o.answer_distance:.3f}" if o.answer_distance is not None else DASH,
        "closest distance": f"{o.closest:.3f}", "passages given": o.passed,
    } for o in rows])


def reranks(config: str) -> bool:
    """Whether ``config``'s retriever re-scores another's ranking (a reranker): only then is there a reranker to name."""
    from ragdiag.retrieval.registry import retriever_spec

    try:
        return retriever_spec(config.split("/", 1)[1].split("@", 1)[0]).pool is not None
    except (KeyError, ValueError, IndexError):
        return False


def _given(o: Outcome) -> str:
    """What the user gets, in the four outcomes' words (:data:`ragdiag.core.words.OUTCOME_WORDS`)."""
    from ragdiag.core.words import OUTCOME_WORDS

    if o.passed == 0:
        return f"{OUTCOME_WORDS['no_answer']} (no passage given)"
    return f"{OUTCOME_WORDS['wrong_sources']} ({o.passed})"


def cause_sentence(o: Outcome, c, *, reranker: bool) -> str:
    """Why, in one sentence led by the rung's name, naming the change that alone would answer it (``c``: its
    :class:`~ragdiag.analyses.cause.Cause`; None when it is answered or refused as it should be)."""
    from ragdiag.core.gate import cut_text

    cut = cut_text(o.cut)
    if c is None:
        return sentence(o)
    lead = _lead(o.outcome)
    at = f" at distance {o.answer_distance:.3f}" if o.answer_distance is not None else ""
    if o.rank and o.rank > 0:
        where = f"the answer is ranked {ordinal(o.rank)}{at}"
    elif o.outcome == "not-in-pool":
        where = ("the answer is not among the passages the reranker re-scores" if reranker
                 else "the answer is not retrieved (not in the top 25)")
    else:
        where = "no passage holding the answer is retrieved"
    if c.cause == "chunking":
        return (f"{lead}: no passage holds the answer whole{f' ({o.detail})' if o.detail else ''}; no cut or "
                f"ranking can answer it here; {_given(o)}.")
    if o.outcome == "truncated":  # why it ranks low: the model saw no passage up to the answer
        where += f" ({o.detail or 'the length limit cuts every passage holding it before the answer'})"
    if c.cause == "cut" and o.outcome == "bluff":
        return (f"{lead}: the corpus does not answer it, yet {o.passed} passage{'s' if o.passed > 1 else ''} "
                f"{'are' if o.passed > 1 else 'is'} closer than the cut {cut} (closest {o.closest:.3f}). "
                f"Refused at cut {cut_text(c.answer_cut)} or stricter.")
    if c.cause == "cut":
        return (f"{lead}: {where}, over the cut {cut}; {_given(o)}. "
                f"Answered at cut {cut_text(c.answer_cut)}.")
    if c.cause == "ranking":
        return (f"{lead}: {where}, but only the top {o.keep} are given; {_given(o)}. "
                f"Ranked first it would be answered at this cut.")
    need = f" and a cut of {cut_text(c.answer_cut)}" if c.answer_cut is not None else ""
    return (f"{lead}: {where}, over the cut {cut}; {_given(o)}. Ranking it first alone "
            f"would not help: it needs a better ranking{need}.")


def failures_frame(causes, texts: dict[str, str]) -> pd.DataFrame:
    """The failed queries grouped by binding cause (largest group first), then by the answer's distance and rank."""
    from collections import Counter

    sizes = Counter(c.cause for c in causes)
    rows = sorted(causes, key=lambda c: (-sizes[c.cause], c.cause,
                                         c.answer_distance if c.answer_distance is not None else 9.0,
                                         c.rank or 10 ** 6, c.query_id))
    return pd.DataFrame([{
        "cause": CAUSE_WORDS[c.cause] if c.outcome != "bluff" else "bluff: the cut lets it through",
        "query": c.query_id, "text": texts[c.query_id][:120],
        "outcome": RUNG_WORDS.get(c.outcome, c.outcome),
        "answer rank": c.rank if c.rank else None,
        "answer distance": round(c.answer_distance, 3) if c.answer_distance is not None else None,
        "answered at cut": f3(c.answer_cut) if c.answer_cut is not None and c.outcome != "bluff" else DASH,
        "answered by": len(c.answered_by),
    } for c in rows], columns=["cause", "query", "outcome", "answer rank", "answer distance",
                                "answered at cut", "answered by", "text"]).astype({"answer rank": "Int64", "answer distance": "Float64"})
