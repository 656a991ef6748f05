"""A lint over the browser tests (issue 48): no read picks one element out of several.

``.first``, ``.last`` or ``.nth(i)`` under a read (``one(...)``, ``text_of``, ``value_of``), directly or through a
name bound to such a locator, reads whichever element comes first: a rerun can draw a stale copy beside the new one,
and "the first" is then either. Every read scopes its locator to the one element it means (by its text, its label, its
section, or the keyed container the app draws it in: ``.st-key-threshold_curve``); none picks. ``KNOWN_PICKS`` is
empty and stays a ratchet: a new pick in any module fails here.

Fast (no browser): it reads the test modules' syntax trees.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from code_walk import call_name as _name, calls as _calls

BROWSER_TESTS = sorted((Path(__file__).resolve().parents[1] / "browser").glob("test_*.py")) + [
    Path(__file__).resolve().parents[1] / "helpers" / "browsing.py"]
#: the helpers that read one element (``one`` and those that call it)
ONE_READERS = {"one", "text_of", "value_of"}
#: what picks one element out of several
PICKS = {"first", "last", "nth"}


def _picks(node, picked: set[str]) -> list[str]:
    """The picks (``.first``, ``.last``, ``.nth(...)``) in a locator expression, and the bound names that hold one."""
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in PICKS:
            found.append(f".{sub.attr}")
        elif isinstance(sub, ast.Name) and sub.id in picked:
            found.append(f"{sub.id} (a .first/.last/.nth)")
    return found


def _picked_names(tree) -> set[str]:
    """Names bound (anywhere in the module) to a locator that picks, and functions that return one."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _picks(node.value, set()):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.FunctionDef) and any(
                isinstance(r, ast.Return) and r.value is not None and _picks(r.value, set()) for r in ast.walk(node)):
            names.add(node.name)
    return names


#: Reads that still pick one of several elements, per module: a ratchet, now empty (every read is scoped to the one
#: element it means: a chart by its keyed container, a grid by its section, a sentence by its text). A module that
#: gains one fails; scope the new read instead of counting it here.
KNOWN_PICKS: dict[str, int] = {}


def _pick_reads(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    picked = _picked_names(tree)
    return [f"{path.name}:{c.lineno}: {_name(c.func)}({', '.join(_picks(c.args[0], picked))})"
            for c in _calls(path) if _name(c.func) in ONE_READERS and c.args and _picks(c.args[0], picked)]


@pytest.mark.parametrize("path", BROWSER_TESTS, ids=lambda p: p.name)
def test_no_read_picks_one_of_several_elements(path):
    found = _pick_reads(path)
    known = KNOWN_PICKS.get(path.name, 0)
    assert len(found) <= known, ("scope the locator to the one element read, not the first of several: "
                                 + ", ".join(found))
    assert len(found) == known, f"{path.name} has {len(found)} such reads now: lower KNOWN_PICKS to {len(found)}"


def test_the_pick_lint_catches_a_pick_directly_and_through_a_name(tmp_path):
    path = tmp_path / "test_browser_x.py"
    path.write_text("def grid(page):\n    return page.locator('x').first\n\n"
                    "def test_a(page):\n    box = page.locator('y').nth(1)\n    one(box).bounding_box()\n"
                    "    one(page.locator('z').last).is_visible()\n    text_of(grid(page))\n"
                    "    one(page.locator('w')).inner_text()\n", encoding="utf-8")
    message = ", ".join(_pick_reads(path))
    assert "test_browser_x.py:6:" in message and "test_browser_x.py:7:" in message and "test_browser_x.py:8:" in message
    assert "test_browser_x.py:9:" not in message
