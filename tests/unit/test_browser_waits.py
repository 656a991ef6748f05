"""A lint over the browser tests (issue 48): they wait for states, never for moments, and read one element at a time.

* No browser test module (``tests/browser/test_*.py``, and the helpers of ``tests/helpers/browsing.py``) calls ``time.sleep``, ``sleep`` or Playwright's
  ``wait_for_timeout``: a test waits for the page's state (``browser_wait.settle``, an ``expect`` or a
  ``wait_for``), so a busy machine makes it slower, not red.
* Every read of a locator (its text, value, attribute, box, visibility or count) goes through ``browser_wait``:
  ``one(locator).<read>()`` (the locator resolves to exactly one element, else the read waits and then fails: a
  rerun's stale copy beside the new one is never read), or the helpers that settle first (``text_of``,
  ``value_of``, ``count``, ``texts_of``, ``main_text``).
* The frame numbers ``browser_wait`` reads from Streamlit's websocket are the installed Streamlit's.

Fast (no browser): it reads the test modules' syntax trees. ``test_browser_picks.py`` checks that no read picks one of
several elements (``.first``, ``.last``, ``.nth(i)``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from code_walk import call_name as _name, calls as _calls

HELPERS = Path(__file__).resolve().parents[1] / "helpers"
BROWSER_TESTS = sorted((Path(__file__).resolve().parents[1] / "browser").glob("test_*.py")) + [HELPERS / "browsing.py"]
#: Playwright's reads of a locator's state; each must be of ``one(...)``.
READS = {"inner_text", "inner_html", "text_content", "input_value", "get_attribute", "bounding_box", "is_visible",
         "is_hidden", "is_editable", "is_enabled", "is_disabled", "is_checked", "count", "all_inner_texts",
         "all_text_contents"}
SLEEPS = {"sleep", "wait_for_timeout"}


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
