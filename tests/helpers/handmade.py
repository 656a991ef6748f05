"""Hand-made gate runs for tests: queries written as tuples, read into the one per-query record (:class:`GateTable`);
a hand-made history of such runs (:func:`make_history`); hand-written off-topic queries (``ENGLISH_OOD``)."""

from __future__ import annotations

from pathlib import Path

from ragdiag.analyses.gate_table import GateTable
from ragdiag.core.gate import Gate
from ragdiag.present.history import open_history
from ragdiag.present.regression.runs import DestroyedRecord, GateRun


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


def _q(qid, rank, good, kind="answerable", first=None):
    return (qid, qid.split(".")[0] if kind == "answerable" else "", kind, f"question {qid}", rank,
            good if first is None else first, good)


def make_history(path: Path, n: int = 8, *, change_at: int = 6) -> None:
    """``n`` runs of E/hybrid: 10 questions x 2 phrasings and 4 off-topic queries, drifting over the runs.

    Run i finds the first ``4 + i % 4`` questions in the top 4 (rank 2) and the rest at rank 9; a question is
    answered when found (good 0.5 < cut 0.6); off-topic query j bluffs (first 0.55) when j < i % 3. Run 4 is a
    failed gate candidate; from run ``change_at`` on the ground truth is another one (new hash).
    """
    with open_history(path) as hist:
        for i in range(1, n + 1):
            qs = [_q(f"q{j}.{p}", 2 if j < 4 + i % 4 else 9, 0.5 if j < 4 + i % 4 else 0.8)
                  for j in range(10) for p in ("a", "b")]
            qs += [_q(f"o{j}", 0, 2.0, kind="far", first=0.55 if j < i % 3 else 0.7) for j in range(4)]
            run = hand_run(qs, source=f"run{i}", destroyed=[DestroyedRecord(f"q{j}", "d", 0, 9, (4,)) for j in range(i % 2)],
                           truth_sha256=("a" if i < change_at else "b") * 64, truth_source="kb.truth.json", questions=10)
            hist.add([run], label=f"merge {i}", commit=f"{i:07x}abc", verdict="fail" if i == 4 else
                     ("pass" if i % 2 else None))


#: English off-topic queries added to ``data/de-haushalt`` so that its English slice has off-topic queries of its
#: own (the shipped file has one English off-topic query of four).
ENGLISH_OOD = ["How do I change the oil in my car?", "What is the capital of Australia?",
               "How do I reset the password of my wifi router?", "Which programming language should I learn first?",
               "How long is a flight from London to New York?", "What are the rules of cricket?",
               "How do I file my tax return online?", "How can I improve my credit score?"]
