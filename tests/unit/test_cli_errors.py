"""Every command's bad numeric argument: exit status 2, one line on stderr naming the option, no traceback.

The table is built from the parser itself: every option of every subcommand
whose type is a number gets 0, -1, nan and inf (minus the values in its range,
listed in ``IN_RANGE``), so a new option is tested the day it is added. A new
command adds its row to ``PREFIX`` (the positional arguments that reach its
options). Loading a corpus or a model fails the test: a bad number is refused
before any work, in process and in milliseconds.
"""

from __future__ import annotations

import argparse

import pytest

from ragdiag.cli.parser import build_parser, main
from no_work import no_work  # noqa: F401 - the fixture

#: The arguments each command needs besides the option under test (RUN, DIR, FILE, OUT: paths made per test).
PREFIX = {
    "eval": [], "compare": ["E/hybrid", "E/dense"], "pairs": [], "report": [],
    "sweep": ["E/dense"], "threshold": ["E/dense", "--max-bluff", "0.05"],
    "ingest": ["DIR"], "index": ["status"], "eval-run": ["RUN"], "eval-store": ["--chroma", "DIR"],
    "gate": ["DIR", "--config", "E/hybrid"],
    "truth check": ["FILE"], "truth stats": ["FILE"], "truth suggest": ["--out", "OUT"],
    "funnel": [], "hubs": [], "cost": [], "best": [], "recommend": [], "effects": [], "variants": [],
    "truth plan": ["E/hybrid", "--versus", "E/dense"], "truth draft": [], "truth near-miss": [],
    "dashboard": [], "ci": ["--baseline", "DIR", "--config", "E/hybrid"],
    "history add": ["DIR"], "history list": [], "history show": ["1"], "history export": ["1"],
    "convert": ["beir:DIR", "--out", "OUT"], "slices": ["E/hybrid", "--by", "phrasing"],
    "monitor": ["E/hybrid", "--log", "FILE"], "ruler": [], "chunking": ["--ledger"],
}
#: (command, option): the values of BAD that are in range there.
IN_RANGE = {
    ("*", "--cut"): {"0"},  # a cut of 0 keeps nothing: a gate, if a useless one
    ("threshold", "--max-bluff"): {"0"}, ("threshold", "--min-answered"): {"0"},  # goals are rates in [0, 1]
    ("report", "--min-answered"): {"0"},  # the judged goal: the same rate in [0, 1] as threshold's
    ("recommend", "--min-answered"): {"0"},  # the second goal: the same rate in [0, 1]
    ("gate", "--margin"): {"0"},  # non-inferiority with no margin
    ("sweep", "--start"): {"0"},
    ("eval", "--ray-gpus-per-actor"): {"0"},  # CPU actors
    ("truth suggest", "--ood"): {"0"},  # no out-of-domain candidates
    ("threshold", "--current"): {"0"},  # the cut you run today may be 0 (a distance in [0, 2])
    ("ci", "--margin"): {"0"},  # as the gate's
}
BAD = ("0", "-1", "nan", "inf")


