"""The real all-MiniLM-L6-v2's tests of what ``test_regression_gate.py`` checks on FAKEs (kept apart, so that those run in
the fast loop)."""

from __future__ import annotations

import pytest

from heldout import make_heldout, run


@pytest.mark.model
def test_real_model_unchanged_passes_and_blind_cuts_fail(tmp_path, capsys):
    folder, truth = make_heldout(tmp_path)
    out = tmp_path / "run"
    code, _, err = run(capsys, "eval", "--corpus", folder, "--truth", truth, "--no-cache", "--strategies", "A,C",
                       "--retrievers", "dense", "--out", out)
    assert code == 0, err
    assert run(capsys, "gate", out, out, "--config", "C/dense")[0] == 0
    code, text, _ = run(capsys, "gate", out, out, "--config", "C/dense", "--candidate-config", "A/dense")
    assert code == 1 and "Newly destroyed" in text
