"""Typed rows (ragdiag.evaluation.rows): fields are the columns, ``cells()`` the flat dict that files and tables are made of."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ragdiag.evaluation.rows import OUTCOME_KEYS, ChunkingRow, RateCell, RateRow, SummaryRow, SweepRow, interval_cells
from ragdiag.core.stats import Interval
from ragdiag.analyses.summary import chunking_rows, summary_rows
from ragdiag.analyses.threshold.gate import sweep
from ragdiag.analyses.gate_table import GateTable
from ragdiag.analyses.threshold.rates import rate_rows


def test_summary_row_cells_are_the_flat_table(tiny_eval):
    row = next(r for r in summary_rows(tiny_eval) if r.config == "C/dense")
    cells = row.cells()
    assert list(cells) == ["config", "strategy", "retriever", "phrasing", "queries",
                           "R@1", "R@1_low", "R@1_high", "R@4", "R@4_low", "R@4_high",
                           "R@8", "R@8_low", "R@8_high", "R@20", "R@20_low", "R@20_high",
                           "MRR", "MRR_low", "MRR_high",
                           "destroyed", "chunks", "embedded_tokens", "header_share", "truncated", "seconds"]
    # hand-computed in test_evaluate.py: 4 of 8 queries at rank 1, 8 chunks, 1 destroyed needle, 3 truncated
    assert (cells["R@1"], cells["queries"], cells["chunks"], cells["destroyed"], cells["truncated"]) == (
        0.5, 8, 8, 1, 3)
    assert (cells["R@4_low"], cells["R@4_high"]) == (row.recall[4].low, row.recall[4].high)
    assert (cells["MRR"], cells["MRR_low"], cells["MRR_high"]) == (row.mrr.estimate, row.mrr.low, row.mrr.high)
    assert interval_cells(row) == cells
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.config = "X/y"


def test_interval_cells_still_flattens_dict_rows():
    iv = Interval(0.25, 0.1, 0.6, 1, 4)
    assert interval_cells({"config": "E/dense", "R@4": iv, "p": None}) == {
        "config": "E/dense", "R@4": 0.25, "R@4_low": 0.1, "R@4_high": 0.6, "p": None}


GATE = GateTable(("a", "b", "c", "n", "f"), np.array([True, True, True, False, False]),
                  closest=np.array([0.2, 0.3, 0.6, 0.35, 0.1]), closest_holder=np.array([0.5, np.inf, 0.6, np.inf, np.inf]),
                  window=2, kinds=(None, None, None, "near", "far"))


def test_sweep_row_cells_name_one_column_per_ood_kind():
    # at 0.55: a answered (0.5), b kept but wrong (0.3), c refused (0.6); n (0.35) and f (0.1) bluff
    row = sweep(GATE, [0.55]).row(0.55)
    assert row == SweepRow(0.55, 1, 1, 1, 2, 2, 0, {"near": 1, "far": 1})
    assert row.cells() == {"cut": 0.55, "answered": 1, "wrong_sources": 1, "no_answer": 1, "lost": 2, "bluffs": 2,
                           "abstained": 0, "bluffs_near": 1, "bluffs_far": 1}


def test_rate_row_cells_nest_one_cell_per_outcome():
    row = rate_rows(GATE, [0.2])[0]  # only f (0.1) is under 0.2: one far bluff, every answerable query refused
    assert isinstance(row, RateRow) and list(row.outcomes()) == list(OUTCOME_KEYS)
    assert (row.no_answer.count, row.no_answer.rate, row.answered.count, row.bluffs.count) == (3, 1.0, 0, 1)
    assert row.bluffs_far == RateCell(1, 1.0, pytest.approx(0.025), 1.0)  # 1 of 1: the exact bound 0.025 ** 1
    assert row.bluffs_near == RateCell(0, 0.0, 0.0, pytest.approx(0.975))
    assert row.cells()["bluffs_near"] == {"count": 0, "rate": 0.0, "low": 0.0, "high": row.bluffs_near.high}
    assert row.outcome("no_answer") is row.no_answer
    with pytest.raises(ValueError, match="unknown outcome 'lost'"):
        row.outcome("lost")


def test_chunking_rows_are_the_chunk_reports_lines(tiny_eval):
    (row,) = chunking_rows(tiny_eval)
    assert isinstance(row, ChunkingRow)
    assert row.cells() == tiny_eval.indexes["C"].report.row()
    assert (row.strategy, row.chunks, row.destroyed, row.truncated) == ("C", 8, 1, 3)


def test_summary_row_of_an_external_run_has_no_audit():
    iv = Interval(0.5, 0.2, 0.8, 2, 4)
    row = SummaryRow("ext/mine", "ext", "mine", "all", 4, {4: iv}, iv, None, None, None, None, None, 0.0)
    assert [row.cells()[k] for k in ("destroyed", "chunks", "embedded_tokens", "header_share", "truncated")] == [None] * 5


def test_rows_compare_threshold_and_results_load_no_heavy_library():
    import json
    import subprocess
    import sys
    from pathlib import Path

    heavy = ("pandas", "torch", "streamlit", "transformers")
    code = ("import sys, json, ragdiag.evaluation.rows, ragdiag.analyses.compare, ragdiag.analyses.threshold, ragdiag.present.per_query, ragdiag.present.export\n"
            f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_query_rows_are_the_per_query_columns(tiny_eval):
    from ragdiag.present.per_query import PER_QUERY_COLUMNS, per_query_records
    from ragdiag.evaluation.rows import QueryRow

    assert tuple(f.name for f in dataclasses.fields(QueryRow)) == PER_QUERY_COLUMNS
    rows = {(r.strategy, r.retriever, r.query_id): r for r in per_query_records(tiny_eval)}
    a = rows[("C", "dense", "q3:course")]  # q3's needle is destroyed by C: no rank, no distance
    assert (a.needle_rank, a.outcome, a.needle_distance, a.reciprocal_rank, a.question_id) == (
        None, "destroyed", None, 0.0, "q3")
    o = rows[("C", "dense", "o1")]  # o1's closest chunk is the zebra one at 0.6985: over the default cut 0.6
    assert (o.question_id, o.phrasing, o.outcome, o.kept, o.reciprocal_rank, o.final_rank) == (
        "", "ood", "abstained", 0, None, None)
    assert list(a.cells()) == list(PER_QUERY_COLUMNS)