def _commands(parser: argparse.ArgumentParser, prefix: str = ""):
    """``(command words, subparser)`` of every leaf subcommand (``truth stats`` included)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{prefix} {name}".strip())
            return
    yield prefix, parser


def _cases():
    for command, sub in _commands(build_parser()):
        for action in sub._actions:
            if action.option_strings and action.type in (int, float):
                flag = max(action.option_strings, key=len)
                ok = IN_RANGE.get((command, flag), set()) | IN_RANGE.get(("*", flag), set())
                for value in BAD:
                    if value not in ok:
                        yield pytest.param(command, flag, value, id=f"{command}{flag}={value}".replace(" ", "-"))


CASES = list(_cases())


def test_every_command_has_a_row_and_the_table_is_not_empty():
    assert {c for c, _ in _commands(build_parser())} == set(PREFIX)
    assert len(CASES) > 150 and {c.values[0] for c in CASES} >= {"sweep", "report", "truth stats", "variants"}


@pytest.mark.parametrize(("command", "flag", "value"), CASES)
def test_a_bad_number_is_one_line_and_exit_2(command, flag, value, tmp_path, capsys, no_work, monkeypatch):
    monkeypatch.chdir(tmp_path)  # `ci` writes its comment file where it runs, even for a bad number: not in the checkout
    paths = {"DIR": tmp_path, "RUN": tmp_path / "run.jsonl", "FILE": tmp_path / "t.json", "OUT": tmp_path / "o.json"}
    paths["RUN"].write_text("", encoding="utf-8")
    paths["FILE"].write_text("{}", encoding="utf-8")
    argv = [*command.split(), *(str(paths.get(a, a)) for a in PREFIX[command])]
    if command == "threshold" and flag in ("--max-bluff", "--min-answered"):
        argv = argv[:2]  # the goal under test is the only one
    try:
        code = main([*argv, f"{flag}={value}"])
    except SystemExit as exc:  # argparse: not a number of that type
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert f"{flag} " in lines[0] or f"{flag}:" in lines[0], f"{lines[0]!r} does not name {flag}"
    assert not (tmp_path / "cache").exists()


def test_truth_stats_family_size_0_is_an_error_not_a_traceback(tmp_path, capsys):
    """Review 4's crash: ``truth stats --family-size 0`` ended in an ImportError."""
    truth = tmp_path / "t.json"
    truth.write_text("{}", encoding="utf-8")
    assert main(["truth", "stats", str(truth), "--family-size", "0"]) == 2
    assert capsys.readouterr().err == "error: --family-size must be at least 1, got 0\n"


@pytest.mark.parametrize(("argv", "message"), [
    (["nope"], "error: argument COMMAND: invalid choice: 'nope'"),
    (["eval", "--nope"], "error: unrecognized arguments: --nope"),
    (["eval", "--engine", "gpu"], "error: argument --engine: invalid choice: 'gpu'"),
    (["sweep"], "error: the following arguments are required: CONFIG"),
    (["compare", "E/x", "E/dense"], "error: bad configuration 'E/x'"),
    (["eval", "--strategies", "Z"], "error: unknown strategy Z; choose from A,B,C,D,E,F"),
    (["funnel", "--outcome", "nope"], "error: --outcome must be one of destroyed, truncated,"),
    (["index", "status", "--no-cache"], "error: unrecognized arguments: --no-cache"),  # index needs the store
])
def test_a_bad_word_is_one_line_and_exit_2(argv, message, capsys, no_work):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(message) and len(err.strip().splitlines()) == 1, err


def test_k_has_one_default_and_one_help_and_is_the_gates():
    """Review 4 found --k at 20 on seven commands and 4 on eleven; now every --k is the gate's k."""
    from ragdiag.cli.options import K_HELP, gate_of
    from ragdiag.core.defaults import DEFAULT_KEEP

    parser = build_parser()
    with_k = []
    for command, sub in _commands(parser):
        for action in sub._actions:
            if action.dest == "k" and action.option_strings:
                assert (action.default, action.help) == (None, K_HELP), command
                with_k.append(command)
    assert {"compare", "pairs", "report", "eval-run", "eval-store", "funnel", "hubs", "cost", "best", "recommend",
            "effects", "variants", "truth stats", "truth plan", "slices", "ruler", "chunking"} == set(with_k)
    argv = {"eval-run": ["eval-run", "run.jsonl"], "compare": ["compare", "E/hybrid", "E/dense"]}
    assert {c: gate_of(parser.parse_args(a)).k for c, a in argv.items()} == {"eval-run": DEFAULT_KEEP,
                                                                              "compare": DEFAULT_KEEP}
    assert gate_of(parser.parse_args(["recommend", "--keep", "6"])).k == 6  # the gate's k is its keep
