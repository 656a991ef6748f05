"""A lint over the browser tests (issue 48): no read picks one element out of several.

``.first``, ``.last`` or ``.nth(i)`` under a read (``one(...)``, ``text_of``, ``value_of``), directly or through a
name bound to such a locator, reads whichever element comes first: a rerun can draw a stale copy beside the new one,
and "the first" is then either. A read scopes its locator to the one element it means (by its text, its label, its
section). The reads of that kind left are counted per module (``KNOWN_PICKS``) and the counts only go down.

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


#: Reads that still pick one of several elements, per module: a ratchet. Each is to be scoped to the one element
#: it means (a chart by its title, a grid by its section) and checked in a browser run, then its count lowered here;
#: a module never gains one. The other modules' reads were scoped (the marks by their text, the navigation link by
#: its visibility, the Summary's answered card by its label).
KNOWN_PICKS = {"test_browser_context.py": 1, "test_browser_history.py": 1, "test_browser_themes.py": 2,
               "test_browser_threshold_page.py": 6, "test_browser_threshold_slices.py": 3,
               "test_browser_truth_review.py": 2}


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
