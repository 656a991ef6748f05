"""Edits of a ground-truth mapping, as pure functions returning a new mapping (unknown keys kept)."""

from __future__ import annotations

import copy
import re

__all__ = ["next_id", "add_question", "update_queries", "remove_entry", "add_ood", "ids"]


def ids(data: dict) -> set[str]:
    """Every id in use, questions and out-of-domain queries alike.

    >>> sorted(ids({"questions": [{"id": "q01"}], "ood": [{"id": "o01"}, "not an entry"]}))
    ['o01', 'q01']
    """
    return {str(e.get("id")) for key in ("questions", "ood") for e in data.get(key) or [] if isinstance(e, dict)}


def next_id(data: dict, prefix: str) -> str:
    """The next free id with ``prefix`` (``q`` -> ``q33`` after ``q32``), zero-padded to two digits."""
    taken = ids(data)
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)$")
    n = max((int(m.group(1)) for i in taken if (m := pattern.match(i))), default=0) + 1
    while f"{prefix}{n:02d}" in taken:
        n += 1
    return f"{prefix}{n:02d}"


def _list(data: dict, key: str) -> list:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"'{key}' in the file is not a list; fix the file by hand first")
    return value


def add_question(data: dict, qid: str, needle: str, queries: dict[str, str], **extra) -> dict:
    """``data`` with a new question appended (``extra`` keys are stored with it, e.g. ``doc``)."""
    if qid in ids(data):
        raise ValueError(f"id {qid!r} is taken; choose another")
    out = copy.deepcopy(data)
    out["questions"] = _list(out, "questions") + [{"id": qid, "needle": needle, "queries": dict(queries), **extra}]
    out.setdefault("ood", [])
    return out


def update_queries(data: dict, qid: str, queries: dict[str, str]) -> dict:
    """``data`` with question ``qid``'s phrasings replaced (its other keys kept)."""
    out = copy.deepcopy(data)
    for q in _list(out, "questions"):
        if isinstance(q, dict) and q.get("id") == qid:
            q["queries"] = dict(queries)
            return out
    raise KeyError(f"no question {qid!r}")


def remove_entry(data: dict, key: str, entry_id: str) -> dict:
    """``data`` without the entry ``entry_id`` of list ``key`` (``questions`` or ``ood``).

    >>> remove_entry({"questions": [{"id": "q01"}, {"id": "q02"}]}, "questions", "q01")
    {'questions': [{'id': 'q02'}]}
    """
    out = copy.deepcopy(data)
    out[key] = [e for e in _list(out, key) if not (isinstance(e, dict) and e.get("id") == entry_id)]
    return out


def add_ood(data: dict, oid: str, kind: str, query: str, **extra) -> dict:
    """``data`` with a new out-of-domain query (``kind`` near or far) appended; ValueError when ``oid`` is taken."""
    if oid in ids(data):
        raise ValueError(f"id {oid!r} is taken; choose another")
    out = copy.deepcopy(data)
    out.setdefault("questions", [])
    out["ood"] = _list(out, "ood") + [{"id": oid, "kind": kind, "query": query, **extra}]
    return out
