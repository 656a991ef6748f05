"""The review queue of drafts: one at a time, accept (as drafted or edited), skip, or reject with a reason.

Pure functions over a ground-truth mapping (the editor's document), so the
dashboard saves the result through the editor's one save path and its
concurrency checks. An accepted draft becomes a question with ``"source":
"draft"`` (its effect can be sliced); a rejected one is remembered under the
file's ``rejected_drafts`` list (the loader ignores it) so it is not offered again.
"""

from __future__ import annotations

import copy
from typing import Sequence

from .drafts import Draft
from .edit import add_question, next_id

__all__ = ["REJECT_REASONS", "pending", "accept", "reject", "rejected_needles"]

#: Why a draft is rejected (the keys 1-4 of the queue).
REJECT_REASONS = ("not what a person would ask", "the needle does not answer it well",
                  "duplicates a question", "the sentence is not worth a question")


def rejected_needles(data: dict) -> set[str]:
    """Needles of the drafts rejected before (the file's ``rejected_drafts``)."""
    return {str(r.get("needle")) for r in data.get("rejected_drafts") or [] if isinstance(r, dict)}


def pending(drafts: Sequence[Draft], data: dict, skipped: Sequence[str] = ()) -> list[Draft]:
    """Drafts still to review: needle not yet a question nor rejected; skipped ones (needles) last, in skip order.

    >>> from ragdiag.authoring.leakage import leakage
    >>> d = [Draft(f"needle {i}", "doc", "", f"q{i}?", "definition", "en", leakage("q", "n")) for i in range(3)]
    >>> [x.needle for x in pending(d, {"questions": [{"needle": "needle 0"}]}, skipped=["needle 1"])]
    ['needle 2', 'needle 1']
    """
    used = {q.get("needle") for q in data.get("questions") or [] if isinstance(q, dict)} | rejected_needles(data)
    open_ = [d for d in drafts if d.needle not in used]
    order = {n: i for i, n in enumerate(skipped)}
    return sorted(open_, key=lambda d: (d.needle in order, order.get(d.needle, 0)))


def accept(data: dict, draft: Draft, text: str, phrasing: str, *, qid: str | None = None) -> tuple[dict, str]:
    """``data`` with the draft as a new question (``text``: as drafted or edited) in ``phrasing``, and its id.

    The question carries ``"source": "draft"`` and the draft under ``"draft"`` (``{phrasing: text}``, the
    convention of ``truth suggest``), so ``truth check`` warns while a query is still the draft unedited.
    """
    text = text.strip()
    if not text:
        raise ValueError("the question is empty: write it, or skip the draft")
    qid = qid or next_id(data, "q")
    extra = {"source": "draft", "draft": {phrasing: draft.question}}
    return add_question(data, qid, draft.needle, {phrasing: text}, **extra), qid


def reject(data: dict, draft: Draft, reason: str) -> dict:
    """``data`` with the draft remembered as rejected, with its ``reason`` (one of :data:`REJECT_REASONS` or any text)."""
    if not reason.strip():
        raise ValueError("say why the draft is rejected")
    out = copy.deepcopy(data)
    listed = out.get("rejected_drafts")
    out["rejected_drafts"] = (listed if isinstance(listed, list) else []) + [
        {"needle": draft.needle, "draft": draft.question, "reason": reason.strip()}]
    return out
