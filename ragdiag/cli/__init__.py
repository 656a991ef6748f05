"""``python -m ragdiag``: the same results as the dashboard, headless.

One module per group of subcommands: :mod:`~ragdiag.cli.evaluating` (``eval``,
``compare``, ``pairs``, ``report``), :mod:`~ragdiag.cli.gate` (``sweep``,
``threshold``), :mod:`~ragdiag.cli.regress` (``gate``, the regression gate for CI),
:mod:`~ragdiag.cli.external` (``eval-run``),
:mod:`~ragdiag.cli.data` (``ingest``, ``index``), :mod:`~ragdiag.cli.diag`
(``funnel``, ``hubs``, ``cost``); the parser and :func:`main` are in
:mod:`~ragdiag.cli.parser`, what they share in :mod:`~ragdiag.cli._common`.
Other packages' subcommands (``eval-store``, ``truth``, ``variants``) use the
shared helpers re-exported here (``UsageError``, ``_load``, ``_encoder``...).
"""

from __future__ import annotations

# The helpers the eval-store, truth and variants subcommands use, where they have always been imported from.
from ._common import UsageError, _encoder, _evaluate, _load, _progress_bar, _store, _write_outputs  # noqa: F401
from .parser import build_parser, main

__all__ = ["main", "build_parser", "UsageError"]
