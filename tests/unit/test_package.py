"""The package's own names: the verbs ``import ragdiag`` exposes lazily (PEP 562)."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import ragdiag

REPO = Path(__file__).resolve().parents[2]


def test_every_name_in_all_resolves_to_its_module_object_with_a_docstring():
    for name in ragdiag.__all__:
        obj = getattr(ragdiag, name)
        if name.startswith("__") or name.isupper():
            continue  # __version__, PIPELINE_VERSION: plain strings
        module = importlib.import_module(f"ragdiag.{ragdiag._VERBS[name]}")
        assert obj is getattr(module, name), name
        assert inspect.isfunction(obj) or inspect.isclass(obj), name
        assert (obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__ or "").strip(), name
    assert set(ragdiag.__all__) <= set(dir(ragdiag))


def test_an_unknown_name_is_an_attribute_error():
    try:
        ragdiag.no_such_verb
    except AttributeError as exc:
        assert "no_such_verb" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_verbs_keep_their_names_whatever_was_imported_first():
    """The verbs are the defining modules' functions, whichever module was imported first."""
    code = "\n".join([
        "import ragdiag.evaluation.evaluate, ragdiag.analyses.compare",  # the modules first: they do not shadow the verbs
        "import ragdiag",
        "from ragdiag.evaluation.evaluate import evaluate as ev_fn",
        "from ragdiag.evaluation.records import Config, Evaluation",
        "assert ragdiag.evaluate is ev_fn and ragdiag.Config is Config, ragdiag.evaluate",
        "from ragdiag.analyses.compare.comparisons import compare",
        "assert ragdiag.compare is compare, ragdiag.compare",
        "from ragdiag import evaluate, Evaluation as E",
        "assert evaluate is ev_fn and E is Evaluation",
        "print('ok')",
    ])
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
