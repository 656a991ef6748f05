"""The pytest plugin: gate retrieval inside a team's own test suite, one test case per check of the gate.

Installed with ragdiag (the ``pytest11`` entry point), it adds the options
``--ragdiag-*`` (``pytest --help`` lists them) and reads the same settings
from ``[tool.ragdiag]`` in the project's ``pyproject.toml``; an option given
on the command line wins::

    [tool.ragdiag]
    corpus = "kb"                  # folder of documents
    truth = "kb.truth.json"        # ground truth
    config = "E/hybrid"            # the configuration you ship
    baseline = "ragdiag-baseline"  # the accepted run: a `ragdiag eval --out` folder
    margin = 0.05                  # non-inferiority margin (rate units)
    strict = false                 # true: an inconclusive check fails
    cache = ".ragdiag-cache"       # the store: a second session reuses every vector

Fixtures:

``ragdiag_run``
    The candidate, evaluated once per session (only the gated configuration,
    through the store, so a second session embeds nothing), or the folder
    ``--ragdiag-candidate`` names.
``ragdiag_gate``
    The gate's report of the candidate against the baseline, from
    :func:`ragdiag.testing.assert_no_regression` (the same checks and
    statistics as ``ragdiag gate``).
``ragdiag_check``
    One check of that report. A test that takes it runs once per check
    (``destroyed_needles``, ``recall``, ``answered``, ``bluffs``), so JUnit
    XML has one case per check; ``ragdiag_check.verify()`` fails with the
    check's sentence and the gate's Markdown (the questions lost, where a
    needle was cut), or skips an inconclusive check unless ``strict``::

        def test_retrieval(ragdiag_check):
            ragdiag_check.verify()

Relative paths in ``pyproject.toml`` are relative to its folder; on the
command line, to the current folder.
"""

from __future__ import annotations

import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

__all__ = ["CHECKS", "Settings", "RagdiagCheck", "read_settings"]

#: The gate's checks, in its order, as test ids (the gate's names with ``_`` for spaces).
CHECKS = ("destroyed needles", "recall", "answered", "bluffs")
_KEYS = ("corpus", "truth", "config", "baseline", "candidate", "margin", "strict", "cache")


def pytest_addoption(parser) -> None:
    """Add the ``--ragdiag-*`` options (group ``ragdiag`` in ``pytest --help``)."""
    group = parser.getgroup("ragdiag", "ragdiag: gate retrieval against a baseline run (or [tool.ragdiag])")
    group.addoption("--ragdiag-baseline", metavar="DIR", help="the accepted run: a `ragdiag eval --out` folder")
    group.addoption("--ragdiag-config", metavar="CONFIG", help="the gated configuration, e.g. E/hybrid")
    group.addoption("--ragdiag-corpus", metavar="DIR", help="folder of documents the candidate is evaluated on")
    group.addoption("--ragdiag-truth", metavar="FILE", help="ground truth (default: <corpus>.truth.json)")
    group.addoption("--ragdiag-candidate", metavar="DIR",
                    help="gate this `eval --out` folder instead of evaluating the corpus now")
    group.addoption("--ragdiag-margin", metavar="M", type=float, help="non-inferiority margin (default 0.05)")
    group.addoption("--ragdiag-strict", action="store_true", default=None, help="an inconclusive check fails")
    group.addoption("--ragdiag-cache", metavar="DIR",
                    help="the store folder (default .ragdiag-cache in the project's root)")


def pytest_configure(config) -> None:
    """Register the ``ragdiag`` marker the plugin puts on every test that takes ``ragdiag_check``."""
    config.addinivalue_line("markers", "ragdiag: a test of the ragdiag gate (set by the plugin on ragdiag_check)")


@dataclass(frozen=True)
class Settings:
    """What the plugin gates: from ``--ragdiag-*`` options over ``[tool.ragdiag]``."""

    baseline: Path | None
    config: str | None
    corpus: Path | None = None
    truth: Path | None = None
    candidate: Path | None = None
    margin: float | None = None
    strict: bool = False
    cache: Path | None = None
    sources: dict = field(default_factory=dict)  # setting -> "--ragdiag-x" or "pyproject.toml"


