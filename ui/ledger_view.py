"""The Chunking page's repair ledger: one table, a row per repaired or broken query, each one click from the Inspector."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from ragdiag.analyses.ledger import Ledger
from ui.diag_frames import inspector_url

__all__ = ["ledger_for", "ledger_frame", "LEDGER_COLUMNS"]

#: Context added at retrieval time, each a row of the page's ledger (no embedding: the baseline's ranking).
EXPANSIONS = ("neighbours", "section")

LEDGER_COLUMNS = ["config", "method", "change", "query", "lost at", "repaired", "broken", "difference", "low", "high",
                  "status", "prompt tokens/query", "chunks", "inspect"]


def ledger_frame(led: Ledger, outcomes: Mapping[str, str], evaluated: set[str],
                 link: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per (configuration, query it repairs or breaks), with the configuration's test and cost beside it.

    ``outcomes``: the baseline's rung per query id (where it lost the query); ``evaluated``: the labels the
    Inspector can open (a retrieval-time row opens the baseline, whose ranking it shares); ``link``: the page's
    context, carried into the Inspector link. A configuration that
    repairs and breaks nothing keeps one row (``change`` empty), so every configuration is in the table.
    """
    records = []
    for r in led.rows:
        d = r.comparison.difference() if r.comparison is not None else {"estimate": None, "low": None, "high": None}
        common = {"config": r.config, "method": r.method, "repaired": len(r.repaired), "broken": len(r.broken),
                  "difference": d["estimate"], "low": d["low"], "high": d["high"],
                  "status": r.comparison.status if r.comparison is not None else "",
                  "prompt tokens/query": round(r.prompt_tokens, 1), "chunks": r.chunks}
        changes = [("repaired", q) for q in r.repaired] + [("broken", q) for q in r.broken]
        for change, q in changes or [("", None)]:
            inspect = None
            if q is not None:
                config = r.config if r.config in evaluated else led.baseline.config
                inspect = inspector_url(**{**(link or {}), "q": q, "config": config})
            records.append({**common, "change": change, "query": q or "",
                            "lost at": outcomes.get(q, "") if change == "repaired" else "", "inspect": inspect or ""})
    return pd.DataFrame.from_records(records, columns=LEDGER_COLUMNS)



def ledger_for(ev, token: str, config: str, gate) -> tuple[Ledger, dict[str, str]]:
    """The ledger against ``config`` at ``gate`` (every other strategy of its retriever and the retrieval-time rows),
    and the baseline's rung per query; held once per evaluation, configuration and gate (``ui.cache``)."""
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.ledger import ledger
    from ui import cache

    def compute():
        led = ledger(ev, config, gate, encoder=cache.encoder(), expansions=EXPANSIONS)
        table = gate_table(ev, config, gate)
        return led, dict(zip(table.query_ids, table.outcome))

    return cache.by_evaluation("ledger", token, (config, gate.keep, gate.cut, gate.k), compute)
