"""The real all-MiniLM-L6-v2's tests of what ``test_external.py`` checks on FAKEs (kept apart, so that those run in
the fast loop)."""

from __future__ import annotations

import json

import pytest

from ragdiag.cli.parser import main


@pytest.mark.model
def test_cli_eval_run_compares_with_a_ragdiag_configuration(tiny_folder, capsys, tmp_path):
    truth = json.loads((tiny_folder.parent / "tiny.truth.json").read_text())
    rows = [{"query_id": f"{q['id']}:{p}", "hits": [{"text": q["needle"]}]} for q in truth["questions"]
            for p in q["queries"]]
    run = tmp_path / "oracle.jsonl"
    run.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    rc = main(["eval-run", str(run), "--corpus", str(tiny_folder), "--no-cache", "--compare", "C/dense"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "ext/oracle vs C/dense at R@4" in out  # the gate's k, as `compare` (it was R@20 here)
    oracle = next(line for line in out.splitlines() if line.startswith("ext/oracle "))
    assert oracle.split()[1] == "100%"  # the oracle run finds every needle at rank 1: R@1 "100% (…)"