def read_settings(options: dict, pyproject: Path | None, cwd: Path) -> Settings:
    """Merge ``options`` (the command line; None where not given) over ``pyproject``'s ``[tool.ragdiag]``.

    :class:`ValueError` for a malformed table or an unknown key.
    """
    table: dict = {}
    if pyproject is not None and pyproject.is_file():
        try:
            if pyproject.stat().st_size > 10_000_000:
                raise ValueError(f"{pyproject} is over 10 MB; not read as a pyproject.toml")
            doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise ValueError(f"{pyproject} cannot be read: {' '.join(str(exc).split())[:200]}") from None
        tool = doc.get("tool", {})
        if not isinstance(tool, dict):
            raise ValueError(f"{pyproject}: tool is {type(tool).__name__}, not a table ([tool.ragdiag] is one)")
        table = tool.get("ragdiag", {})
        if not isinstance(table, dict):
            raise ValueError(f"{pyproject}: tool.ragdiag is {type(table).__name__}, not a table")
        unknown = set(table) - set(_KEYS)
        if unknown:
            shown = ", ".join(sorted(repr(k)[:40] for k in unknown)[:5])
            raise ValueError(f"[tool.ragdiag] in {pyproject}: unknown setting(s) {shown}; known: {', '.join(_KEYS)}")
        for key, value in table.items():
            kind = {"margin": (int, float), "strict": bool}.get(key, str)
            if not isinstance(value, kind) or (key == "margin" and isinstance(value, bool)):
                want = {"margin": "a number", "strict": "true or false"}.get(key, "text")
                raise ValueError(f"[tool.ragdiag] in {pyproject}: {key} is {type(value).__name__}; write {want}")
    values, sources = {}, {}
    for key in _KEYS:
        given = options.get(key)
        if given is not None:
            values[key], sources[key], base = given, f"--ragdiag-{key}", cwd
        elif key in table:
            values[key], sources[key], base = table[key], "pyproject.toml", pyproject.parent
        else:
            continue
        if key in ("corpus", "truth", "baseline", "candidate", "cache"):
            values[key] = (base / str(values[key])).resolve()
    if "margin" in values:
        try:
            values["margin"] = float(values["margin"])
        except ValueError:
            raise ValueError(f"margin {values['margin']!r} ({sources['margin']}) is not a number") from None
    values["strict"] = bool(values.get("strict", False))
    return Settings(baseline=values.pop("baseline", None), config=values.pop("config", None), sources=sources,
                    **values)


@pytest.fixture(scope="session")
def ragdiag_settings(pytestconfig) -> Settings:
    """The plugin's settings (``--ragdiag-*`` over ``[tool.ragdiag]``)."""
    options = {key: pytestconfig.getoption(f"ragdiag_{key}") for key in _KEYS}
    try:
        return read_settings(options, pytestconfig.rootpath / "pyproject.toml", Path.cwd())
    except ValueError as exc:
        pytest.fail(f"ragdiag: {exc}", pytrace=False)


def _need(settings: Settings, *keys: str) -> None:
    for key in keys:
        if getattr(settings, key) is None:
            pytest.fail(f"ragdiag: no {key}: pass --ragdiag-{key} or set {key} in [tool.ragdiag] of pyproject.toml",
                        pytrace=False)


