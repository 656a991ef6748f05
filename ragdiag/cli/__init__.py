"""``python -m ragdiag``: the same results as the dashboard, headless.

One module per group of subcommands: :mod:`~ragdiag.cli.evaluating` (``eval``,
``compare``, ``pairs``, ``report``), :mod:`~ragdiag.cli.gate` (``sweep``,
``threshold``), :mod:`~ragdiag.cli.regress` (``gate``, the regression gate for CI),
:mod:`~ragdiag.cli.external` (``eval-run``),
:mod:`~ragdiag.cli.data` (``ingest``, ``index``), :mod:`~ragdiag.cli.diag`
(``funnel``, ``hubs``, ``cost``). The parser and :func:`ragdiag.cli.parser.main`
are in :mod:`~ragdiag.cli.parser`, at the top; what every subcommand shares, here
and in other packages (``eval-store``, ``truth``, ``variants``), is the public
surface of :mod:`~ragdiag.cli.common` (``UsageError``, ``load_inputs``,
``open_store``, ``cli_encoder``, ``evaluate_args``, ``write_results``,
``progress_bar``), which imports no subcommand.
"""
