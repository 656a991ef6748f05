"""The "Can this set tell?" panel of the "Grow the ground truth" page, headless, on the FAKE encoder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "app_pages" / "truth_review.py")
DATA = ROOT / "data"


@pytest.fixture
def haushalt(tmp_path, monkeypatch):
    """de-haushalt and a copy of its truth, strategies E and F with bm25 and hybrid, the FAKE encoder."""
    truth = tmp_path / "de-haushalt.truth.json"
    shutil.copy(DATA / "de-haushalt.truth.json", truth)
    for k, v in {"RAGDIAG_CORPUS": str(DATA / "de-haushalt"), "RAGDIAG_TRUTH": str(truth),
                 "RAGDIAG_CACHE": str(tmp_path / "cache"), "RAGDIAG_STRATEGIES": "E,F",
                 "RAGDIAG_RETRIEVERS": "bm25,hybrid", "RAGDIAG_ENCODER": "fakes:fake_encoder"}.items():
        monkeypatch.setenv(k, v)
    return truth


@pytest.mark.slow  # about 15 s: the evaluation and the permutation on the FAKE encoder
def test_the_ruler_panel_says_the_libraries_verdict(haushalt):
    from streamlit.testing.v1 import AppTest

    from ragdiag.authoring.ruler import VERDICTS

    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("Can this set tell? " in str(e.value) for e in at.markdown)  # off until asked: no permutation
    at.toggle(key="gt_ruler").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    heads = [str(e.value) for e in at.markdown if "Can this set tell? " in str(e.value)]
    assert len(heads) == 1 and any(f"? {v}:" in heads[0] for v in VERDICTS)
    text = "\n".join(str(e.value) for e in at.markdown)
    assert "**Shortcuts.** BM25 alone (E/bm25)" in text and "**Discrimination.**" in text
    assert [list(df.value["measure"]) for df in at.dataframe][-1] == ["R@1", "R@4", "R@8", "R@20"]
