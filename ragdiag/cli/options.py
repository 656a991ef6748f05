"""The CLI's option groups, and its parser class: a command takes a group only if it reads it.

Groups: :func:`add_inputs` (``--corpus``, ``--truth``), :func:`add_store`
(``--cache``, ``--no-cache``, ``--no-snapshot``), :func:`add_model` (``--model``,
``--cross-encoder``), :func:`add_evaluation` (the three: what a command that
evaluates reads; :func:`evaluating_parser` declares such a command, with ``--k``)
and :func:`add_gate` (``--keep``, ``--cut``, ``--k``: the gate, read back as one
:class:`~ragdiag.core.gate.Gate` by :func:`gate_of`).

A bad value is one line on stderr and exit status 2 (:class:`Parser`); the
gate's three numbers are checked by :class:`~ragdiag.core.gate.Gate` alone.
"""

from __future__ import annotations

import argparse

from ..core.defaults import DEFAULT_KEEP

__all__ = ["Parser", "add_inputs", "add_store", "add_model", "add_evaluation", "add_k", "add_gate", "gate_of",
           "evaluating_parser", "K_HELP", "GATE_OPTIONS"]

#: The one help text of ``--k`` (its one default: the gate's keep).
K_HELP = ("the rank that counts as found: recall@k, the verdicts and the funnel read the top k "
          f"(default: the gate's keep, {DEFAULT_KEEP})")
#: The options :func:`gate_of` reads; a command that declares any of them gets ``args.gate``.
GATE_OPTIONS = ("keep", "cut", "k")


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``error: ...; see ... --help``) and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def add_inputs(p, *, corpus_help: str = "folder of documents (default: the bundled scikit-learn user guide)",
               truth: bool = True) -> None:
    """``--corpus`` and ``--truth``: the documents and the ground truth (:func:`ragdiag.cli.common.load_inputs`)."""
    p.add_argument("--corpus", help=corpus_help)
    if truth:
        p.add_argument("--truth", help="ground-truth JSON/YAML (default: <corpus folder>.truth.json beside it)")


def add_store(p, *, no_cache: bool = True) -> None:
    """``--cache``, ``--no-cache`` and ``--no-snapshot``: where indexes are stored and reused."""
    p.add_argument("--cache", help="store folder (default: $RAGDIAG_CACHE or ./.ragdiag-cache)")
    if no_cache:
        p.add_argument("--no-cache", action="store_true", help="compute everything, store nothing")
        p.add_argument("--no-snapshot", action="store_true",
                       help="do not seed the store from the bundled corpus's shipped index "
                            "(also: RAGDIAG_NO_SNAPSHOT=1)")


def add_model(p, *, cross_encoder: bool = True) -> None:
    """``--model`` and ``--cross-encoder``: the embedding model and the reranker of ``rerank-ce``."""
    p.add_argument("--model", help="embedding model folder or cached hub id (default: all-MiniLM-L6-v2)")
    if cross_encoder:
        p.add_argument("--cross-encoder", help="cross-encoder for rerank-ce: folder or cached hub id "
                                               "(default: cross-encoder/ms-marco-MiniLM-L-6-v2)")


def add_evaluation(p) -> None:
    """The options of a command that evaluates configurations: inputs, store and model."""
    add_inputs(p)
    add_store(p)
    add_model(p)


def evaluating_parser(sub, name: str, help: str, *, selection: bool = False):
    """The parser of subcommand ``name`` (in the subparsers ``sub``) that evaluates configurations and reads
    recall at k: :func:`add_evaluation` and ``--k``, then, with ``selection``, ``--strategies``, ``--retrievers``
    and ``--json`` (:func:`~ragdiag.cli.common.add_selection`)."""
    p = sub.add_parser(name, help=help)
    add_evaluation(p)
    add_k(p)
    if selection:
        from .common import add_selection

        add_selection(p)
    return p


def add_k(p, help: str = K_HELP) -> None:
    """``--k``: the gate's k (default: its keep), for a command that reads recall at k."""
    p.add_argument("--k", type=int, default=None, help=help)


def add_gate(p, *, cut: str | None = None, k: bool = True,
             keep_help: str = f"the gate keeps at most N chunks under the cut (default {DEFAULT_KEEP})") -> None:
    """``--keep`` (and ``--cut`` when ``cut`` is its help text, default ``None``; ``--k`` unless ``k=False``)."""
    p.add_argument("--keep", type=int, default=DEFAULT_KEEP, help=keep_help)
    if cut is not None:
        p.add_argument("--cut", type=float, default=None, help=cut)
    if k:
        add_k(p)


def gate_of(args):
    """The :class:`~ragdiag.core.gate.Gate` of a command's ``--keep``, ``--cut`` and ``--k`` (absent: defaults).

    A value out of range is a :class:`~ragdiag.cli.common.UsageError` naming the option.

    >>> gate_of(argparse.Namespace(keep=6, cut=None, k=None))
    Gate(keep=6, cut=0.6, k=6)
    >>> gate_of(argparse.Namespace(keep=0))
    Traceback (most recent call last):
    ragdiag.cli.common.UsageError: --keep must be a whole number from 1 to 20, got 0
    """
    from ..core.gate import Gate, GateError
    from .common import UsageError

    try:
        return Gate.from_options(keep=getattr(args, "keep", None), cut=getattr(args, "cut", None),
                                 k=getattr(args, "k", None))
    except GateError as exc:
        raise UsageError(f"--{exc}") from None
