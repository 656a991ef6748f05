"""The "Grow the ground truth" page, headless, on the FAKE encoder: the plan, and the review queue's actions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from apptest import ok as _ok
from ragdiag.authoring.drafts import draft_suggestions
from ragdiag.authoring.leakage import leakage
from ragdiag.authoring.review import REJECT_REASONS, accept, pending, reject
from ragdiag.documents.corpus import load_corpus

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "app_pages" / "truth_review.py")
DATA = ROOT / "data"



def _text(at) -> str:
    parts = [e.value for e in at.markdown] + [e.value for e in at.caption] + [e.value for e in at.code]
    parts += [e.value for kind in ("error", "warning", "info", "success") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts).replace("\\", "")


def test_review_functions():
    corpus = load_corpus(DATA / "de-haushalt")
    drafts = draft_suggestions(corpus, 10).drafts
    data = {"questions": [], "ood": []}
    data, qid = accept(data, drafts[0], drafts[0].question, "de")
    assert data["questions"][0] == {"id": qid, "needle": drafts[0].needle, "queries": {"de": drafts[0].question},
                                    "source": "draft", "draft": {"de": drafts[0].question}}
    data, _ = accept(data, drafts[1], "Wie oft putze ich das?", "de")
    assert data["questions"][1]["draft"] == {"de": drafts[1].question}  # edited: the draft it started from is kept
    data = reject(data, drafts[2], REJECT_REASONS[0])
    assert data["rejected_drafts"][0]["reason"] == REJECT_REASONS[0]
    assert [d.needle for d in pending(drafts, data)] == [d.needle for d in drafts[3:]]
    with pytest.raises(ValueError, match="empty"):
        accept(data, drafts[3], "  ", "de")


def test_page_plans_and_reviews(haushalt_fake):
    from streamlit.testing.v1 import AppTest

    at = _ok(AppTest.from_file(PAGE, default_timeout=120))
    at.run()
    _ok(at)
    text = _text(at)
    # the plan: a count, the test it is for, and the sections no needle covers
    assert "more questions" in text or "are enough" in text
    assert "exact two-sided sign-flip test over questions" in text
    assert any(e.label.startswith("Sections no needle covers") for e in at.expander)
    # the queue: the first draft, its leakage, accept
    first = at.text_input[0].value
    needle = at.code[0].value
    assert f"Leakage: {leakage(first, needle)}" in text
    at.button(key="gt_rq_accept").click().run()
    _ok(at)
    assert "source: draft" in _text(at)
    at.button(key="gt_rq_reject_2").click().run()
    at.button(key="gt_rq_save").click().run()
    _ok(at)
    saved = json.loads(haushalt_fake.read_text(encoding="utf-8"))
    assert saved["questions"][-1]["source"] == "draft" and saved["questions"][-1]["queries"] == {"de": first}
    assert saved["questions"][-1]["needle"] == needle
    assert saved["rejected_drafts"][0]["reason"] == REJECT_REASONS[1]
    assert os.path.exists(str(haushalt_fake).replace(".truth.json", ".truth.prev.json"))


def test_the_plan_is_computed_once_for_every_visitor_when_served_locked(haushalt_fake, monkeypatch):
    """Served read-only, ten visitors opening the page cost one plan, not ten (it was 26-43 s of CPU each)."""
    from streamlit.testing.v1 import AppTest

    import ragdiag.authoring.plan as planning
    from ui.cache import by_evaluation

    monkeypatch.setenv("RAGDIAG_LOCKED", "1")
    by_evaluation.clear()
    real, calls = planning.plan, []

    def counted(*args, **kwargs):
        calls.append(kwargs.get("margin"))
        return real(*args, **kwargs)

    monkeypatch.setattr(planning, "plan", counted)
    shown = set()
    for _ in range(10):  # ten visitors: ten sessions of their own
        at = _ok(AppTest.from_file(PAGE, default_timeout=120))
        at.run()
        _ok(at)
        assert at.number_input(key="gt_plan_margin").disabled
        shown.add(_text(at).split("Drafts to start from")[0])
    assert len(calls) == 1 and len(shown) == 1
