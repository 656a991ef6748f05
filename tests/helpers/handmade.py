"""Hand-made gate runs for tests: queries written as tuples, read into the one per-query record (:class:`GateTable`)."""

from __future__ import annotations

from ragdiag.analyses.gate_table import GateTable
from ragdiag.core.gate import Gate
from ragdiag.present.regression.runs import GateRun


def hand_table(queries, gate: Gate, config: str = "E/hybrid") -> GateTable:
    """A gate table from ``(query_id, question_id, kind, text, needle_rank, closest, closest_holder)`` tuples."""
    rows = [{"query_id": q, "question_id": qid, "kind": kind, "keep": gate.keep, "closest": float(c),
             "closest_holder": float(h), "text": text} for q, qid, kind, text, _, c, h in queries]
    return GateTable.from_rows(rows, gate=gate, config=config, needle_rank=[int(q[4]) for q in queries])


def hand_run(queries, *, gate: Gate | None = None, source: str = "hand", config: str = "E/hybrid",
             destroyed=(), truth_sha256: str = "a" * 64, truth_source: str = "t.json",
             questions: int = 0) -> GateRun:
    """A :class:`GateRun` of ``queries`` (tuples as :func:`hand_table` takes them) at ``gate`` (default ``Gate()``)."""
    gate = Gate() if gate is None else gate
    return GateRun(source=source, config=config, table=hand_table(queries, gate, config),
                   destroyed=tuple(destroyed), truth_sha256=truth_sha256, truth_source=truth_source,
                   questions=questions, gate=gate)
