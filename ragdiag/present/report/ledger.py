"""The report's optional appendix section "Which chunking repairs what": the repair ledger, as figures.

The ledger (:func:`ragdiag.analyses.ledger.ledger`) evaluates and prices every
chunking against a baseline, which takes minutes on a real corpus: the report
never computes it. Whoever builds the report (``ragdiag report --ledger E``)
computes it and passes this plain, frozen :class:`LedgerSection`
(:meth:`LedgerSection.of`) to :func:`ragdiag.present.report.build_report`,
which only renders it. Its figures are read from
:meth:`~ragdiag.analyses.ledger.Ledger.as_json`, the object ``chunking --ledger
--json`` prints, so the two always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.gate import Gate, OnGate
from ...core.tables import Table
from ...analyses.compare.paired import Difference
from ...core.words import difference_text

__all__ = ["LedgerSection", "LedgerSectionRow"]


@dataclass(frozen=True)
class LedgerSectionRow:
    """One configuration against the baseline: what it repairs and breaks (ids), the paired test, its cost.

    ``difference``, ``low`` and ``high``: answered at the gate, config - baseline, a share of questions (None for
    the baseline's own row); ``prompt_tokens`` per query at the gate and ``embed_seconds``: None when not priced.
    """

    config: str
    method: str
    answered: int
    repaired: tuple[str, ...]
    broken: tuple[str, ...]
    repaired_from: tuple[tuple[str, int], ...]
    chunks: int
    prompt_tokens: float | None
    embed_seconds: float | None
    wins: int | None = None
    losses: int | None = None
    p: float | None = None
    p_adjusted: float | None = None
    difference: float | None = None
    low: float | None = None
    high: float | None = None
    status: str = "baseline"

    def cells(self) -> list:
        """The table's cells: counts, the pair's test and interval in points, the costs."""
        tested = self.p is not None
        return [self.config, self.method, self.answered, len(self.repaired), len(self.broken),
                f"+{self.wins}/-{self.losses}" if tested else "",
                f"{self.p:.4g}" if tested else "",
                f"{self.p_adjusted:.4g}" if self.p_adjusted is not None else "",
                difference_text(Difference(self.difference, self.low, self.high)) if self.difference is not None else "",
                "" if self.prompt_tokens is None else f"{self.prompt_tokens:.0f}", self.chunks,
                "" if self.embed_seconds is None else f"{self.embed_seconds:.2f}"]


@dataclass(frozen=True)
class LedgerSection(OnGate):
    """The ledger at one gate: the baseline, the answerable queries it loses, one row per configuration
    (the baseline's first, then most repairs first) and the sentence saying which repairs most, at what cost."""

    baseline: str
    gate: Gate
    answerable: int
    lost: tuple[str, ...]
    rows: tuple[LedgerSectionRow, ...]
    summary: str

    def __post_init__(self):
        if not self.rows or self.rows[0].config != self.baseline:
            raise ValueError("a ledger section's first row is its baseline's")
        if not isinstance(self.gate, Gate):  # a Gate checked its keep, k and cut when it was made
            raise TypeError(f"a ledger section needs a Gate, got {type(self.gate).__name__}")

    @classmethod
    def of(cls, ledger) -> "LedgerSection":
        """The section of a :class:`~ragdiag.analyses.ledger.Ledger`, read from its ``as_json()``."""
        doc = ledger.as_json()
        rows = []
        for r in doc["rows"]:
            t = r["test"]
            d = t["difference"] if t else None
            rows.append(LedgerSectionRow(
                config=r["config"], method=r["method"], answered=r["answered"], repaired=tuple(r["repaired"]),
                broken=tuple(r["broken"]), repaired_from=tuple(r["repaired_from"].items()), chunks=r["chunks"],
                prompt_tokens=r["prompt_tokens_per_query"], embed_seconds=r["embed_seconds"],
                wins=t["wins"] if t else None, losses=t["losses"] if t else None, p=t["p"] if t else None,
                p_adjusted=t["p_adjusted"] if t else None, difference=d["estimate"] if d else None,
                low=d["low"] if d else None, high=d["high"] if d else None,
                status=t["status"] if t else "baseline"))
        g = doc["gate"]
        return cls(baseline=doc["baseline"], gate=Gate(keep=g["keep"], cut=g["cut"], k=g["k"]),
                   answerable=doc["answerable"],
                   lost=tuple(doc["lost"]), rows=tuple(rows), summary=ledger.summary())

    @property
    def family(self) -> int:
        """The rows the simultaneous intervals hold over (every row but the baseline's)."""
        return len(self.rows) - 1

    def table(self) -> Table:
        """One row per configuration, the baseline's first."""
        return Table.of(["configuration", "method", "answered", "repaired", "broken", "questions +/-", "p",
                         "p adjusted", "difference (95% interval)", "prompt wordpieces/query", "chunks",
                         "embedding s"],
                        (r.cells() for r in self.rows), numeric=(2, 3, 4, 6, 7, 9, 10, 11), id="ledger-table")

    def changes(self) -> tuple[tuple[str, str, str, str], ...]:
        """Per row that repairs or breaks a query: (configuration, repaired ids, where the baseline lost them,
        broken ids); ``-`` for none."""
        return tuple((r.config, " ".join(r.repaired) or "-",
                      ", ".join(f"{rung} {n}" for rung, n in r.repaired_from) or "-", " ".join(r.broken) or "-")
                     for r in self.rows[1:] if r.repaired or r.broken)
