"""The gate's rule is written once, in ``ragdiag/core/gate.py`` (issue 43): no other module compares a value with
the cut (``x < cut``, ``x <= cut``) nor computes the gate's window (``min(k, keep, ...)``) by hand.

Fast: it reads the syntax trees of ``ragdiag/``, ``ui/``, ``app_pages/`` and ``app.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from code_walk import source_files

ROOT = Path(__file__).resolve().parents[2]
GATE = ROOT / "ragdiag" / "core" / "gate.py"
FILES = source_files() + [ROOT / "app.py"]


def _name(node) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def hand_written_rules(source: str) -> list[str]:
    """``x < cut`` / ``x <= cut`` (a name or attribute called ``cut``) and ``min(k, keep...)`` in ``source``.

    >>> hand_written_rules("a = d < cut\\nb = min(k, keep, n)\\nc = d < self.cut\\nok = cut >= own")
    ['1: < cut', '2: min(k, keep)', '3: < cut']
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, (ast.Lt, ast.LtE)) and _name(right) == "cut":
                    found.append(f"{node.lineno}: {'<' if isinstance(op, ast.Lt) else '<='} cut")
        elif (isinstance(node, ast.Call) and _name(node.func) == "min"
              and [_name(a) for a in node.args[:2]] == ["k", "keep"]):
            found.append(f"{node.lineno}: min(k, keep)")
    return found


def test_the_finder_sees_each_shape():
    assert hand_written_rules("kept = closest <= gate.cut\nw = min(g.k, g.keep)") == ["1: <= cut", "2: min(k, keep)"]
    assert hand_written_rules("fine = cut >= r.own_cut\nalso = under_each(d, cut)") == []


@pytest.mark.parametrize("path", [p for p in FILES if p != GATE], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_but_the_gate_writes_its_rule(path):
    assert hand_written_rules(path.read_text(encoding="utf-8")) == [], (
        f"{path.relative_to(ROOT)}: compare through ragdiag.core.gate (Gate.under, under_each, count_under, "
        "Gate.window) instead")


def test_the_gate_module_holds_the_rule():
    assert hand_written_rules(GATE.read_text(encoding="utf-8")), "the rule moved: point this test at its new home"


#: The text a person greps for (issue 43): the rule's comparisons and the window's ``min`` as written anywhere, in
#: code, strings, docstrings and doctests alike (a user-facing snippet names its stack's own parameter instead).
RULE_TEXTS = ("< cut", "<= cut", "min(k, keep")


def _texts() -> list[Path]:
    """Every text file of ``ragdiag/``, ``ui/``, ``app_pages/`` and ``app.py`` (no caches, no binary files)."""
    out = []
    for folder in ("ragdiag", "ui", "app_pages"):
        for p in sorted((ROOT / folder).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                try:
                    p.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    continue
                out.append(p)
    return out + [ROOT / "app.py"]


def rule_texts(text: str) -> list[str]:
    """``line: text`` for each line of ``text`` holding one of :data:`RULE_TEXTS` (what ``grep`` would find).

    >>> rule_texts("keep if d < cut\\nfine: d < :max_distance\\nw = min(k, keep, n)")
    ['1: < cut', '3: min(k, keep']
    """
    return [f"{i}: {t}" for i, line in enumerate(text.splitlines(), 1) for t in RULE_TEXTS if t in line]


def test_no_text_but_the_gates_writes_the_rule():
    files = _texts()
    assert len(files) > 100 and GATE in files  # the walk reads the code (not an empty list)
    found = [f"{p.relative_to(ROOT)}:{hit}" for p in files if p != GATE
             for hit in rule_texts(p.read_text(encoding="utf-8"))]
    assert not found, ("the gate's rule is written in ragdiag/core/gate.py only; say it through its functions, or "
                       "name the parameter of the user's stack (:max_distance, similarity_cutoff):\n" + "\n".join(found))
    assert rule_texts(GATE.read_text(encoding="utf-8")), "the rule moved: point this test at its new home"
