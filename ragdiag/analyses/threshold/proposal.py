"""What a proposed cut costs, what the next cuts would give, who decides it, and the cut a team already runs.

A proposal is accepted when it states both sides: the answers it loses as
well as the bluffs it avoids. This module adds, around
:func:`~ragdiag.analyses.threshold.choice.propose_cut`:

* :func:`candidates` -- the proposed cut and the next cuts where an outcome
  changes (each next off-topic distance lets one more off-topic query through):
  answered and bluffs with intervals, the conformal guarantee of each, and
  whether it meets the goal;
* :func:`sensitivity` -- the off-topic queries that alone move the cut (leave
  one out), by name: the query may not be off-topic at all;
* :func:`cost_cut` -- the cut that minimises ``N x bluffs + lost`` when "a
  bluff costs as much as N lost answers" (scikit-learn's cost-sensitive
  threshold tuning), cross-validated over questions, with a bound on its bluff
  rate that holds after the choice (:func:`cost_bound`: a DKW band over every cut);
* :func:`audit` -- the cut a team runs today (a distance, or a similarity
  ``s`` read as the distance ``1 - s``) against the proposal, query by query.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ...core.defaults import SEED
from ...core.gate import MAX_CUT, check_cut, cut_text, floor_cut
from ...core.goal import GoalError, OnGoal
from ...core.words import pct, rate_text
from ...evaluation.rows import RateCell
from ..gate_table import GateTable
from .choice import Goal, _folds, _subset
from .rates import rate_rows, rates_at
from .today import VersusProposed, moved_queries

__all__ = ["Candidate", "candidates", "Mover", "sensitivity", "CostChoice", "cost_cut", "cost_bound", "COST_CONFIDENCE", "CurrentCut", "audit",
           "cut_from_units", "cut_from_file", "UNITS", "MOVES_AT_LEAST"]

#: The units a team's own cut can be given in: a cosine distance, or a cosine similarity (distance = 1 - s).
UNITS = ("distance", "similarity")
#: A leave-one-out move of the cut that changes answered by at least this share is named.
MOVES_AT_LEAST = 0.05


def _ood_sorted(table: GateTable) -> tuple[np.ndarray, np.ndarray]:
    ood = np.flatnonzero(~table.in_domain)
    order = np.argsort(table.closest[ood], kind="stable")
    return ood[order], table.closest[ood][order]


def _guarantee(j: int, n: int) -> float | None:
    """The conformal bound j / (n + 1) of a cut at the j-th smallest of n off-topic distances (None: n = 0)."""
    return None if n == 0 else j / (n + 1)


@dataclass(frozen=True)
class Candidate:
    """One cut a person could take: its rates, its conformal guarantee and whether it meets the goal."""

    cut: float
    answered: RateCell
    bluffs: RateCell
    lost: RateCell
    guarantee: float | None  # at most this share of new off-topic queries bluffs (conformal, j / (n + 1))
    meets_goal: bool
    proposed: bool = False

    def cells(self) -> dict:
        return {"cut": self.cut, "answered": self.answered.cells(), "bluffs": self.bluffs.cells(),
                "lost": self.lost.cells(), "guarantee": self.guarantee, "meets_goal": self.meets_goal,
                "proposed": self.proposed}

    def words(self) -> str:
        g = ("no guarantee" if self.guarantee is None else
             f"new off-topic queries bluff at most {pct(self.guarantee, 1)}")
        return (f"cut {cut_text(self.cut)}: answered {rate_text(self.answered)}, bluffs {rate_text(self.bluffs)}; "
                f"{g}; {'meets' if self.meets_goal else 'misses'} the goal")


def _candidate(table: GateTable, cut: float, j: int, goal: Goal, proposed: bool = False) -> Candidate:
    r = rates_at(table, cut)
    n = table.n_ood
    g = _guarantee(j, n)
    meets = goal.bluffs_met(g) if goal.max_bluff is not None else goal.answered_met(r["answered"].rate)
    return Candidate(cut, r["answered"], r["bluffs"], r["lost"], g, meets, proposed)


def candidates(table: GateTable, goal: Goal, proposed: float | None, *, more: int = 3) -> tuple[Candidate, ...]:
    """The proposed cut and the ``more`` next cuts where an outcome changes, in increasing order.

    Each next cut sits on the next off-topic distance (rounded down, so it lets
    exactly one more off-topic query through than the cut before it, and more
    answers); its guarantee is the conformal bound ``j / (n + 1)`` of the
    ``j``-th smallest of the ``n`` off-topic distances. With no proposed cut
    (no cut meets the goal) the table starts at the smallest off-topic distance.

    >>> t = GateTable(("a", "b", "o1", "o2", "o3"), np.array([True, True, False, False, False]),
    ...               closest=np.array([0.2, 0.3, 0.25, 0.4, 0.9]),
    ...               closest_holder=np.array([0.2, 0.35, np.inf, np.inf, np.inf]), window=4)
    >>> [(c.cut, c.answered.count, c.bluffs.count) for c in candidates(t, Goal(max_bluff=0.25), 0.25, more=2)]
    [(0.25, 1, 0), (0.4, 2, 1), (0.9, 2, 2)]
    """
    _, ood = _ood_sorted(table)
    n = ood.size
    out = []
    # a cut that lets t off-topic queries through sits at or under the (t+1)-th smallest: guarantee (t+1) / (n+1)
    if proposed is not None:
        t = int(np.searchsorted(ood, proposed, side="left"))
        out.append(_candidate(table, proposed, t + 1, goal, True))
        last = proposed
    else:
        t, last = -1, -1.0
    while len(out) < more + (proposed is not None) and t < n:
        t += 1  # let the t smallest through, not the (t+1)-th
        cut = floor_cut(float(ood[t])) if t < n else MAX_CUT
        if (t and cut <= ood[t - 1]) or cut <= last:  # the 0.001 grid cannot separate them: no cut between
            continue
        out.append(_candidate(table, cut, t + 1, goal))
        last = cut
    return tuple(out)


@dataclass(frozen=True)
class Mover:
    """An off-topic query that alone moves the proposed cut: without it the cut (and answered) would be this."""

    query_id: str
    distance: float
    cut_without: float
    answered_without: RateCell
    answered_with: RateCell

    def words(self, cut: float) -> str:
        return (f"{self.query_id} alone moves the cut from {cut_text(self.cut_without)} to {cut_text(cut)} "
                f"(answered {rate_text(self.answered_without)} without it, {rate_text(self.answered_with)} with it): "
                "inspect it, it may not be off-topic at all")


def sensitivity(table: GateTable, goal: Goal, proposed: float | None, *,
                at_least: float = MOVES_AT_LEAST) -> tuple[Mover, ...]:
    """Off-topic queries whose removal alone moves the proposed cut enough to change answered by ``at_least``.

    Leave one out: for each off-topic query at or under the proposed cut (only
    those can set it), the proposal is recomputed without it.
    """
    from .choice import propose_cut

    if proposed is None or goal.max_bluff is None:
        return ()
    ids, ood = _ood_sorted(table)
    with_it = rates_at(table, proposed)["answered"]
    out = []
    for i, d in zip(ids, ood):
        if d > proposed + 1e-12 and d != ood[0]:
            break
        keep = np.ones(len(table.query_ids), dtype=bool)
        keep[i] = False
        p = propose_cut(_subset(table, keep), goal)
        if p.cut is None or p.cut == proposed:
            continue
        without = rates_at(table, p.cut)["answered"]
        if abs((without.rate or 0.0) - (with_it.rate or 0.0)) >= at_least - 1e-12:
            out.append(Mover(table.query_ids[i], float(d), float(p.cut), without, with_it))
    return tuple(out)


@dataclass(frozen=True)
class CostChoice(OnGoal):
    """The cut that minimises ``bluff_cost x bluffs + lost`` over the ground truth's queries, for the goal it holds
    whole (its cost goal ``bluff_cost`` reads through it)."""

    goal: Goal
    cut: float
    cost: float
    answered: RateCell
    bluffs: RateCell
    lost: RateCell
    guarantee: float | None
    guarantee_words: str
    cross_validated: Mapping[str, RateCell]
    cv_cost: float
    folds: int
    seed: int

    def cells(self) -> dict:
        return {"bluff_cost": self.bluff_cost, "cut": self.cut, "cost": self.cost,
                "answered": self.answered.cells(), "bluffs": self.bluffs.cells(), "lost": self.lost.cells(),
                "guarantee": self.guarantee, "guarantee_words": self.guarantee_words,
                "cross_validated": {k: v.cells() for k, v in self.cross_validated.items()},
                "cross_validated_cost": self.cv_cost, "folds": self.folds, "seed": self.seed}


def _cost_cuts(table: GateTable) -> np.ndarray:
    # The cost changes only where a distance is crossed: just above each one (on the 0.001 grid, rounded up) and 0.
    from ...core.gate import ceil_cut

    values = np.concatenate([table.closest, table.closest_holder])
    values = values[np.isfinite(values)]
    grid = {0.0, *(ceil_cut(math.nextafter(float(v), math.inf)) for v in values)}
    return np.array(sorted(c for c in grid if c <= MAX_CUT))


def _best_cost(table: GateTable, bluff_cost: float) -> tuple[float, float]:
    cuts = _cost_cuts(table)
    ind = table.in_domain
    from ...core.gate import under_each

    answered = under_each(table.closest_holder[ind], cuts).sum(axis=1)
    bluffs = under_each(table.closest[~ind], cuts).sum(axis=1)
    cost = bluff_cost * bluffs + (ind.sum() - answered)
    i = int(np.argmin(cost))  # the first minimum: the lowest such cut (the fewest bluffs among equals)
    return float(cuts[i]), float(cost[i])


#: Confidence of the cost cut's bluff bound (one-sided).
COST_CONFIDENCE = 0.95


def cost_bound(j: int, n: int, confidence: float = COST_CONFIDENCE) -> tuple[float | None, str]:
    """A bound on a new off-topic query's bluff chance that holds *after* the cut was chosen on these queries.

    The cost cut is chosen after seeing the off-topic distances, so the
    conformal bound ``(j+1)/(n+1)`` of a cut fixed in advance does not hold for
    it (its true bluff rate exceeded that bound in most simulated sets). The
    one-sided Dvoretzky-Kiefer-Wolfowitz band (Massart's constant) holds for
    every cut at once: with probability ``confidence`` over the set of ``n``
    off-topic queries, the chance that a new one falls under *any* cut is at
    most the share of the set under it plus
    :math:`\\varepsilon = \\sqrt{\\ln(1/\\alpha) / (2n)}`, so it holds for the cut
    the cost chose too. Checked through :func:`cost_cut` by simulation
    (``tests/slow/test_cost_bound.py``).

    >>> g, words = cost_bound(1, 30); round(g, 3)
    0.257
    >>> print(words)
    in sample 1 of 30 off-topic queries bluff at this cut (chosen on them: no conformal guarantee); whatever cut is chosen on them, a new off-topic query bluffs with probability at most 1/30 + 22.3% = 25.7% (95% confidence, one-sided DKW band)
    """
    if n == 0:
        return None, "no off-topic queries: the bluff rate cannot be measured"
    eps = math.sqrt(math.log(1.0 / (1.0 - confidence)) / (2.0 * n))
    g = min(1.0, j / n + eps)
    return g, (f"in sample {j} of {n} off-topic queries bluff at this cut (chosen on them: no conformal guarantee); "
               f"whatever cut is chosen on them, a new off-topic query bluffs with probability at most "
               f"{j}/{n} + {pct(eps, 1)} = {pct(g, 1)} ({pct(confidence)} confidence, one-sided DKW band)")


def cost_goal_of(goal: Goal) -> float:
    """The cost goal of ``goal`` (a bluff costs that many lost answers), or :class:`GoalError` when it states none.

    >>> cost_goal_of(Goal(max_bluff=0.05, bluff_cost=3))
    3.0
    """
    from ...core.validate import require_type

    require_type(goal, Goal, "goal", hint="e.g. Goal(max_bluff=0.05, bluff_cost=3.0)")
    if goal.bluff_cost is None:
        raise GoalError("the goal states no cost goal: give bluff_cost (a bluff costs as much as that many lost "
                        "answers), e.g. Goal(max_bluff=0.05, bluff_cost=3.0)")
    return goal.bluff_cost


def cost_cut(table: GateTable, goal: Goal, *, folds: int = 5, seed: int | None = None) -> CostChoice:
    """The cut minimising the expected cost when a bluff costs ``goal.bluff_cost`` lost answers (the goal's cost
    goal, :func:`cost_goal_of`), with its uncertainty.

    The cost is counted over the ground truth's queries as written:
    ``bluff_cost x (off-topic queries given sources) + (answerable queries not
    answered)``; the cut searched is every cut where a count changes (just above
    each distance, on the 0.001 grid), the lowest on ties. Its uncertainty is a
    question-grouped cross-validation: each fold's cut is chosen on the others
    and applied to it. Its bluff bound (:func:`cost_bound`) holds after the
    choice: the cut was chosen on these off-topic queries, so the conformal
    bound of a cut fixed in advance would not.

    >>> t = GateTable(("a", "b", "o1"), np.array([True, True, False]), closest=np.array([0.2, 0.3, 0.25]),
    ...               closest_holder=np.array([0.2, 0.3, np.inf]), window=4)
    >>> cost = lambda c: Goal(max_bluff=0.05, bluff_cost=c)
    >>> cost_cut(t, cost(3.0), folds=2).cut, cost_cut(t, cost(0.5), folds=2).cut  # one bluff against one answer
    (0.201, 0.301)
    """
    bluff_cost = cost_goal_of(goal)
    seed = SEED if seed is None else seed
    cut, cost = _best_cost(table, bluff_cost)
    r = rates_at(table, cut)
    _, ood = _ood_sorted(table)
    j = int(np.searchsorted(ood, cut, side="left"))  # off-topic queries given sources at this cut
    n = ood.size
    g, words = cost_bound(j, n)
    # cross-validated over questions
    ind = table.in_domain
    answered, kept = cross_validated(_folds(table, folds, seed), folds,
                                     lambda train: _best_cost(_subset(table, train), bluff_cost)[0],
                                     table.answered, table.given_sources)
    from .choice import _answerable_cells
    from ..compare.intervals import rate_interval

    cells = _answerable_cells(table, answered[ind][None, :], kept[ind][None, :])
    cv = {k: RateCell.of(v[0]) for k, v in cells.items()}
    cv["bluffs"] = RateCell.of(rate_interval(int(kept[~ind].sum()), int((~ind).sum())))
    return CostChoice(goal, cut, cost, r["answered"], r["bluffs"], r["lost"], g, words, cv,
                      cv_cost(bluff_cost, ind, answered, kept), folds, seed)


def cross_validated(fold: np.ndarray, folds: int, choose: Callable[[np.ndarray], float],
                    answered: Callable[[float], np.ndarray],
                    given_sources: Callable[[float], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per query, ``(answered, given sources)`` at its fold's cut: ``choose(train)``, a cut chosen on the queries
    of the other folds (``train``, a mask), applied to the fold's own queries (``fold``: each query's fold).

    >>> at = lambda c: np.array([0.1, 0.2, 0.3, 0.4]) < c
    >>> a, _ = cross_validated(np.array([0, 0, 1, 1]), 2, lambda train: 0.35 if train[0] else 0.15, at, at)
    >>> a.tolist()  # fold 0 is cut at 0.15 (chosen on fold 1), fold 1 at 0.35
    [True, False, True, False]
    """
    answered_out = np.zeros(fold.size, dtype=bool)
    given_out = np.zeros(fold.size, dtype=bool)
    for f in range(folds):
        train, test = fold != f, fold == f
        if not test.any():
            continue
        c = choose(train)
        answered_out[test] = answered(c)[test]
        given_out[test] = given_sources(c)[test]
    return answered_out, given_out


def cv_cost(bluff_cost: float, in_domain: np.ndarray, answered: np.ndarray, given_sources: np.ndarray) -> float:
    """``bluff_cost x (off-topic queries given sources) + (answerable queries not answered)``, cross-validated."""
    return float(bluff_cost * int(given_sources[~in_domain].sum()) + int((~answered[in_domain]).sum()))


def cut_from_units(value: float, units: str) -> tuple[float, str]:
    """A team's cut in ragdiag's cosine distance, and the conversion in words.

    >>> cut_from_units(0.47, "similarity")
    (0.53, 'similarity 0.47 read as cosine distance 1 - 0.47 = 0.53 (a similarity consumer keeps s >= 0.47)')
    """
    if units not in UNITS:
        raise ValueError(f"--units must be one of {', '.join(UNITS)}, got {units!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"the current cut must be a finite number, got {value!r}")
    if units == "distance":
        return check_cut(value, "the current cut"), f"cosine distance {value:g} (ragdiag's own units)"
    if not -1.0 <= value <= 1.0:
        raise ValueError(f"a cosine similarity lies in [-1, 1], got {value:g}")
    d = round(1.0 - float(value), 12)
    return check_cut(d, "the current cut"), (f"similarity {value:g} read as cosine distance 1 - {value:g} = {d:g} "
                                             f"(a similarity consumer keeps s >= {value:g})")


#: Keys a config file may hold the cut under: (key, units).
_KEYS = (("score_threshold", "similarity"), ("similarity_cutoff", "similarity"), ("distance_threshold", "distance"))


def _find_keys(doc, found: list, *, max_values: int = 1_000_000) -> None:
    """The cut keys anywhere in ``doc``, in document order (a walk with its own stack: no depth is too deep)."""
    keys = dict(_KEYS)
    stack, seen = [doc], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > max_values:
            raise ValueError(f"over {max_values} values, not a config file")
        if isinstance(item, dict):
            pending = []
            for k, v in item.items():
                if k in keys and isinstance(v, (int, float)) and not isinstance(v, bool):
                    found.append((k, float(v), keys[k]))
                else:
                    pending.append(v)
            stack.extend(reversed(pending))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def cut_from_file(path: str | Path) -> tuple[float, str, str]:
    """The cut a config file holds: ``(value, units, where)``; ``ValueError`` in one line when none or several.

    Reads a ragdiag thresholds export (its ``cut.cosine_distance``), or a small
    YAML, JSON or TOML file with one ``score_threshold`` / ``similarity_cutoff``
    (similarities) or ``distance_threshold`` (a distance) anywhere in it.
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--current-from {path}: not a file")
    from ...core.limits import read_limited

    try:  # a regular file of at most 1 MB, read as such (it cannot grow or turn into a pipe meanwhile)
        raw = read_limited(p, 1_000_000, what="--current-from")
    except (OSError, ValueError) as exc:
        raise ValueError(f"--current-from {path}: {' '.join(str(exc).split())[:200]}, not a config file") from None
    text = raw.decode("utf-8", errors="replace")
    doc = None
    try:
        if p.suffix.lower() == ".toml":
            import tomllib

            doc = tomllib.loads(text)
        elif p.suffix.lower() == ".json":
            doc = json.loads(text)
        else:
            from ...core.safe_yaml import YamlLimitError, load_yaml

            try:
                doc = load_yaml(text)
            except YamlLimitError as exc:
                raise ValueError(f"--current-from {path}: {exc}") from None
    except ValueError as exc:
        if str(exc).startswith("--current-from"):
            raise
        raise ValueError(f"--current-from {path}: cannot be read ({type(exc).__name__})") from None
    except Exception as exc:  # noqa: BLE001 - any parse error is one line for the user
        raise ValueError(f"--current-from {path}: cannot be read ({type(exc).__name__})") from None
    from .export import EXPORT_KEY

    if isinstance(doc, dict) and EXPORT_KEY in doc:
        from .score import refuse_foreign

        refuse_foreign(doc, f"--current-from {path}")  # a cut on a reranker's, fused or BM25 score: not a distance
        cut = (doc.get("cut") or {}).get("cosine_distance")
        if not isinstance(cut, (int, float)):
            raise ValueError(f"--current-from {path}: a ragdiag export without cut.cosine_distance")
        return float(cut), "distance", "cut.cosine_distance (ragdiag export)"
    found: list = []
    try:
        _find_keys(doc, found)
    except ValueError as exc:
        raise ValueError(f"--current-from {path}: {exc}") from None
    if not found:
        raise ValueError(f"--current-from {path}: no score_threshold, similarity_cutoff or distance_threshold in it")
    if len({(v, u) for _, v, u in found}) > 1:
        keys = ", ".join(f"{k}={v:g}" for k, v, _ in found)
        raise ValueError(f"--current-from {path}: several cuts ({keys}); pass the one you run with --current")
    k, v, u = found[0]
    return v, u, k


@dataclass(frozen=True)
class CurrentCut(VersusProposed):
    """The cut a team runs today, at ragdiag's gate, against the proposal."""

    value: float
    units: str
    cut_distance: float
    conversion: str
    rates: Mapping[str, RateCell]  # answered, wrong_sources, no_answer, bluffs, bluffs_near, bluffs_far
    meets_goal: bool
    proposed: float | None
    gained: tuple[str, ...]  # answerable queries the proposal answers that the current cut does not
    lost: tuple[str, ...]  # answerable queries the current cut answers that the proposal does not
    bluffs_added: tuple[str, ...]  # off-topic queries that bluff under the proposal, not today
    bluffs_removed: tuple[str, ...]  # off-topic queries that bluff today, not under the proposal

    def cells(self) -> dict:
        return {"value": self.value, "units": self.units, "cut_distance": self.cut_distance,
                "conversion": self.conversion, **{k: v.cells() for k, v in self.rates.items()},
                "meets_goal": self.meets_goal, "versus_proposed": self.versus_cells()}

    def sentence(self) -> str:
        r = self.rates
        head = (f"The cut you run today ({self.conversion}): answered {rate_text(r['answered'])}, wrong sources "
                f"{rate_text(r['wrong_sources'])}, no answer {rate_text(r['no_answer'])}, bluffs "
                f"{rate_text(r['bluffs'])}; it {'meets' if self.meets_goal else 'misses'} the goal.")
        return self.versus_sentence(head, self.cut_distance,
                                    "" if self.proposed is None else cut_text(self.proposed))


def audit(table: GateTable, value: float, units: str, goal: Goal, proposed: float | None) -> CurrentCut:
    """The cut a team runs today (``value`` in ``units``) at this gate, and what the proposal would change."""
    cut, words = cut_from_units(value, units)
    row = rate_rows(table, [cut])[0]
    rates = row.outcomes()
    meets = goal.met_by(rates[goal.measure].rate)
    moved = moved_queries(table.query_ids, table.in_domain, cut, proposed, table.answered, table.given_sources)
    return CurrentCut(float(value), units, cut, words, rates, meets, proposed, *moved)
