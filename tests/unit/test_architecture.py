"""The architecture, checked: contracts, no import cycle, analyses that ask a retriever's spec.

- The import-linter contracts of ``pyproject.toml`` (the pipeline's layers only
  import downward; the library never imports the dashboard or streamlit) hold.
- The module graph of ``ragdiag`` and of ``ui`` has no cycle. The graph is the
  one Python runs: importing ``a.b.c`` first runs the ``__init__`` of ``a`` and
  ``a.b``, so an import also depends on what those package modules import.
- The funnel, the cost table and the report never decide by a retriever's name
  (``== "hybrid"``, ``startswith("rerank-")``): they ask its spec
  (:class:`ragdiag.retrieval.registry.RetrieverSpec`).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from ragdiag.retrieval.registry import retriever_names

REPO = Path(__file__).resolve().parents[2]


def test_import_contracts_hold():
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(no_cache=True, no_logo=True))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    import tomllib

    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert len(contracts) >= 4  # the pipeline, its two finer stages, the library never importing the UI
    assert f"{len(contracts)} kept, 0 broken" in proc.stdout, proc.stdout[-2000:]


def runtime_graph(*packages: str) -> dict[str, set[str]]:
    """Module -> the modules importing it runs: each imported module and every package above it.

    A module inside a package does not re-run that package's ``__init__`` (it is already
    running or done), so its own ancestors are not added.
    """
    graph = grimp.build_graph(*packages, cache_dir=None)
    edges: dict[str, set[str]] = {m: set() for m in graph.modules}
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            edges[importer].add(imported)
            parts = imported.split(".")
            for i in range(1, len(parts)):
                parent = ".".join(parts[:i])
                if parent in edges and not (importer == parent or importer.startswith(parent + ".")):
                    edges[importer].add(parent)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_cycle_finder_finds_a_cycle_through_a_package_init():
    edges = {"p": {"p.high"}, "p.low": set(), "p.high": {"q"}, "q": {"p.low"}}
    assert cycles(edges) == []
    with_parents = {k: set(v) for k, v in edges.items()}
    with_parents["q"].add("p")  # importing p.low from outside p runs p/__init__, which imports p.high
    assert cycles(with_parents) == [["p", "p.high", "q"]]


def test_library_module_graph_has_no_cycle():
    assert cycles(runtime_graph("ragdiag")) == []


def test_dashboard_module_graph_has_no_cycle():
    assert cycles(runtime_graph("ui")) == []


#: Modules that must ask a retriever's spec, never its name.
SPEC_ONLY = ("ragdiag/analyses/funnel.py", "ragdiag/analyses/cost.py", "ragdiag/present/report")


def name_checks(source: str, names: tuple[str, ...]) -> list[str]:
    """Lines of ``source`` where a string constant is a registered retriever's name, or a name prefix
    (``"rerank-"``, ``"dense-"``) is tested with ``startswith``; docstrings are not code."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            base = node.value.partition("@")[0]
            if base in names:
                found.append((node.lineno, f"{node.lineno}: {node.value!r}"))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("startswith", "endswith")
                and any(isinstance(a, ast.Constant) and isinstance(a.value, str)
                        and any(n.startswith(a.value) for n in names) for a in node.args)):
            found.append((node.lineno, f"{node.lineno}: {ast.unparse(node)}"))
    return [text for _, text in sorted(found)]


def test_name_check_finder_sees_equality_membership_and_prefixes():
    names = ("dense", "bm25", "hybrid", "rerank-ce")
    src = ('"""dense docs."""\nx = r == "hybrid"\ny = r.startswith("rerank-")\nz = r in ("bm25",)\n'
           'w = "dense_rank"\n')
    assert name_checks(src, names) == ["2: 'hybrid'", "3: r.startswith('rerank-')", "4: 'bm25'"]


def test_analyses_never_decide_by_a_retriever_name():
    names = tuple(retriever_names())
    assert {"dense", "bm25", "hybrid", "rerank-ce", "rerank-maxsim"} <= set(names)
    found = {}
    for entry in SPEC_ONLY:
        path = REPO / entry
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            hits = name_checks(file.read_text(encoding="utf-8"), names)
            if hits:
                found[str(file.relative_to(REPO))] = hits
    assert found == {}, f"ask the retriever's spec (ragdiag.retrieval.registry) instead: {found}"
