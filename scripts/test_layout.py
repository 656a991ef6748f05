"""Which folder of ``tests/`` a test file belongs in, from what it needs (issues 43 and 48).

    python scripts/test_layout.py            # list the test files outside their folder, and where each goes
    python scripts/test_layout.py --apply    # move them there (``git mv``; a file from the root gets its
                                             # ``Path(__file__)`` idioms one folder down, the rest is listed)
    python scripts/test_layout.py --imports  # point imports of test modules at the helpers that now hold them

The rule, heaviest need first (a file sits where its heaviest test belongs; ``tests/conftest.py`` then adds the
folder's marker to every test in it, so ``-m`` selections follow the folders):

========== =============================================================================================
folder     a test file goes here when it ...
========== =============================================================================================
browser    marks a test ``browser`` (drives headless Chromium against a dashboard)
ray        marks a test ``ray`` (starts a local Ray instance)
model      marks a test ``model`` (the real all-MiniLM-L6-v2 weights)
slow       marks a test ``slow`` (over about 5 s, no model)
pages      drives the dashboard headless (``AppTest``, the ``apptest`` or ``fakeapp`` helpers) on the FAKE
           encoder
unit       anything else: no model, no browser, fast
========== =============================================================================================

Helpers shared by test files live in ``tests/helpers`` (on ``sys.path`` under pytest, flat names: ``fakes``,
``apptest``, ``browser_wait``, ``browsing``, ``handmade`` ...); a test file never imports another test file.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
#: heaviest first: a file goes to the first folder whose need it has.
FOLDERS = ("browser", "ray", "model", "slow", "pages", "unit")
MARKED = ("browser", "ray", "model", "slow")
#: the marker each folder adds to its tests (``unit`` and ``pages`` are markers of their own, outside none of
#: pyproject's default exclusions).
MARKER = {folder: folder for folder in FOLDERS}
PAGE_HELPERS = {"apptest", "fakeapp"}
#: the helpers module that now holds what test files imported from another test file (and from conftest.py)
MOVED_HELPERS = {"test_browser": "browsing", "test_browser_decide": "browsing", "test_app_pages": "fakeapp",
                 "test_regression_gate": "heldout", "test_history_page": "histories", "test_threshold_slices": "offtopic",
                 "test_report": "fakes", "test_funnel": "funnel_cases", "test_hybrid_pools": "searchworld",
                 "test_sharded_search": "searchworld", "conftest": "tiny"}


def markers(tree: ast.AST) -> set[str]:
    """The names ``X`` of every ``pytest.mark.X`` the module writes."""
    found = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "pytest"):
            found.add(node.attr)
    return found


def imported(tree: ast.AST) -> set[str]:
    """The top-level names of every module the file imports (anywhere in it, functions included)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def drives_pages(tree: ast.AST) -> bool:
    """Whether the module drives the dashboard headless: Streamlit's ``AppTest`` or a page helper."""
    return bool(imported(tree) & PAGE_HELPERS) or any(
        (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streamlit.testing"))
        or (isinstance(node, ast.Name) and node.id == "AppTest")
        or (isinstance(node, ast.Attribute) and node.attr == "AppTest") for node in ast.walk(tree))


def folder_for(path: Path) -> str:
    """The folder ``path`` (a ``test_*.py`` file) belongs in."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    marks = markers(tree)
    for folder in MARKED:
        if folder in marks:
            return folder
    return "pages" if drives_pages(tree) else "unit"


def test_files(tests: Path = TESTS) -> list[Path]:
    """Every ``test_*.py`` under ``tests`` (the fixture folders hold none)."""
    return sorted(p for p in tests.rglob("test_*.py") if "fixtures" not in p.relative_to(tests).parts)


def misplaced(tests: Path = TESTS) -> list[tuple[Path, Path]]:
    """``(where it is, where it belongs)`` for every test file outside its folder."""
    moves = []
    for path in test_files(tests):
        target = tests / folder_for(path) / path.name
        if path != target:
            moves.append((path, target))
    return moves


#: the path idioms of a file at the root of ``tests/`` and what they become one folder down
ONE_FOLDER_DOWN = [
    (re.compile(r"Path\(__file__\)\.resolve\(\)\.parent\.parent\b"), "Path(__file__).resolve().parents[2]"),
    (re.compile(r"Path\(__file__\)\.resolve\(\)\.parents\[1\]"), "Path(__file__).resolve().parents[2]"),
    (re.compile(r"Path\(__file__\)\.parent / \"fixtures\""), 'Path(__file__).parents[1] / "fixtures"'),
]


def one_folder_down(path: Path) -> list[str]:
    """Rewrite the repository-root idioms of a test file moved from ``tests/`` into a folder (``parent.parent`` is
    ``parents[2]`` now); returns the lines that still name ``__file__`` for a person to check (a ``TESTS`` put on a
    subprocess's ``PYTHONPATH`` is ``tests/helpers`` now)."""
    text = path.read_text(encoding="utf-8")
    new = text
    for pattern, replacement in ONE_FOLDER_DOWN:
        new = pattern.sub(replacement, new)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return [f"{path.name}:{i}: {line.strip()}" for i, line in enumerate(new.splitlines(), 1)
            if "__file__" in line and not any(r.split("(__file__)")[1] in line for _, r in ONE_FOLDER_DOWN)]


def point_imports(path: Path) -> list[str]:
    """Rewrite ``from test_x import ...`` (and ``from conftest import``) in ``path`` to the helpers module that holds
    those names now (:data:`MOVED_HELPERS`); returns the modules rewritten. ``import test_x`` is left for a person."""
    text = path.read_text(encoding="utf-8")
    done = []

    def swap(match):
        done.append(match.group(2))
        return f"{match.group(1)}from {MOVED_HELPERS[match.group(2)]} import"

    new = re.sub(r"^(\s*)from (" + "|".join(MOVED_HELPERS) + r") import", swap, text, flags=re.M)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apply", action="store_true", help="git mv every misplaced test file into its folder")
    ap.add_argument("--imports", action="store_true",
                    help="point imports of test modules (test_browser, test_app_pages, ...) at the helpers")
    args = ap.parse_args(argv)
    if args.imports:
        for path in test_files():
            for module in point_imports(path):
                print(f"{path.relative_to(TESTS.parent)}: from {module} -> from {MOVED_HELPERS[module]}")
    moves = misplaced()
    for src, dst in moves:
        print(f"{src.relative_to(TESTS.parent)} -> {dst.relative_to(TESTS.parent)}")
        if args.apply:
            dst.parent.mkdir(exist_ok=True)
            subprocess.run(["git", "mv", str(src), str(dst)], check=True, cwd=TESTS.parent)
            if src.parent == TESTS:
                for line in one_folder_down(dst):
                    print(f"  check: {line}")
    if not moves:
        print("every test file is in its folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
