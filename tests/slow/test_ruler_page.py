"""The "Can this set tell?" panel of the "Grow the ground truth" page, headless, on the FAKE encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "app_pages" / "truth_review.py")
DATA = ROOT / "data"



@pytest.mark.slow  # about 15 s: the evaluation and the permutation on the FAKE encoder
def test_the_ruler_panel_says_the_libraries_verdict(haushalt_fake):
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


def test_the_summary_reads_the_ruler_only_once_it_was_checked(tiny_eval):
    """``computed_ruler`` never computes: None until ``checked_ruler`` ran for that evaluation, then the same."""
    from ui.ruler_view import checked_ruler, computed_ruler

    token = "tiny-ruler-page-test"
    assert computed_ruler(token) is None
    assert computed_ruler(token) is None  # the miss was not kept
    checked = checked_ruler(tiny_eval, token)
    assert computed_ruler(token) is checked
    assert computed_ruler(token, k=1) is None  # another k is another check
    assert checked.headline().startswith(f"Can this set tell? {checked.verdict}:")


def test_the_ground_truth_page_links_to_the_ruler(tmp_path, monkeypatch):
    """The Ground truth page (which evaluates nothing) links to the Grow page's "Can this set tell?"."""
    from streamlit.testing.v1 import AppTest

    from apptest import write_tiny_corpus

    root, truth = write_tiny_corpus(tmp_path)
    for k, v in {"RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth),
                 "RAGDIAG_CACHE": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(k, v)
    at = AppTest.from_file(str(ROOT / "app_pages" / "ground_truth.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    links = [str(e.value) for e in at.markdown if str(e.value).startswith("[Can this set tell?")]
    assert len(links) == 1 and "](truth_review" in links[0]


@pytest.mark.slow  # about 15 s: one evaluation on the FAKE encoder, the ruler's permutation once
def test_the_summary_says_the_verdict_once_the_grow_page_checked_it(haushalt_fake, monkeypatch):
    from apptest import app, settle

    monkeypatch.setenv("RAGDIAG_STRATEGIES", "E")  # one strategy: both pages read the same evaluation

    def said(at):
        return [str(e.value) for e in at.markdown if str(e.value).startswith("Can this set tell? ")]

    at = app()  # the Summary
    assert said(at) == []  # not checked yet: the Summary computes nothing
    at.switch_page("app_pages/truth_review.py")
    at.run()
    at.toggle(key="gt_ruler").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    head = [str(e.value) for e in at.markdown if "Can this set tell? " in str(e.value)]
    at.switch_page("app_pages/summary.py")
    settle(at.run())
    assert not at.exception, [e.value for e in at.exception]
    assert len(head) == 1 and len(said(at)) == 1 and said(at)[0] in head[0]
