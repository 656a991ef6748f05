"""A hand-made history of gate runs (:func:`make_history`): runs whose outcomes are written out, so every number the
History page shows can be checked against the library's :class:`~ragdiag.present.history.History` on the same file."""

from __future__ import annotations

from pathlib import Path

from ragdiag.present.history import open_history
from ragdiag.present.regression.runs import DestroyedRecord

from handmade import hand_run


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
