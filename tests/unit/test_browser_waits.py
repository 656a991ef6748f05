"""A lint over the browser tests (issue 48): they wait for states, never for moments, and read one element at a time.

* No browser test module (``tests/test_browser*.py``) calls ``time.sleep``, ``sleep`` or Playwright's
  ``wait_for_timeout``: a test waits for the page's state (``browser_wait.settle``, an ``expect`` or a
  ``wait_for``), so a busy machine makes it slower, not red.
* Every read of a locator (its text, value, attribute, box, visibility or count) goes through ``browser_wait``:
  ``one(locator).<read>()`` (the locator resolves to exactly one element, else the read waits and then fails: a
  rerun's stale copy beside the new one is never read), or the helpers that settle first (``text_of``,
  ``value_of``, ``count``, ``texts_of``, ``main_text``).
* No read picks one element out of several (``.first``, ``.last``, ``.nth(i)``, directly or through a name bound to
  such a locator): a rerun can draw a stale copy beside the new one, and "the first" is then either; a read scopes
  its locator to the one element it means. The reads left, counted per module (``KNOWN_PICKS``), only go down.
* The frame numbers ``browser_wait`` reads from Streamlit's websocket are the installed Streamlit's.

Fast (no browser): it reads the test modules' syntax trees.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parents[1] / "helpers"
BROWSER_TESTS = sorted((Path(__file__).resolve().parents[1] / "browser").glob("test_*.py")) + [HELPERS / "browsing.py"]
#: Playwright's reads of a locator's state; each must be of ``one(...)``.
READS = {"inner_text", "inner_html", "text_content", "input_value", "get_attribute", "bounding_box", "is_visible",
         "is_hidden", "is_editable", "is_enabled", "is_disabled", "is_checked", "count", "all_inner_texts",
         "all_text_contents"}
SLEEPS = {"sleep", "wait_for_timeout"}
#: the helpers that read one element (``one`` and those that call it)
ONE_READERS = {"one", "text_of", "value_of"}
#: what picks one element out of several
PICKS = {"first", "last", "nth"}


def _calls(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            yield node


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id


def _is_one(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "one"


def test_there_are_browser_tests_to_check():
    assert len(BROWSER_TESTS) >= 15, [p.name for p in BROWSER_TESTS]


@pytest.mark.parametrize("path", BROWSER_TESTS, ids=lambda p: p.name)
def test_no_browser_test_waits_for_a_moment(path):
    found = [f"{path.name}:{c.lineno}: {_name(c.func)}" for c in _calls(path) if _name(c.func) in SLEEPS]
    assert not found, "wait for a state (browser_wait.settle, expect, wait_for), not a moment: " + ", ".join(found)


@pytest.mark.parametrize("path", BROWSER_TESTS, ids=lambda p: p.name)
def test_every_locator_read_is_of_exactly_one_element(path):
    found = [f"{path.name}:{c.lineno}: .{c.func.attr}()" for c in _calls(path)
             if isinstance(c.func, ast.Attribute) and c.func.attr in READS and not _is_one(c.func.value)
             and not (c.func.attr == "count" and c.args)]  # str.count(x) and list.count(x) are not reads
    assert not found, ("read through browser_wait: one(locator).<read>(), text_of, value_of, count or texts_of: "
                       + ", ".join(found))


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


def test_the_helper_itself_has_no_fixed_pause_on_a_page():
    path = HELPERS / "browser_wait.py"
    found = [c.lineno for c in _calls(path) if _name(c.func) == "wait_for_timeout"]
    assert not found, found


def test_the_websocket_frame_numbers_are_streamlits():
    pytest.importorskip("streamlit")
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    from browser_wait import EARLY_FOR_RERUN, PROTO_FIELDS

    forward = ForwardMsg.DESCRIPTOR.fields_by_name
    assert PROTO_FIELDS["NEW_SESSION"] == forward["new_session"].number
    assert PROTO_FIELDS["SCRIPT_FINISHED"] == forward["script_finished"].number
    assert PROTO_FIELDS["RERUN_SCRIPT"] == BackMsg.DESCRIPTOR.fields_by_name["rerun_script"].number
    status = ForwardMsg.DESCRIPTOR.enum_types_by_name["ScriptFinishedStatus"].values_by_name
    assert EARLY_FOR_RERUN == status["FINISHED_EARLY_FOR_RERUN"].number
