"""The real all-MiniLM-L6-v2's tests of what ``test_report.py`` checks on FAKEs (kept apart, so that those run in
the fast loop)."""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.model
def test_python_m_ragdiag_report_writes_both_files(tiny_folder, tmp_path):
    from ragdiag.index.encoder import ModelUnavailable, resolve_model_dir

    try:
        resolve_model_dir(None)
    except ModelUnavailable as exc:
        pytest.skip(str(exc))
    out = tmp_path / "tmp" / "report.html"
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "report", "--corpus", str(tiny_folder), "--no-cache",
                           "--strategies", "C", "--retrievers", "dense,bm25,hybrid", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    md = out.with_suffix(".md")
    assert out.is_file() and md.is_file()
    assert f"wrote {out}" in proc.stdout and f"wrote {md}" in proc.stdout
    text = out.read_text(encoding="utf-8")
    assert "<svg" in text and "sentence-transformers/all-MiniLM-L6-v2" in text
    from ragdiag.analyses.recommend import STRATEGY_WORDS

    assert f"Ship {STRATEGY_WORDS['C']}" in text  # the recommendation, in words
    assert "| C/hybrid |" in md.read_text(encoding="utf-8")
