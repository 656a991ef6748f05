"""Every page module is one function and its call: imports, ``def page()``, ``page()``; nothing else runs at import.

Streamlit's multipage "hello" app is the model: the page's statements live in a function, so a reader sees at a
glance what the module defines, and the logic the page calls lives in ``ui/`` and ``ragdiag/``.
"""

import ast
from pathlib import Path

import pytest

PAGES = sorted((Path(__file__).resolve().parents[2] / "app_pages").glob("*.py"))

# Pages still written as scripts (none left): the test fails once one of them is converted and still listed.
NOT_YET: set[str] = set()


def _shape(path: Path) -> list[str]:
    """What stands at the module's top level, in order: 'doc', 'import', 'def page', 'page()' or the statement."""
    out = []
    for i, node in enumerate(ast.parse(path.read_text(encoding="utf-8")).body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            out.append("doc")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append("import")
        elif isinstance(node, ast.FunctionDef) and node.name == "page" and not node.args.args:
            out.append("def page")
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Name) and node.value.func.id == "page" and not node.value.args):
            out.append("page()")
        else:
            out.append(f"line {node.lineno}: {type(node).__name__}")
    return out


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_a_page_module_is_imports_one_page_function_and_its_call(path):
    shape = [s for s in _shape(path) if s not in ("doc", "import")]
    if path.stem in NOT_YET:
        assert shape != ["def page", "page()"], f"{path.stem} is a function now: take it off NOT_YET"
        return
    assert shape == ["def page", "page()"], f"{path.name} runs more than its page function at import: {shape}"


def test_the_list_of_pages_still_scripts_names_only_pages_that_exist():
    assert NOT_YET <= {p.stem for p in PAGES}