@pytest.fixture(scope="session")
def ragdiag_run(ragdiag_settings, pytestconfig):
    """The candidate: ``--ragdiag-candidate``'s folder, or the gated configuration evaluated now (once a session)."""
    s = ragdiag_settings
    _need(s, "config")
    if s.candidate is not None:
        return s.candidate
    from .cli.common import UsageError, evaluate_args
    from .cli.parser import build_parser
    from .index.encoder.resolve import offline
    from .retrieval.registry import load_plugins

    offline()  # as the CLI: models from installed packages or local folders only
    load_plugins()  # RAGDIAG_PLUGINS: the team's own retrievers and chunking strategies

    strategy, _, retriever = s.config.partition("/")
    argv = ["eval", "--strategies", strategy, "--retrievers", retriever,
            "--cache", str(s.cache or pytestconfig.rootpath / ".ragdiag-cache")]
    argv += ["--corpus", str(s.corpus)] if s.corpus else []
    argv += ["--truth", str(s.truth)] if s.truth else []
    args = build_parser().parse_args(argv)
    t0 = time.perf_counter()
    try:
        ev = evaluate_args(args, [strategy], [retriever])
    except UsageError as exc:
        pytest.fail(f"ragdiag: {exc}", pytrace=False)
    if retriever in ev.unavailable:
        pytest.fail(f"ragdiag: {s.config} cannot run: {ev.unavailable[retriever]}", pytrace=False)
    embedded = sum(i.embedded for i in ev.indexes.values())
    total = sum(len(i.chunks) for i in ev.indexes.values())
    store = Path(args.cache)
    if store.is_relative_to(Path.cwd()):
        store = store.relative_to(Path.cwd())
    pytestconfig.stash[_SUMMARY] = (f"ragdiag: {s.config} evaluated in {time.perf_counter() - t0:.1f} s; "
                                    f"{embedded} of {total} chunk vectors embedded, {total - embedded} from the "
                                    f"store {store}")
    return ev


@pytest.fixture(scope="session")
def ragdiag_gate(ragdiag_settings, ragdiag_run):
    """The gate's report (:class:`~ragdiag.present.regression.checks.GateReport`) of the candidate."""
    from .testing import assert_no_regression

    s = ragdiag_settings
    _need(s, "baseline", "config")
    extra = {} if s.margin is None else {"margin": s.margin}
    try:
        return assert_no_regression(s.baseline, ragdiag_run, config=s.config, strict=s.strict, **extra)
    except AssertionError as exc:  # a failing check: the report rides on the error
        report = getattr(exc, "report", None)
        if report is None:
            raise
        return report
    except ValueError as exc:  # cannot compare (another ground truth, missing files)
        pytest.fail(f"ragdiag: cannot compare: {exc}", pytrace=False)


@dataclass(frozen=True)
class RagdiagCheck:
    """One check of the gate, as a test sees it."""

    name: str
    verdict: str  # pass, fail, inconclusive, or "absent" (no out-of-domain queries: no bluffs check)
    sentence: str
    markdown: str
    strict: bool
    lost: tuple = ()

    def verify(self) -> None:
        """Fail with the check's sentence and the gate's Markdown; skip an inconclusive check (fail if strict)."""
        if self.verdict == "absent":
            pytest.skip(self.sentence)
        if self.verdict == "fail" or (self.verdict == "inconclusive" and self.strict):
            pytest.fail(f"{self.sentence}\n\n{self.markdown}", pytrace=False)
        if self.verdict == "inconclusive":
            pytest.skip(self.sentence)


def pytest_generate_tests(metafunc) -> None:
    """Run a test that takes ``ragdiag_check`` once per check of the gate (:data:`CHECKS`)."""
    if "ragdiag_check" in metafunc.fixturenames:
        metafunc.parametrize("ragdiag_check", CHECKS, indirect=True, ids=[c.replace(" ", "_") for c in CHECKS])
        metafunc.definition.add_marker("ragdiag")


@pytest.fixture
def ragdiag_check(request, ragdiag_gate) -> RagdiagCheck:
    """One check of the gate (the test runs once per check, see the module notes)."""
    from .present.regression.render import gate_markdown

    report = ragdiag_gate
    for check in report.checks:
        if check.name == request.param:
            return RagdiagCheck(check.name, check.verdict, check.sentence, gate_markdown(report), report.strict,
                                check.lost)
    return RagdiagCheck(request.param, "absent", f"no {request.param} check: the ground truth has no "
                                                 "out-of-domain queries", "", report.strict)


_SUMMARY = pytest.StashKey[str]()


def pytest_terminal_summary(terminalreporter, config) -> None:
    """Say how the candidate was evaluated: the time, and how many vectors came from the store."""
    line = config.stash.get(_SUMMARY, None)
    if line:
        terminalreporter.write_line(line)
