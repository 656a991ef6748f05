"""A lint over ``tests/`` (issues 43 and 48): every test file sits in the folder of what it needs, no test file
imports another, and the folders' markers reach every test.

The rule is ``scripts/test_layout.py``'s (``python scripts/test_layout.py --apply`` moves a file left at the root or
in the wrong folder). Fast: it reads the files' syntax trees.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"


def _layout():
    spec = importlib.util.spec_from_file_location("test_layout_rule", REPO / "scripts" / "test_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


layout = _layout()
TEST_FILES = layout.test_files(TESTS)
#: every module a test file might import by its flat name: the test files themselves and the conftest
TEST_MODULES = {p.stem for p in TEST_FILES} | {"conftest"}


def test_there_are_test_files_in_every_folder():
    folders = {p.parent.name for p in TEST_FILES}
    assert folders == set(layout.FOLDERS), folders


def test_no_test_file_is_left_at_the_root_of_tests():
    loose = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert not loose, f"move them into their folders (python scripts/test_layout.py --apply): {loose}"


def test_every_test_file_is_in_the_folder_of_what_it_needs():
    wrong = [f"{src.relative_to(TESTS)} -> {dst.relative_to(TESTS)}" for src, dst in layout.misplaced(TESTS)]
    assert not wrong, f"python scripts/test_layout.py --apply would move: {wrong}"


@pytest.mark.parametrize("path", [*TEST_FILES, *sorted((TESTS / "helpers").glob("*.py")), TESTS / "conftest.py"],
                         ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_file_imports_another(path):
    """Shared fixtures go in ``conftest.py``, shared helpers in ``tests/helpers`` (on ``sys.path``): importing a test
    module runs its module-level code and collects its fixtures twice, and ties the files' places together."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = sorted(f"line {n.lineno}: {name}" for n in ast.walk(tree)
                   for name in ([a.name for a in n.names] if isinstance(n, ast.Import) else
                                [n.module] if isinstance(n, ast.ImportFrom) and n.module and not n.level else [])
                   if name.split(".")[0] in TEST_MODULES)
    assert not found, f"{path.name} imports a test module (move what it needs into tests/helpers): {found}"


def test_the_rule_reads_markers_and_page_helpers(tmp_path):
    cases = {
        "test_a.py": ("import pytest\npytestmark = [pytest.mark.browser, pytest.mark.model]\n", "browser"),
        "test_b.py": ("import pytest\n@pytest.mark.model\ndef test_x(): ...\n@pytest.mark.slow\ndef test_y(): ...\n",
                      "model"),
        "test_c.py": ("import pytest\n@pytest.mark.slow\ndef test_x(): ...\n", "slow"),
        "test_d.py": ("from apptest import run\n", "pages"),
        "test_e.py": ("def test_x():\n    from streamlit.testing.v1 import AppTest\n", "pages"),
        "test_f.py": ('"""pytest.mark.model in words is no marker."""\ndef test_x(): ...\n', "unit"),
        "test_g.py": ("import pytest\npytestmark = pytest.mark.ray\n", "ray"),
    }
    for name, (source, _) in cases.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    assert {name: layout.folder_for(tmp_path / name) for name in cases} == {n: f for n, (_, f) in cases.items()}
    assert {src.name: dst.parent.name for src, dst in layout.misplaced(tmp_path)} == {
        n: f for n, (_, f) in cases.items()}


def test_the_folder_marker_reaches_every_test_in_it(request):
    """This file is in ``tests/unit``: the conftest gave its tests the ``unit`` marker."""
    assert request.node.get_closest_marker("unit") is not None
    assert request.node.get_closest_marker("model") is None


#: what test files imported from other test files (and conftest.py) before the helpers package, by module
OLD_IMPORTS = {
    "test_browser": "ARTIFACTS COLD_TIMEOUT_MS ROOT SETTLE_LIMIT_MS TIMEOUT_MS browser page server start_server "
                    "stop_server free_port wait_idle wait_settled main_text shot sync_api viewport_page recall_grid",
    "test_browser_decide": "HEIGHT WIDTH chart_problems first_screen open_page",
    "test_app_pages": "_frames app fake_app field lib param run texts rec_of plain_words_problems",
    "test_regression_gate": "make_heldout run",
    "test_history_page": "make_history",
    "test_threshold_slices": "ENGLISH_OOD",
    "test_report": "BagOfWords",
    "test_funnel": "synthetic_eval",
    "test_hybrid_pools": "_world",
    "test_sharded_search": "assert_same",
    "conftest": "TINY_DOCS TINY_TRUTH",
}


def _top_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(t.id for t in ast.walk(target) if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


@pytest.mark.parametrize("module", OLD_IMPORTS)
def test_what_a_test_file_imported_from_another_is_in_the_helper_that_replaces_it(module):
    """A test file written against the old layout (``from test_browser import browser``) works once
    ``scripts/test_layout.py --imports`` points it at the helper (``from browsing import browser``)."""
    helper = TESTS / "helpers" / f"{layout.MOVED_HELPERS[module]}.py"
    missing = set(OLD_IMPORTS[module].split()) - _top_level_names(helper)
    assert not missing, f"{helper.name} lacks {sorted(missing)}"


def test_imports_of_test_modules_are_pointed_at_the_helpers(tmp_path):
    path = tmp_path / "test_new.py"
    path.write_text("from test_browser import browser, start_server  # noqa: F401\nimport re\n\n\n"
                    "def test_x():\n    from conftest import TINY_TRUTH\n    from test_browser_extra import y\n",
                    encoding="utf-8")
    assert layout.point_imports(path) == ["test_browser", "conftest"]
    assert path.read_text(encoding="utf-8").splitlines()[0] == "from browsing import browser, start_server  # noqa: F401"
    assert "    from tiny import TINY_TRUTH" in path.read_text(encoding="utf-8")
    assert "    from test_browser_extra import y" in path.read_text(encoding="utf-8")  # another module: left alone


def test_a_file_moved_one_folder_down_keeps_finding_the_repository(tmp_path):
    path = tmp_path / "test_moved.py"
    path.write_text('ROOT = Path(__file__).resolve().parent.parent\nDATA = Path(__file__).resolve().parents[1] / "data"\n'
                    'KB = Path(__file__).parent / "fixtures" / "kb"\nTESTS = Path(__file__).resolve().parent\n',
                    encoding="utf-8")
    left = layout.one_folder_down(path)
    assert path.read_text(encoding="utf-8").splitlines() == [
        "ROOT = Path(__file__).resolve().parents[2]", 'DATA = Path(__file__).resolve().parents[2] / "data"',
        'KB = Path(__file__).parents[1] / "fixtures" / "kb"', "TESTS = Path(__file__).resolve().parent"]
    assert left == ["test_moved.py:4: TESTS = Path(__file__).resolve().parent"]  # a person decides what it names
