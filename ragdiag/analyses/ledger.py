"""The chunking repair ledger: which strategy or context method repairs which answer the baseline loses.

Against one baseline configuration (a strategy with a retriever, e.g. ``E/hybrid``)
and one :class:`~ragdiag.core.gate.Gate`, each other configuration of the same
retriever gets a row:

* ``repaired``: the answerable queries the baseline loses (any rung of the
  ladder but ``answered``) and this configuration answers (the gate keeps a
  chunk holding the needle); ``broken``: the reverse;
* ``repaired_from``: the rung of the ladder each repaired query was lost at under
  the baseline (``destroyed``: the baseline's chunks cut its needle; ``ranked-low``,
  ``refused``...), so a row says what it repairs;
* the paired comparison ``config - baseline`` on answered-at-the-gate over
  questions, from the same machinery as Compare
  (:func:`ragdiag.analyses.compare.planned_family`): the exact sign-flip p of the
  pair, and the interval and adjusted p simultaneous over the ledger's rows
  (the planned family of the baseline against each other row);
* its cost: prompt wordpieces per query at the gate (NO ANSWER = 0), chunks,
  embedded wordpieces and the embedding time they take at the run's measured
  rate (:func:`ragdiag.analyses.cost.embedding_rate`).

Context added at retrieval time (a kept chunk's neighbours or section,
:mod:`ragdiag.analyses.expansion`) is a row too, ``E+neighbours``: the baseline's
ranking and gate, its own passages and prompt. Its ``destroyed`` stays the
baseline's (no chunk holds those needles whole); a destroyed needle it recovers
is counted in ``repaired_from`` under ``destroyed``.

Rows are ordered by repaired queries, most first (then fewest broken, then the
order of the evaluation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..core.gate import Gate
from .compare.comparisons import Comparison, planned_family
from .gate_table import gate_table
from .outcomes import LADDER
from ..core.words import cut_as_given

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation.records import Config, Evaluation

__all__ = ["LedgerRow", "Ledger", "ledger", "answered_at"]


@dataclass(frozen=True)
class LedgerRow:
    """One configuration against the ledger's baseline (see the module notes); the baseline's own row has no test."""

    config: str
    method: str
    answered: tuple[str, ...]  # answerable queries answered at the gate
    repaired: tuple[str, ...]  # lost under the baseline, answered here (query ids)
    broken: tuple[str, ...]  # answered under the baseline, lost here
    chunks: int
    destroyed: int  # needles no chunk holds whole
    embedded_tokens: int
    prompt_tokens: float  # mean wordpieces per query at the gate (nan: not priced)
    embed_seconds: float  # embedding time at the run's rate (nan: not measured)
    comparison: Comparison | None = None  # config - baseline, simultaneous within the ledger
    #: Per rung of the ladder, how many repaired queries the baseline lost there (``destroyed``, ``ranked-low``...)
    repaired_from: tuple[tuple[str, int], ...] = ()

    def row(self) -> dict:
        """The flat table row: counts, the paired test, the interval and the costs."""
        c = self.comparison
        d = c.difference() if c is not None else None
        return {
            "config": self.config, "method": self.method, "answered": len(self.answered),
            "repaired": len(self.repaired), "broken": len(self.broken),
            "questions +/-": f"+{c.test.wins}/-{c.test.losses}" if c else "",
            "p": c.test.p if c else None, "p adjusted": c.p_adjusted if c else None,
            "difference": d["estimate"] if d else None, "low": d["low"] if d else None,
            "high": d["high"] if d else None, "status": c.status if c else "baseline",
            "prompt tokens/query": round(self.prompt_tokens, 1), "chunks": self.chunks,
            "destroyed": self.destroyed, "embedded tokens": self.embedded_tokens,
            "embed s": round(self.embed_seconds, 2) if math.isfinite(self.embed_seconds) else self.embed_seconds,
            "repaired from": ", ".join(f"{rung} {n}" for rung, n in self.repaired_from),
            "repaired ids": " ".join(self.repaired), "broken ids": " ".join(self.broken),
        }

    def as_json(self) -> dict:
        """The row as JSON (ids as lists, the comparison's interval as ``{estimate, low, high, kind}``)."""
        c = self.comparison
        return {
            "config": self.config, "method": self.method, "answered": len(self.answered),
            "repaired": list(self.repaired), "repaired_from": dict(self.repaired_from), "broken": list(self.broken),
            "chunks": self.chunks,
            "destroyed": self.destroyed, "embedded_tokens": self.embedded_tokens,
            "prompt_tokens_per_query": None if math.isnan(self.prompt_tokens) else self.prompt_tokens,
            "embed_seconds": None if math.isnan(self.embed_seconds) else self.embed_seconds,
            "test": None if c is None else {
                "unit": "question", "wins": c.test.wins, "losses": c.test.losses, "ties": c.test.ties,
                "p": c.test.p, "p_adjusted": c.p_adjusted, "status": c.status, "difference": c.difference(),
                "family": c.family_name, "family_size": c.family},
        }


@dataclass(frozen=True)
class Ledger:
    """The baseline's row, the queries it loses, and one row per other configuration (most repairs first)."""

    baseline: LedgerRow
    lost: tuple[str, ...]
    rows: tuple[LedgerRow, ...]
    gate: Gate
    n_answerable: int

    def best(self) -> LedgerRow | None:
        """The row that repairs the most lost queries (None: no row repairs any)."""
        return self.rows[0] if self.rows and self.rows[0].repaired else None

    def table(self) -> list[dict]:
        """The baseline's row, then every other row (:meth:`LedgerRow.row`)."""
        return [self.baseline.row(), *(r.row() for r in self.rows)]

    def as_json(self) -> dict:
        """The ledger as JSON (``chunking --ledger --json``)."""
        g = self.gate
        return {"baseline": self.baseline.config, "gate": {"keep": g.keep, "cut": g.cut, "k": g.k},
                "answerable": self.n_answerable, "lost": list(self.lost),
                "rows": [self.baseline.as_json(), *(r.as_json() for r in self.rows)]}

    def summary(self) -> str:
        """One sentence: which row repairs most of the baseline's lost queries, at what prompt cost."""
        b, best = self.baseline, self.best()
        head = (f"{b.config} loses {len(self.lost)} of {self.n_answerable} answerable queries at cut "
                f"{cut_as_given(self.gate.cut)} (keep {self.gate.keep})")
        if best is None:
            return head + "; no other configuration answers any of them."
        delta = best.prompt_tokens - b.prompt_tokens
        cost = ("" if math.isnan(delta) else
                f", at {best.prompt_tokens:.0f} prompt wordpieces per query ({delta:+.0f} against the baseline)")
        return (f"{head}; {best.config} ({best.method}) repairs the most: {len(best.repaired)}, and breaks "
                f"{len(best.broken)}{cost}.")


def answered_at(ev: Evaluation, config: Config | str, gate: Gate) -> np.ndarray:
    """Per query of ``ev.queries``: answerable and answered at ``gate`` (the ladder's ``answered`` rung)."""
    table = gate_table(ev, config, gate)
    return table.answered() & table.in_domain


def ledger(ev: Evaluation, baseline: Config | str, gate: Gate | None = None, *,
           configs: Sequence[Config | str] | None = None, encoder=None, embed_rate: float | None = None,
           expansions: Sequence[str] = ()) -> Ledger:
    """The repair ledger of ``configs`` (default: every configuration of the baseline's retriever) against ``baseline``.

    ``encoder``: counts the prompt's wordpieces (None: prompt tokens are nan);
    ``embed_rate``: seconds per embedded wordpiece (None: the embedding time is nan);
    ``expansions``: context added at retrieval time to the baseline's kept chunks
    (:data:`ragdiag.analyses.expansion.EXPANSIONS`), each a row ``<strategy>+<how>``
    with the baseline's ranking, its own answered queries and prompt.
    A configuration with another retriever, or an external run, is refused: a
    ledger compares chunkings, the retriever held fixed.
    """
    from dataclasses import replace

    from ..evaluation.records import Config as _Config
    from .expansion import EXPANSIONS, expand

    gate = Gate() if gate is None else gate
    base = ev.result(baseline).config
    expanded = {}
    for how in expansions:
        if how not in EXPANSIONS:
            raise ValueError(f"unknown expansion {how!r}; choose from {', '.join(EXPANSIONS)}")
        expanded[_Config(f"{base.strategy}+{how}", base.retriever)] = (how, expand(ev, base, gate, how,
                                                                                   encoder=encoder))
    if expanded:  # the same ranking under another name, so the paired machinery reads it as a configuration
        ev = replace(ev, results={**ev.results, **{c: replace(ev.results[base], config=c) for c in expanded}},
                     indexes={**ev.indexes, **{c.strategy: ev.indexes[base.strategy] for c in expanded}})
    if base.external:
        raise ValueError(f"{base.label} is an external run: the ledger compares ragdiag's own chunkings")
    if configs is None:
        configs = [c for c in ev.results if not c.external and c.retriever == base.retriever and c != base
                   and c not in expanded]
    configs = [*configs, *expanded]
    others = []
    for c in configs:
        cfg = ev.result(c).config
        if cfg.external or cfg.retriever != base.retriever:
            raise ValueError(f"{cfg.label} is not a chunking of {base.label}'s retriever ({base.retriever}): "
                             "a ledger holds the retriever fixed")
        if cfg != base and cfg not in others:
            others.append(cfg)
    answered = {c: (expanded[c][1].answered & ev.in_domain) if c in expanded else answered_at(ev, c, gate)
                for c in [base, *others]}
    base_rungs = gate_table(ev, base, gate).outcome
    ids = [q.id for q in ev.queries]
    ind = ev.in_domain
    comps = {c.a: c for c in planned_family(ev, base, others, lambda c: answered[c], k=gate.k,
                                            name=f"{base.label} against each other chunking")} if others else {}
    from .cost import prompt_tokens

    def row(cfg) -> LedgerRow:
        index = ev.indexes[cfg.strategy]
        mine, theirs = answered[cfg], answered[base]
        tokens = int(index.report.audit.total_tokens)
        if encoder is None:
            prompt = math.nan
        elif cfg in expanded:
            prompt = float(expanded[cfg][1].prompt_tokens.mean())
        else:
            prompt = float(prompt_tokens(ev, cfg, encoder, gate).mean())
        method = (f"{index.strategy.description} + {EXPANSIONS[expanded[cfg][0]]}" if cfg in expanded
                  else index.strategy.description)
        repaired = np.flatnonzero(ind & mine & ~theirs)
        rungs = [base_rungs[i] for i in repaired]
        return LedgerRow(
            config=cfg.label, method=method,
            answered=tuple(ids[i] for i in np.flatnonzero(mine)),
            repaired=tuple(ids[i] for i in repaired),
            repaired_from=tuple((r, rungs.count(r)) for r in LADDER if r in rungs),
            broken=tuple(ids[i] for i in np.flatnonzero(ind & ~mine & theirs)),
            chunks=len(index.chunks), destroyed=len(index.report.destroyed), embedded_tokens=tokens,
            prompt_tokens=prompt, embed_seconds=tokens * embed_rate if embed_rate is not None else math.nan,
            comparison=comps.get(cfg))

    rows = [row(c) for c in others]
    order = {c.label: i for i, c in enumerate(others)}
    rows.sort(key=lambda r: (-len(r.repaired), len(r.broken), order[r.config]))
    lost = tuple(ids[i] for i in np.flatnonzero(ind & ~answered[base]))
    return Ledger(baseline=row(base), lost=lost, rows=tuple(rows), gate=gate, n_answerable=int(ind.sum()))
