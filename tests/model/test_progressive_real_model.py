"""The real all-MiniLM-L6-v2's tests of what ``test_progressive.py`` checks on FAKEs (kept apart, so that those run in
the fast loop)."""

from __future__ import annotations

import pytest


@pytest.mark.model
def test_cli_eval_streams_each_strategy_to_stderr(tiny_folder, tmp_path, capsys):
    from ragdiag.cli.parser import main

    code = main(["eval", "--corpus", str(tiny_folder), "--cache", str(tmp_path / "c"), "--strategies", "A,C",
                 "--retrievers", "dense,bm25"])
    out, err = capsys.readouterr()
    assert code == 0, err
    a, c = err.index("strategy A done"), err.index("strategy C done")
    assert a < c and "A/dense" in err[a:c] and "C/bm25" in err[c:]
    assert "strategy A done" not in out  # stdout holds the same final tables as before
    assert all(f"{cfg} " in out for cfg in ("A/dense", "A/bm25", "C/dense", "C/bm25"))
