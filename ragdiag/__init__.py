"""ragdiag: diagnose the retrieval half of a RAG system, honestly, without an LLM.

The verbs are here, loaded when first used (``import ragdiag`` loads no
torch, pandas or streamlit)::

    import ragdiag

    corpus = ragdiag.load_corpus("data/sklearn-user-guide")
    truth = ragdiag.load_truth("data/sklearn-user-guide.truth.json", corpus)
    ev = ragdiag.evaluate(corpus, truth, encoder=ragdiag.load_encoder(), strategies="C,E")
    print(ragdiag.compare(ev, "E/hybrid", "E/dense").verdict)
    ragdiag.write_outputs(ev, "out")

The library reads in pipeline order, one package a stage: ``core`` (defaults,
statistics, metrics, tables) -> ``documents`` (corpus, extraction, ground
truth) -> ``index`` (chunking, encoder, store) -> ``retrieval`` ->
``evaluation`` (running the configurations) -> ``analyses`` (comparisons, the
gate, the outcome ladder, funnel, cost, the recommendation) -> ``present``
(report, exports, the regression gate) -> ``cli``. Each package imports only
the ones before it (import-linter checks it with the tests).
"""

import sys
from importlib import import_module
from types import ModuleType

__version__ = "0.1.0"

# Bumped whenever chunking, evaluation or scoring changes what an index holds.
PIPELINE_VERSION = "1"

# name -> the module that defines it
_VERBS = {
    "load_corpus": "documents.corpus",
    "load_truth": "documents.truth",
    "load_encoder": "index.models",
    "evaluate": "evaluation.evaluate",
    "summary_rows": "analyses.summary",
    "compare": "analyses.compare",
    "family": "analyses.compare",
    "gate_table": "analyses.gate_table",
    "Gate": "core.gate",
    "sweep": "analyses.threshold",
    "cut_choice": "analyses.threshold",
    "write_outputs": "present.export",
    "build_report": "present.report",
    "write_report": "present.report",
    "load_run": "evaluation.external",
    "attach_run": "evaluation.external",
    "Config": "evaluation.records",
    "ExternalKey": "evaluation.records",
    "Evaluation": "evaluation.records",
    "Store": "index.store",
}

__all__ = ["__version__", "PIPELINE_VERSION", *_VERBS]


def __getattr__(name: str):
    """Load a verb from its module on first use (PEP 562)."""
    module = _VERBS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_VERBS})


class _Package(ModuleType):
    """The package, keeping its verbs when a submodule of the same name (``evaluate``, ``compare``) is imported."""

    def __setattr__(self, name: str, value) -> None:
        if name in _VERBS and isinstance(value, ModuleType):
            return  # the import system binds each submodule on its package; the verb keeps the name
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
