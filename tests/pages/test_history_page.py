"""The History page: headless (AppTest, the FAKE encoder for the sidebar's data) and in Chromium at 1400 × 900.

The history is built by hand (:func:`histories.make_history`): runs whose outcomes are
written out below, so every number the page shows can be checked against the
library's :class:`~ragdiag.present.history.History` on the same file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragdiag.present.history import open_history
from histories import make_history
from apptest import ENV, write_tiny_corpus

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def app_env(tmp_path_factory):
    base = tmp_path_factory.mktemp("historyapp")
    root, truth = write_tiny_corpus(base)
    make_history(base / "h.sqlite")
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(base / "cache"),
           "RAGDIAG_ENCODER": "fakes:fake_encoder", "RAGDIAG_HISTORY": str(base / "h.sqlite")}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    yield {**env, "base": base}
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _page(timeout=60):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    at.run()
    at.switch_page("app_pages/history.py").run()
    return at


def test_history_page_says_the_latest_run_in_words_with_the_librarys_numbers(app_env):
    from ui.fmt import rate

    at = _page()
    assert not at.exception, [e.value for e in at.exception]
    with open_history(app_env["RAGDIAG_HISTORY"]) as hist:
        m = hist.measures(8, "E/hybrid")
    # run 8: 4 + 0 = 4 of 10 questions found and answered; 8 % 3 = 2 of 4 off-topic queries bluff
    assert (m.recall.successes, m.recall.trials, m.bluffs.successes) == (8, 20, 2)
    heading = at.markdown[0].value
    assert heading == (f"#### Latest run 8 (merge 8): found in the top 4 {rate(m.recall)}, answered "
                       f"{rate(m.answered)}, bluffs {rate(m.bluffs)}; not gated")
    # runs 6-8 are on the new ground truth; 6 and 8 accepted (7 passed too): three accepted, one failed candidate
    assert "Since run 6 on this ground truth" in at.markdown[1].value
    assert "3 accepted runs; failed gate candidates: 1." in at.markdown[1].value
    [chart] = [e for e in at.main if type(e.proto).__name__ == "VegaLiteChart"]
    spec = json.loads(chart.proto.spec)
    assert len(spec["vconcat"]) == 2 and all(len(row["hconcat"]) == 2 for row in spec["vconcat"])  # 4 panels
    assert "run_pick" in chart.proto.spec


def test_picking_a_run_lists_the_questions_that_changed(app_env):
    at = _page()
    at.selectbox(key="history_run_7").set_value(3).run()  # run 3 against run 2 (same truth, accepted)
    assert not at.exception
    text = "\n".join(m.value for m in at.markdown)
    # run 2 finds q0-q5 (4 + 2), run 3 finds q0-q6 (4 + 3): q6's two phrasings better in found and answered;
    # bluffs: run 2 has o0, o1 (2 % 3 = 2), run 3 none (3 % 3 = 0): two better
    assert "**Run 3 against run 2**: 6 queries better, 0 worse." in text
    table = at.dataframe[0].value
    assert sorted(table["query"]) == ["o0", "o1", "q6.a", "q6.a", "q6.b", "q6.b"]


def test_without_a_history_the_page_says_how_to_make_one(app_env, monkeypatch):
    monkeypatch.setenv("RAGDIAG_HISTORY", str(app_env["base"] / "absent.sqlite"))
    at = _page()
    assert not at.exception
    assert "ragdiag dashboard --history" in at.info[0].value
