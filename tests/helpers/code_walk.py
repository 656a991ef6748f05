"""Reading the code the lint-like tests check: the modules of a package, the calls in a file."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
#: The product's code the lint-like tests read: the library, the dashboard's helpers and its pages.
CODE_FOLDERS = ("ragdiag", "ui", "app_pages")


def source_files() -> list[Path]:
    """Every ``.py`` file of :data:`CODE_FOLDERS`, sorted; fails if it finds too few to be the real tree."""
    files = sorted(p for folder in CODE_FOLDERS for p in (ROOT / folder).rglob("*.py"))
    assert len(files) > 100, f"only {len(files)} files under {CODE_FOLDERS}: not the checkout's code"
    return files


def nodes(source: str, kind: type) -> list:
    """The AST nodes of type ``kind`` in ``source``, in :func:`ast.walk`'s order."""
    return [node for node in ast.walk(ast.parse(source)) if isinstance(node, kind)]


def modules(package) -> list[str]:
    """The dotted names of ``package`` and every module below it (``__main__`` left out: importing it runs it)."""
    names = [package.__name__]
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        if info.name.rsplit(".", 1)[-1] == "__main__":  # importing it would run the program
            continue
        names.append(info.name)
    return sorted(names)


def calls(path: Path):
    """Every call in the file at ``path`` of a name or an attribute (``f(...)``, ``x.f(...)``), as AST nodes."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            yield node


def call_name(func) -> str:
    """The called name of a call's ``func`` node from :func:`calls` (``f`` of ``x.f``)."""
    return func.attr if isinstance(func, ast.Attribute) else func.id
