"""What to ship: one configuration and one cut, computed once and read by every surface.

The decision is made on what a product owner reads: the share of answerable
queries **answered at each configuration's own proposed cut** for the bluff
goal (:func:`answered_at_cut`). Recall@k stays the diagnostic of why a
question is lost (the retriever never found it, or the cut refused it).

The written rule:

1. **The best set** on answered-at-cut: the configurations not shown worse than
   the best, simultaneously over every configuration evaluated
   (:func:`ragdiag.analyses.compare.best_of`, comparison with the best, on the
   per-query outcome "answered at this configuration's cut"; ties in the
   estimate go to the simplest). The cut for a bluff goal is read off the
   off-topic queries alone (conformal, or in sample when too few to certify,
   or the default without any), so, given the off-topic set, "answered at the
   cut" is an outcome of each answerable question and the paired, clustered
   machinery applies; the intervals are conditional on the off-topic set
   (another set of off-topic queries gives other cuts, which they do not count).
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
   said so); without any off-topic query, the default cut. The same cut the
   comparison of step 1 was made at.
5. **The rates at that cut**: answered, lost (answerable but not answered) and
   bluffs, each with its 95% interval (answerable rates over questions with
   the clustered Wilson interval used for recall; bluffs over off-topic
   queries, exact (Clopper-Pearson) at 4 or fewer), and the runner-up's rates at its own cut for
   the same goal.
6. **Both goals** (``min_answered``, optional): the shortlist keeps the members answering at least
   that share at their own cut; when even the best misses it, no configuration can meet both goals
   and the ``verdict`` says so, with the best's answered share and interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from ..core.defaults import DEFAULT_CUT, DEFAULT_MAX_BLUFF, PRACTICAL_MARGIN
from ..core.gate import Gate, OnGate
from ..core.goal import Goal, OnGoal, within_at_least
from ..evaluation.rows import RateCell
from ..core.words import cut_text, difference_text, pct

if TYPE_CHECKING:  # pragma: no cover
    from .compare.best import BestResult
    from .cost import CostRow
    from .gate_table import GateTable
    from ..evaluation.records import Config, Evaluation

__all__ = ["describe_config", "complexity_key", "Recommendation", "recommend", "STRATEGY_WORDS", "RETRIEVER_WORDS",
           "RULE", "COST_TIE", "cost_tier", "shortlist", "AtCut", "answered_at_cut", "compare_answered",
           "decision_measure"]

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
        f"{100 * PRACTICAL_MARGIN:g} points of it in the share of answerable queries answered at each "
        "configuration's own cut for the bluff goal (the lower end of the simultaneous interval to "
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
class Recommendation(OnGate, OnGoal):
    """The configuration to ship, the gate it ships at (the cut for the goal, the keep, the k of its recall) and
    the rates at that cut (see the module's rule); ``cut``, ``keep`` and ``k`` read through ``gate``."""

    config: str
    words: str
    why: str
    best_set: tuple[str, ...]
    runner_up: str | None
    gate: Gate
    cut_method: str
    goal: Goal  # the bluff goal the cut follows and, when stated, the answered goal the shortlist must meet
    answered: RateCell
    bluffs: RateCell
    lost: RateCell
    runner_up_rates: dict[str, RateCell] | None
    guarantee: str = ""
    best: str = ""
    runner_up_cut: float | None = None
    caution: str = ""  # the cut answers under half of what the retriever finds: what it costs and the next cut
    measure: str = ""  # what the configurations were compared on, in words (decision_measure)
    comparison: BestResult | None = None  # the comparison with the best on that measure (compare_answered)
    cuts: Mapping[str, float] | None = None  # every candidate's own cut for the goal, the one it was compared at
    recall: RateCell | None = None  # the pick's R@k (the diagnostic: found before the gate), clustered interval
    feasible: bool | None = None  # whether the pick meets both goals at its cut (None: no answered goal)
    verdict: str = ""  # with an answered goal: whether both goals can be met, in one sentence

    def sentence(self) -> str:
        """The answer in one sentence, as the screens and the report lead with it (then the caution, if any)."""
        from ..core.words import rate_text, ship_headline

        a, b = self.answered, self.bluffs
        head = (f"{ship_headline(f'{self.words} ({self.config})', self.cut)}: {rate_text(a)} of answerable queries "
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
            "decided_on": self.measure,
            "min_answered": self.min_answered, "feasible": self.feasible, "verdict": self.verdict,
            "recall_at_k": None if self.recall is None else self.recall.cells(),
            "comparison": None if self.comparison is None else _comparison_json(self.comparison, self.cuts or {}),
            "sentence": self.sentence(),
        }


def _comparison_json(result: BestResult, cuts: Mapping[str, float]) -> dict:
    """The comparison the pick was decided on: each candidate's answered share at its own cut, its difference to
    the best (simultaneous, Hsu's MCB) and whether it is in the best set, highest first."""
    return {"metric": result.metric, "critical_value": result.critical, "method": result.method,
            "n_questions": result.n_questions,
            "rows": [{"config": r.config, "answered": r.mean, "cut": cuts.get(r.config),
                      "difference_to_best": r.difference(), "against": r.against, "in_best_set": r.in_best_set}
                     for r in sorted(result.rows, key=lambda r: -r.mean)]}




def _why(chosen: str, top: str, means: Mapping[str, float], k: int, n_members: int, basis: tuple[str, str],
         n_set: int, n_configs: int, rows: Mapping[str, object]) -> str:
    """Why this configuration, in one sentence: shown within the margin of the best (its interval), simplest or cheapest."""
    margin = f"{100 * PRACTICAL_MARGIN:g} points"
    word, detail = basis
    at = f"{pct(means[top])} answered at its own cut"
    r = rows[chosen]
    interval = f"{difference_text(r)}, simultaneous (Hsu's MCB)"  # "+6 pts (−11 to +22)", as every difference
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


@dataclass(frozen=True, eq=False)
class AtCut(OnGoal):
    """One configuration at its own proposed cut for the bluff goal: the cut, how it was had, the cards, the table,
    and the goal the cut follows (its ``max_bluff`` reads through it)."""

    config: str
    cut: float
    method: str
    guarantee: str
    rates: Mapping[str, RateCell]
    table: GateTable
    goal: Goal

    def answered(self) -> np.ndarray:
        """Per answerable query (in the evaluation's order): 1.0 when answered at this cut, else 0.0."""
        t = self.table
        return t.answered(self.cut)[t.in_domain].astype(np.float64)


def decision_measure(max_bluff: float) -> str:
    """What configurations are compared on, in words.

    >>> decision_measure(0.05)
    'answered at its own cut for at most 5% bluffs'
    """
    return f"answered at its own cut for at most {pct(max_bluff, None)} bluffs"


def _at_cut(ev: Evaluation, config: str, gate: Gate, max_bluff: float) -> AtCut:
    """The proposed cut of ``config`` for the bluff goal (:func:`~ragdiag.analyses.threshold.propose_cut`) and the
    three cards at it (:func:`~ragdiag.analyses.threshold.rates_at`)."""
    from .gate_table import gate_table
    from .threshold import propose_cut, rates_at

    table = gate_table(ev, config, gate)
    goal = Goal(max_bluff=max_bluff)
    p = propose_cut(table, goal, default=DEFAULT_CUT)
    return AtCut(table.config, float(p.cut), p.method, p.guarantee, rates_at(table, p.cut), table, goal)


def answered_at_cut(ev: Evaluation, gate: Gate | None = None, *, max_bluff: float = DEFAULT_MAX_BLUFF,
                    configs: Sequence[Config | str] | None = None) -> dict[str, AtCut]:
    """Every configuration (default: the evaluation's ragdiag ones) at its own proposed cut for the bluff goal.

    The cut for a bluff goal is read off the off-topic queries alone (conformal,
    in sample when too few to certify, the default without any): the answerable
    queries do not move it, so "answered at the cut" is a per-query outcome,
    paired across configurations by query, given the off-topic set.
    """
    from ..core.validate import require_type

    gate = Gate() if gate is None else require_type(gate, Gate, "gate", hint="e.g. Gate(keep=4)")
    labels = [ev.result(c).config.label for c in (configs if configs is not None
                                                     else [c for c in ev.results if not c.external])]
    return {label: _at_cut(ev, label, gate, max_bluff) for label in labels}


def compare_answered(ev: Evaluation, at: Mapping[str, AtCut], *, k: int) -> BestResult:
    """Comparison with the best (Hsu's MCB, studentized, over questions) on answered-at-own-cut.

    The candidates are ordered simplest first (:func:`complexity_key`), so a tie
    in the estimate goes to the simplest.
    """
    from dataclasses import replace

    from .compare import best_of

    labels = sorted(at, key=complexity_key)
    if not labels:
        raise ValueError("no configuration to compare")
    goals = {at[c].max_bluff for c in labels}
    if len(goals) != 1:
        raise ValueError(f"every configuration must be at its cut for the same bluff goal, got {sorted(goals)}")
    values = np.array([at[c].answered() for c in labels], dtype=np.float64)
    groups = ev.groups(ev.in_domain)
    return replace(best_of(values, groups, labels, k=k), metric=decision_measure(goals.pop()))


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
        g = "" if c.guarantee is None else f"; new off-topic queries would bluff up to {pct(c.guarantee, 1)}"
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


def _feasible(at: Mapping[str, AtCut], members: Sequence[str], best: str, min_answered: float | None
              ) -> tuple[list[str], bool | None, str]:
    """With an answered goal: the shortlist's members that meet it at their own cut (the best alone when none
    does), whether the pick can meet both goals, and the verdict in words ("" without a goal).

    The best answers the most at its own cut, so when it misses the answered goal every configuration does.
    """
    from ..core.words import rate_text

    if min_answered is None:
        return list(members), None, ""
    meets = lambda c: within_at_least(at[c].rates["answered"].rate or 0.0, min_answered)  # noqa: E731
    goal = f"at least {pct(min_answered, None)} answered and at most {pct(at[best].max_bluff, None)} bluffs"
    if not meets(best):
        a = at[best].rates["answered"]
        return [best], False, (f"No configuration meets both goals ({goal}): at {pct(at[best].max_bluff, None)} bluffs "
                               f"the best, {best}, answers {rate_text(a)} at strictness "
                               f"{cut_text(at[best].cut)}; no cut on "
                               "this score separates the off-topic questions from enough answerable ones here.")
    kept = [m for m in members if meets(m)]
    dropped = [m for m in members if m not in kept]
    return kept, True, (f"Both goals ({goal}) are met at the pick's cut"
                        + (f"; set aside for missing the answered goal: {', '.join(dropped)}" if dropped else "")
                        + ".")


def recommend(ev: Evaluation, gate: Gate | None = None, *, max_bluff: float = DEFAULT_MAX_BLUFF,
              costs: Sequence[CostRow] | None = None, best_result=None,
              min_answered: float | None = None, goal: Goal | None = None) -> Recommendation:
    """The configuration to ship and its cut, by the module's written rule.

    Parameters
    ----------
    ev : Evaluation
        Only ragdiag configurations are candidates (external runs are compared, not shipped).
    gate : Gate, optional
        Its ``k`` (the rank the retriever must find the needle in; the gate looks at ``Gate.window`` (the smaller of ``k`` and ``keep``)) and
        ``keep``; its cut is what this decides (the proposed cut for the bluff goal, per configuration).
        Default :class:`~ragdiag.core.gate.Gate`.
    costs : sequence of CostRow, optional
        Measured costs (:func:`ragdiag.analyses.cost.costs`); used when every member of the best set was timed.
    best_result : BestResult, optional
        :func:`compare_answered` of the same evaluation, gate and goal over its ragdiag configurations, when the
        caller already has it (``Recommendation.comparison`` of an earlier call). A comparison on another measure
        (recall at k, from :func:`ragdiag.analyses.compare.best`) is refused: the decision is on answered-at-cut.
    min_answered : float, optional
        An answered goal beside the bluff goal: the shortlist keeps the members that meet it at their own cut;
        when even the best misses it, no configuration can meet both, the ``verdict`` says so (with the best's
        answered share and interval) and ``feasible`` is False.
    goal : Goal, optional
        Both goals as one value (instead of ``max_bluff`` and ``min_answered``); its bluff goal must be in (0, 1)
        (:meth:`~ragdiag.core.goal.Goal.recommending`).
    """
    goal = (Goal.recommending(max_bluff, min_answered) if goal is None
            else Goal.recommending(goal.max_bluff, goal.min_answered, goal.bluff_cost))
    max_bluff, min_answered = goal.max_bluff, goal.min_answered
    from ..core.validate import require_type
    from .compare import clustered_rate
    from .threshold.choice import NO_OOD_METHOD
    from ..core.metrics import hits_at_k

    gate = Gate() if gate is None else require_type(gate, Gate, "gate", hint="e.g. Gate(keep=4)")
    k, keep = gate.k, gate.keep

    configs = [c for c in ev.results if not c.external]
    if not configs:
        raise ValueError("no ragdiag configuration was evaluated: nothing to recommend")
    at = answered_at_cut(ev, gate, max_bluff=max_bluff, configs=configs)
    result = best_result if best_result is not None else compare_answered(ev, at, k=k)
    if (result.k != k or {r.config for r in result.rows} != {c.label for c in configs}
            or result.metric != decision_measure(max_bluff)):
        raise ValueError("best_result must be the comparison with the best on answered at each configuration's own "
                         f"cut ({decision_measure(max_bluff)}, compare_answered) at this k over every ragdiag "
                         f"configuration; got {result.metric or f'R@{result.k}'}")
    means = {r.config: r.mean for r in result.rows}
    rows = {r.config: r for r in result.rows}
    members, feasible, verdict = _feasible(at, shortlist(result), result.best, min_answered)
    measured = _measured(costs, members)
    if measured is not None:
        order = sorted(members, key=lambda m: (measured[m], complexity_key(m)))
        basis = ("cheapest", "by measured cost; latencies within the cheapest's measured spread (its 95th percentile, "
                             f"at least {pct(COST_TIE)}) count as equal, then the simplest")
    else:
        order = sorted(members, key=complexity_key)
        basis = ("simplest", "no measured cost; dense < BM25 < hybrid < rerankers")
    chosen = order[0]
    if len(order) > 1:
        runner = order[1]
    else:
        others = {c: m for c, m in means.items() if c != chosen}
        runner = min(others, key=lambda c: (-others[c], complexity_key(c))) if others else None
    mine = at[chosen]
    cut, method, guarantee, rates, table = mine.cut, mine.method, mine.guarantee, mine.rates, mine.table
    runner_rates = runner_cut = None
    if runner is not None:
        runner_cut, runner_rates = at[runner].cut, dict(at[runner].rates)
    why = _why(chosen, result.best, means, k, len(members), basis, len(result.best_set), len(configs), rows)
    if len(members) == 1 and len(result.best_set) > 1:  # the worst case of the margin, said before the cut
        from .trade import trade_words

        why += (" " + trade_words(result)).rstrip()
    why += " Cut: " + method + (f" for at most {pct(max_bluff)} bluffs" if method != NO_OOD_METHOD else "") + "."
    ind = ev.in_domain
    recall = RateCell.of(clustered_rate(hits_at_k(ev.result(chosen).needle_rank[ind], k), ev.groups(ind)))
    return Recommendation(chosen, describe_config(chosen), why, result.best_set, runner, Gate(keep=keep, cut=float(cut), k=k),
                          method,
                          goal, rates["answered"], rates["bluffs"], rates["lost"], runner_rates, guarantee,
                          result.best, runner_cut, _caution(table, cut, rates["answered"], max_bluff),
                          decision_measure(max_bluff), result, {c: a.cut for c, a in at.items()}, recall,
                          feasible, verdict)
