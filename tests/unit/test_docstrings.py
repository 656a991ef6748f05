"""Every public function and class of the library and the Streamlit helpers has a docstring.

Walks the packages ``ragdiag`` and ``ui`` with :mod:`pkgutil` (so modules that become packages stay
covered), imports each module and checks every public (no leading underscore) top-level function and
class *defined in it* (re-exports are checked where they are defined).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import pytest

import ragdiag
import ui
from code_walk import modules as _modules


MODULES = _modules(ragdiag) + _modules(ui)


def _own_doc(obj) -> str:
    """The object's own docstring: not a base class's, not the signature ``@dataclass`` writes in."""
    doc = (vars(obj).get("__doc__") if inspect.isclass(obj) else obj.__doc__) or ""
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}("):
        return ""  # @dataclass fills a missing docstring with "Name(field: type, ...)"
    return doc.strip()


def _undocumented(module) -> list[str]:
    out = []
    for name, obj in vars(module).items():
        # unwrap: a function behind functools.lru_cache or wraps is a function too
        if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(inspect.unwrap(obj))):
            continue
        if getattr(obj, "__module__", None) != module.__name__:
            continue  # imported from elsewhere: checked where it is defined
        if not _own_doc(obj):
            out.append(name)
    return out


@pytest.mark.parametrize("name", MODULES)
def test_public_objects_have_docstrings(name):
    module = importlib.import_module(name)
    missing = _undocumented(module)
    assert not missing, f"{name}: public functions/classes without a docstring: {', '.join(missing)}"


def test_own_doc_sees_through_dataclass_and_inherited_docstrings():
    @dataclasses.dataclass(frozen=True)
    class Bare:
        x: int

    @dataclasses.dataclass(frozen=True)
    class Documented:
        """Has one."""

        x: int

    class Child(ValueError):
        pass

    assert _own_doc(Bare) == "" and _own_doc(Child) == "" and _own_doc(Documented) == "Has one."


def test_walk_finds_the_modules():
    # The walk sees subpackages and plain modules alike; a broken walk would check nothing.
    assert {"ragdiag.documents.corpus", "ragdiag.retrieval.bm25", "ragdiag.analyses.compare.power", "ui.html"} <= set(MODULES)
    assert not any(m.endswith("__main__") for m in MODULES)

