"""What to ship: one configuration and one cut, computed once and read by every surface.

The written rule:

1. **The best set** at the primary k: the configurations not shown worse than
   the best, simultaneously over every configuration evaluated
   (:func:`ragdiag.analyses.compare.best`, comparison with the best).
2. **The shortlist**: the best, and the members of the best set *shown* within
   :data:`ragdiag.core.defaults.PRACTICAL_MARGIN` (5 points) of it: the lower end
   of their simultaneous interval to the best (Hsu's comparison with the best)
   is above minus the margin. Not shown worse is not shown as good: a member
   whose interval reaches 20 points below the best may be that much worse, so
   only a loss the data rule out is traded for simplicity. When no other member
   is shown within the margin the data cannot separate the candidates, the
   ``why`` says so, and the pick is the best (the highest estimate), with its
   interval to the runner-up.
3. **The configuration**: the cheapest of the shortlist when its cost was
   measured (:mod:`ragdiag.analyses.cost`: median ms per query), latencies
   counting as equally cheap when one's median is within the other's measured
   spread (its 95th percentile, and at least :data:`COST_TIE`, 25%: timings on a
   shared machine move by that much between runs, so a 2% difference must not
   decide what ships); among equally cheap ones, and
   when nothing was measured, the simplest by a fixed order: retriever
   ``dense < bm25 < hybrid < rerankers < others``, then fewer chunking
   switches (boundaries, header, overlap), then the strategy's name.
4. **The cut** for the goal (at most :data:`ragdiag.core.defaults.DEFAULT_MAX_BLUFF`
   bluffs): the split-conformal cut (:func:`ragdiag.analyses.threshold.conformal_cut`),
   whose guarantee holds for new off-topic queries; when the set has too few
   off-topic queries to certify the goal, the in-sample cut (optimistic, and
   said so); without any off-topic query, the default cut.
5. **The rates at that cut**: answered, lost (answerable but not answered) and
   bluffs, each with its 95% interval (answerable rates over questions with
   the clustered Wilson interval used for recall; bluffs over off-topic
   queries, exact (Clopper-Pearson) at 4 or fewer), and the runner-up's rates at its own cut for
   the same goal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from ..core.defaults import DEFAULT_CUT, DEFAULT_MAX_BLUFF, PRACTICAL_MARGIN, PRIMARY_K
from ..core.gate import Gate
from ..evaluation.rows import RateCell

if TYPE_CHECKING:  # pragma: no cover
    from .cost import CostRow
    from ..evaluation.records import Config, Evaluation

__all__ = ["describe_config", "complexity_key", "Recommendation", "recommend", "STRATEGY_WORDS", "RETRIEVER_WORDS",
           "RULE", "COST_TIE", "cost_tier", "shortlist"]

#: The built-in strategies in words.
STRATEGY_WORDS = {
    "A": "blind 512-char cuts",
    "B": "blind cuts + overlap",
    "C": "paragraph cuts",
    "D": "paragraph cuts + overlap",
    "E": "paragraph cuts + section header",
    "F": "paragraph cuts + section header + overlap",
}
#: The built-in retrievers in words.
RETRIEVER_WORDS = {
    "dense": "dense retrieval",
    "bm25": "BM25",
    "hybrid": "hybrid retrieval",
    "rerank-ce": "hybrid + cross-encoder rerank",
    "rerank-maxsim": "hybrid + word-level rerank",  # MaxSim over token vectors: the glossary says so
}
_RETRIEVER_ORDER = ("dense", "bm25", "hybrid", "rerank-ce", "rerank-maxsim")
#: The rule in words (what ``why`` starts from).
RULE = ("the simplest or cheapest of the best and the members of the best set shown within "
        f"{100 * PRACTICAL_MARGIN:g} points of it at R@{PRIMARY_K} (the lower end of the simultaneous interval to "
        f"the best above -{100 * PRACTICAL_MARGIN:g} points; the interval, not the point estimate): measured cost "
        "when available (median ms per query, equal within each other's measured spread, at least 25%), then "
        "dense < BM25 < hybrid < rerankers, then fewer chunking switches; when no other member is shown within "
        "the margin, the data cannot separate the candidates and the pick is the best")


def _label(config) -> tuple[str, str, str]:
    label = config if isinstance(config, str) else config.label
    strategy, _, retriever = label.partition("/")
    return label, strategy, retriever


def describe_config(config: Config | str) -> str:
    """A configuration in words, e.g. ``"paragraph cuts + section header, hybrid retrieval"`` for ``E/hybrid``.

    Other strategies are described by their switches, other retrievers by
    their registered description (else their name); an external run by its name.

    >>> describe_config("E/hybrid")
    'paragraph cuts + section header, hybrid retrieval'
    >>> describe_config("A/rerank-ce")
    'blind 512-char cuts, hybrid + cross-encoder rerank'
    """
    label, strategy, retriever = _label(config)
    if strategy == "ext":
        return f"external run {retriever}"
    words = STRATEGY_WORDS.get(strategy)
    if words is None:
        from ..index.chunking import STRATEGIES

        s = STRATEGIES.get(strategy)
        words = s.description if s is not None else strategy
    base = retriever.partition("@")[0]
    if retriever in RETRIEVER_WORDS:
        r_words = RETRIEVER_WORDS[retriever]
    elif base == "dense":
        r_words = f"dense retrieval ({retriever.partition('@')[2]})"
    else:
        try:
            from ..retrieval.registry import retriever_spec

            r_words = retriever_spec(retriever).description or retriever
        except ValueError:
            r_words = retriever
    return f"{words}, {r_words}"


def complexity_key(config: Config | str) -> tuple:
    """The fixed order of simplicity: retriever (dense < bm25 < hybrid < rerankers < others), then switches.

    >>> sorted(["E/hybrid", "C/dense", "A/dense", "F/bm25"], key=complexity_key)
    ['A/dense', 'C/dense', 'F/bm25', 'E/hybrid']
    """
    label, strategy, retriever = _label(config)
    base = retriever.partition("@")[0]
    r = _RETRIEVER_ORDER.index(base) if base in _RETRIEVER_ORDER else len(_RETRIEVER_ORDER)
    from ..index.chunking import STRATEGIES

    s = STRATEGIES.get(strategy)
    switches = int(s.boundaries) + int(s.header) + int(s.overlap) if s is not None else 9
    return (r, "@" in retriever, switches, strategy, retriever)


@dataclass(frozen=True)
class Recommendation:
    """The configuration to ship, the cut for the goal and the rates at that cut (see the module's rule)."""

    config: str
    words: str
    why: str
    best_set: tuple[str, ...]
    runner_up: str | None
    k: int
    keep: int
    cut: float
    cut_method: str
    max_bluff: float
    answered: RateCell
    bluffs: RateCell
    lost: RateCell
    runner_up_rates: dict[str, RateCell] | None
    guarantee: str = ""
    best: str = ""
    runner_up_cut: float | None = None
    caution: str = ""  # the cut answers under half of what the retriever finds: what it costs and the next cut

    def sentence(self) -> str:
        """The answer in one sentence, as the screens and the report lead with it (then the caution, if any)."""
        from ..core.words import cut_text, rate_text

        a, b = self.answered, self.bluffs
        head = (f"Ship {self.words} ({self.config}) at cut {cut_text(self.cut)}: {rate_text(a)} of answerable queries "
                f"answered; {b.count} off-topic queries still get sources, {rate_text(b)}.")
        return head + (f" {self.caution}" if self.caution else "")

    def as_json(self) -> dict:
        """The ``recommend --json`` document (rates as ``{count, rate, low, high}``)."""
        return {
            "config": self.config, "words": self.words, "why": self.why, "best": self.best,
            "best_set": list(self.best_set), "runner_up": self.runner_up, "k": self.k, "keep": self.keep,
            "cut": self.cut, "cut_method": self.cut_method, "guarantee": self.guarantee,
            "goal": {"max_bluff": self.max_bluff},
            "answered": self.answered.cells(), "bluffs": self.bluffs.cells(), "lost": self.lost.cells(),
            "runner_up_cut": self.runner_up_cut,
            "runner_up_rates": None if self.runner_up_rates is None
            else {k: v.cells() for k, v in self.runner_up_rates.items()},
            "caution": self.caution,
            "sentence": self.sentence(),
        }




def _pts(x: float) -> str:
    return f"{100 * x:+.0f}"


def _why(chosen: str, top: str, means: Mapping[str, float], k: int, n_members: int, basis: tuple[str, str],
         n_set: int, n_configs: int, rows: Mapping[str, object]) -> str:
    """Why this configuration, in one sentence: shown within the margin of the best (its interval), simplest or cheapest."""
    margin = f"{100 * PRACTICAL_MARGIN:g} points"
    word, detail = basis
    at = f"{100 * means[top]:.0f}% at R@{k}"
    r = rows[chosen]
    interval = f"{_pts(r.estimate)} points ({_pts(r.low)} to {_pts(r.high)}, simultaneous, Hsu's MCB)"
    if chosen != top:
        return (f"{chosen} is shown within {margin} of the best ({top}, {at}): its difference to it is {interval}, "
                f"the lower end above -{margin}; it is the {word} of the {n_members} that are ({detail}).")
    lead = f"its lead over the runner-up ({r.against}) is {interval}"
    if n_members > 1:
        return (f"{chosen} is the best ({at}; {lead}) and the {word} of the {n_members} configurations shown within "
                f"{margin} of it ({detail}).")
    if n_set == 1:
        return f"{chosen} is the best ({at}; {lead}) and the only one not shown worse (simultaneous over all {n_configs})."
    return (f"{chosen} has the highest estimate ({at}; {lead}), but the data cannot separate the {n_set} "
            f"configurations not shown worse than it (of {n_configs}, simultaneous over all): none is shown within "
            f"{margin} of it, so none is traded for simplicity or cost.")


def _rates(ev: Evaluation, config: str, gate: Gate, max_bluff: float):
    """The proposed cut of ``config`` for the bluff goal (:func:`~ragdiag.analyses.threshold.propose_cut`) and the
    three cards at it (:func:`~ragdiag.analyses.threshold.rates_at`)."""
    from .gate_table import gate_table
    from .threshold import Goal, propose_cut, rates_at

    table = gate_table(ev, config, gate)
    p = propose_cut(table, Goal(max_bluff=max_bluff), default=DEFAULT_CUT)
    return p.cut, p.method, p.guarantee, rates_at(table, p.cut), table


def _caution(table, cut: float, answered: RateCell, max_bluff: float) -> str:
    """When the cut answers under half of the answerable queries the retriever finds (needle in its top k):
    what the cut costs in answers, and the next cut where an outcome changes (what it would give)."""
    from ..core.words import cut_text, rate_text
    from .threshold import Goal
    from .threshold.proposal import candidates

    found = int(table.reached.sum()) if table.reached is not None else 0
    if not found or answered.count * 2 >= found:
        return ""
    words = (f"Caution: the safety cut costs {found - answered.count} of the {found} answers the retriever finds "
             f"(answered {answered.count}).")
    nxt = [c for c in candidates(table, Goal(max_bluff=max_bluff), cut, more=1) if not c.proposed]
    if nxt:
        c = nxt[0]
        g = "" if c.guarantee is None else f"; new off-topic queries would bluff up to {c.guarantee:.1%}"
        words += (f" The next cut, {cut_text(c.cut)}, answers {rate_text(c.answered)} with {c.bluffs.count} "
                  f"off-topic queries given sources{g}.")
    return words


def shortlist(result) -> list[str]:
    """The rule's shortlist from a comparison with the best: the best, and the members shown within the margin.

    Shown within: the lower end of the simultaneous interval to the best is above
    ``-PRACTICAL_MARGIN`` (non-inferiority shown, not a point estimate within the
    margin; float tolerance at the margin itself). Best-set order.
    """
    rows = {r.config: r for r in result.rows}
    return [m for m in result.best_set if m == result.best or rows[m].low >= -PRACTICAL_MARGIN - 1e-12]


#: Median latencies within this ratio of each other count as equally cheap (run-to-run noise on a shared machine).
COST_TIE = 0.25


def cost_tier(latency_ms: float, cheapest_ms: float) -> int:
    """The cost step of a latency: 0 within :data:`COST_TIE` of the cheapest, then one step per further 25%.

    >>> [cost_tier(x, 10.0) for x in (10.0, 12.4, 12.6, 16.0, 100.0)]
    [0, 0, 1, 2, 10]
    """
    if cheapest_ms <= 0 or latency_ms <= cheapest_ms:
        return 0
    return int(np.floor(np.log(latency_ms / cheapest_ms) / np.log1p(COST_TIE) + 1e-12))


def _measured(costs: Sequence[CostRow] | None, members: Sequence[str]) -> Mapping[str, int] | None:
    """Each member's cost tier, or None unless every member's latency was measured.

    Tier 0: the cheapest by median and every member whose median is within its measured
    spread (its 95th percentile) or :data:`COST_TIE` of it, whichever is wider; then one
    step per further 25% (:func:`cost_tier`) past that band.
    """
    if not costs:
        return None
    by = {c.config: c for c in costs}
    if not all(m in by and np.isfinite(by[m].latency_median_ms) for m in members):
        return None
    cheapest = min(members, key=lambda m: by[m].latency_median_ms)
    base = by[cheapest].latency_median_ms
    p95 = by[cheapest].latency_p95_ms
    band = max(base * (1 + COST_TIE), p95 if np.isfinite(p95) else 0.0)
    return {m: 0 if by[m].latency_median_ms <= band else 1 + cost_tier(by[m].latency_median_ms, band)
            for m in members}


def recommend(ev: Evaluation, gate: Gate | None = None, *, max_bluff: float = DEFAULT_MAX_BLUFF,
              costs: Sequence[CostRow] | None = None, best_result=None) -> Recommendation:
    """The configuration to ship and its cut, by the module's written rule.

    Parameters
    ----------
    ev : Evaluation
        Only ragdiag configurations are candidates (external runs are compared, not shipped).
    gate : Gate, optional
        Its ``k`` (recall at which configurations are compared) and ``keep``; its cut is what this decides
        (the proposed cut for the bluff goal). Default :class:`~ragdiag.core.gate.Gate`.
    costs : sequence of CostRow, optional
        Measured costs (:func:`ragdiag.analyses.cost.costs`); used when every member of the best set was timed.
    best_result : BestResult, optional
        :func:`ragdiag.analyses.compare.best` of the same evaluation at ``k`` over its ragdiag configurations,
        when the caller already has it (the report and the Compare page draw it too).
    """
    if not 0 < max_bluff < 1:
        raise ValueError(f"max_bluff must be a rate in (0, 1), got {max_bluff}")
    from ..core.validate import require_type
    from .compare import best
    from .threshold.choice import NO_OOD_METHOD

    gate = Gate() if gate is None else require_type(gate, Gate, "gate", hint="e.g. Gate(keep=4)")
    k, keep = gate.k, gate.keep

    configs = [c for c in ev.results if not c.external]
    if not configs:
        raise ValueError("no ragdiag configuration was evaluated: nothing to recommend")
    result = best_result if best_result is not None else best(ev, k=k, configs=configs)
    if result.k != k or {r.config for r in result.rows} != {c.label for c in configs}:
        raise ValueError("best_result must be the comparison with the best at this k over every ragdiag configuration")
    means = {r.config: r.mean for r in result.rows}
    rows = {r.config: r for r in result.rows}
    members = shortlist(result)
    measured = _measured(costs, members)
    if measured is not None:
        order = sorted(members, key=lambda m: (measured[m], complexity_key(m)))
        basis = ("cheapest", "by measured cost; latencies within the cheapest's measured spread (its 95th percentile, "
                             f"at least {COST_TIE:.0%}) count as equal, then the simplest")
    else:
        order = sorted(members, key=complexity_key)
        basis = ("simplest", "no measured cost; dense < BM25 < hybrid < rerankers")
    chosen = order[0]
    if len(order) > 1:
        runner = order[1]
    else:
        others = {c: m for c, m in means.items() if c != chosen}
        runner = min(others, key=lambda c: (-others[c], complexity_key(c))) if others else None
    cut, method, guarantee, rates, table = _rates(ev, chosen, gate, max_bluff)
    runner_rates = runner_cut = None
    if runner is not None:
        runner_cut, _, _, runner_rates, _ = _rates(ev, runner, gate, max_bluff)
    why = _why(chosen, result.best, means, k, len(members), basis, len(result.best_set), len(configs), rows)
    if len(members) == 1 and len(result.best_set) > 1:  # the worst case of the margin, said before the cut
        from .trade import trade_words

        why += (" " + trade_words(result)).rstrip()
    why += " Cut: " + method + (f" for at most {max_bluff:.0%} bluffs" if method != NO_OOD_METHOD else "") + "."
    return Recommendation(chosen, describe_config(chosen), why, result.best_set, runner, k, keep, float(cut), method,
                          max_bluff, rates["answered"], rates["bluffs"], rates["lost"], runner_rates, guarantee,
                          result.best, runner_cut, _caution(table, cut, rates["answered"], max_bluff))
