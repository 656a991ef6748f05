"""``python -m ragdiag``: the same results as the dashboard, headless.

One module per group of subcommands, each with ``register(subparsers)``:
:mod:`~ragdiag.cli.evaluating` (``eval``, ``compare``, ``pairs``, ``report``),
:mod:`~ragdiag.cli.gate` (``sweep``, ``threshold``: the abstention gate),
:mod:`~ragdiag.cli.data` (``ingest``, ``index``), :mod:`~ragdiag.cli.external`
(``eval-run``), :mod:`~ragdiag.cli.stores` (``eval-store``),
:mod:`~ragdiag.cli.regress` (``gate``, the regression gate for CI),
:mod:`~ragdiag.cli.truth` (``truth check|stats|suggest``), :mod:`~ragdiag.cli.diag`
(``funnel``, ``hubs``, ``cost``), :mod:`~ragdiag.cli.verdicts` (``best``,
``recommend``, ``effects``) and :mod:`~ragdiag.cli.variants` (``variants``).
:mod:`~ragdiag.cli.parser` lists the registrations and holds :func:`~ragdiag.cli.parser.main`;
:mod:`~ragdiag.cli.options` the option groups (inputs, store, model, gate) a
command takes only if it reads them; :mod:`~ragdiag.cli.common` what the
commands share (``UsageError``, ``load_inputs``, ``open_store``, ``cli_encoder``,
``evaluate_args``, ``write_results``, ``progress_bar``).
"""
