"""The regression gate against mutated inputs: 2 for every malformed file, 1 for every real regression, never a pass
for a candidate whose answered rate fell by more than the margin.

One real ``eval --out`` folder of the held-out corpus (FAKE encoder: plumbing, the statistics are tested in
``test_regression_stats.py``) is copied and mutated; every mutation is fed to the CLI as the baseline and as the
candidate, and to :func:`ragdiag.testing.assert_no_regression`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import random
import shutil
from pathlib import Path

import pytest

from heldout import make_heldout, run

CONFIG = "C/dense"


@pytest.fixture(scope="module")
def base_run(tmp_path_factory):
    """One `eval --out` folder (strategies A and C, dense), made once for the module with the FAKE encoder."""
    from ragdiag.cli.parser import main

    tmp = tmp_path_factory.mktemp("gate-mutations")
    folder, truth = make_heldout(tmp)
    out = tmp / "run"
    old = os.environ.get("RAGDIAG_ENCODER")
    os.environ["RAGDIAG_ENCODER"] = "fakes:fake_encoder"
    try:
        code = main([str(a) for a in ("eval", "--corpus", folder, "--truth", truth, "--no-cache", "--strategies",
                                      "A,C", "--retrievers", "dense", "--out", out)])
    finally:
        if old is None:
            os.environ.pop("RAGDIAG_ENCODER", None)
        else:
            os.environ["RAGDIAG_ENCODER"] = old
    assert code == 0
    return out


def _copy(base: Path, dest: Path) -> Path:
    shutil.copytree(base, dest)
    return dest


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def _set_summary(folder: Path, doc) -> None:
    (folder / "summary.json").unlink()
    (folder / "summary.json").write_text(json.dumps(doc) if not isinstance(doc, str) else doc)


def _stamp(field, value):
    def mutate(folder):
        doc = _summary(folder)
        doc["gate"][field] = value
        _set_summary(folder, doc)
    return mutate


def _key(key, value):
    def mutate(folder):
        doc = _summary(folder)
        doc[key] = value
        _set_summary(folder, doc)
    return mutate


def _csv_edit(name, edit):
    def mutate(folder):
        path = folder / name
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
        header, rows = edit(list(rows[0]), rows)
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        path.write_text(buf.getvalue(), encoding="utf-8")
    return mutate


def _drop_column(name, column):
    return _csv_edit(name, lambda header, rows: ([c for c in header if c != column], rows))


def _cell(name, column, value):
    def edit(header, rows):
        for r in rows:
            if r["strategy"] == "C":
                r[column] = value
                break
        return header, rows
    return _csv_edit(name, edit)


def _replace(name, how):
    def mutate(folder):
        path = folder / name
        path.unlink()
        how(path, folder)
    return mutate


def _nested(folder):
    _set_summary(folder, "[" * 3000 + "]" * 3000)  # past json's recursion limit, under the size limit


# The malformed inputs: each must exit 2 with one line naming the file (and the field where there is one).
MALFORMED = {
    "summary null": (lambda f: _set_summary(f, "null"), "summary.json"),
    "summary list": (lambda f: _set_summary(f, "[]"), "summary.json"),
    "summary deeply nested": (_nested, "summary.json"),
    "summary not JSON": (lambda f: _set_summary(f, "{not json"), "summary.json"),
    "summary not UTF-8": (lambda f: (f / "summary.json").write_bytes(b'{"gate": "\xff\xfe"}'), "summary.json"),
    "gate missing": (lambda f: _set_summary(f, {k: v for k, v in _summary(f).items() if k != "gate"}), "gate"),
    "gate a list": (_key("gate", []), "gate"),
    "gate.cut NaN": (_stamp("cut", float("nan")), "gate.cut"),
    "gate.cut -1": (_stamp("cut", -1), "gate.cut"),
    "gate.cut 1e309": (lambda f: _set_summary(f, json.dumps(_summary(f)).replace('"cut": 0.6', '"cut": 1e309')),
                       "gate.cut"),
    "gate.cut 3": (_stamp("cut", 3.0), "gate.cut"),
    "gate.cut text": (_stamp("cut", "0.6"), "gate.cut"),
    "gate.cut null": (_stamp("cut", None), "gate.cut"),
    "gate.cut true": (_stamp("cut", True), "gate.cut"),
    "gate.keep text": (_stamp("keep", "4"), "gate.keep"),
    "gate.cut a huge list": (_stamp("cut", list(range(400))), "gate.cut"),
    "gate.keep 0": (_stamp("keep", 0), "gate.keep"),
    "gate.keep 2.5": (_stamp("keep", 2.5), "gate.keep"),
    "gate.primary_k 0": (_stamp("primary_k", 0), "gate.primary_k"),
    "gate.primary_k -3": (_stamp("primary_k", -3), "gate.primary_k"),
    "truth a string": (_key("truth", "x"), "truth"),
    "truth.questions text": (lambda f: _key("truth", {**_summary(f)["truth"], "questions": "many"})(f),
                             "truth.questions"),
    "destroyed a string": (_key("destroyed", "x"), "destroyed"),
    "per_query without needle_rank": (_drop_column("per_query.csv", "needle_rank"), "needle_rank"),
    "per_query without query_id": (_drop_column("per_query.csv", "query_id"), "query_id"),
    "gate_inputs without closest_holder": (_drop_column("gate_inputs.csv", "closest_holder"), "closest_holder"),
    "gate_inputs without kind": (_drop_column("gate_inputs.csv", "kind"), "kind"),
    "gate_inputs closest text": (_cell("gate_inputs.csv", "closest", "abc"), "closest"),
    "gate_inputs closest_holder NaN": (_cell("gate_inputs.csv", "closest_holder", "nan"), "closest_holder"),
    "gate_inputs closest -5": (_cell("gate_inputs.csv", "closest", "-5"), "closest"),
    "gate_inputs keep text": (_cell("gate_inputs.csv", "keep", "x"), "keep"),
    "per_query needle_rank text": (_cell("per_query.csv", "needle_rank", "abc"), "needle_rank"),
    "gate_inputs empty": (_replace("gate_inputs.csv", lambda p, f: p.write_text("")), "gate_inputs.csv"),
    "per_query NUL bytes": (_replace("per_query.csv", lambda p, f: p.write_bytes(b"strategy,retr\x00iever\n")),
                            "per_query.csv"),
    "per_query a folder": (_replace("per_query.csv", lambda p, f: p.mkdir()), "per_query.csv"),
    "summary a link to another file": (_replace("summary.json", lambda p, f: p.symlink_to(f / "per_query.csv")),
                                       "summary.json"),
    "summary a link to /dev/zero": (_replace("summary.json", lambda p, f: p.symlink_to("/dev/zero")),
                                    "summary.json"),
    "summary a FIFO": (_replace("summary.json", lambda p, f: os.mkfifo(p)), "summary.json"),
    "gate_inputs a link to /dev/zero": (_replace("gate_inputs.csv", lambda p, f: p.symlink_to("/dev/zero")),
                                        "gate_inputs.csv"),
    "parquet only, damaged": (lambda f: ((f / "per_query.csv").unlink(), (f / "per_query.parquet").write_bytes(b"x")),
                              "per_query.parquet"),
    "summary over the size limit": (lambda f: _set_summary(f, json.dumps(_summary(f)) + " " * _largest(f)),
                                    "summary.json"),
}


def _largest(folder: Path) -> int:
    return max(p.stat().st_size for p in folder.iterdir() if p.is_file())


def _one_line_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("side", ["baseline", "candidate"])
@pytest.mark.parametrize("name", list(MALFORMED))
def test_every_malformed_input_exits_2_with_one_line_naming_file_and_field(base_run, tmp_path, capsys, monkeypatch,
                                                                           name, side):
    # a limit just over the largest file of the unmutated folder (one mutation pads summary.json past it)
    monkeypatch.setenv("RAGDIAG_MAX_GATE_BYTES", str(_largest(base_run) + 100))
    mutate, field = MALFORMED[name]
    bad = _copy(base_run, tmp_path / "bad")
    mutate(bad)
    good = base_run
    argv = [bad, good] if side == "baseline" else [good, bad]
    code, out, err = run(capsys, "gate", *argv, "--config", CONFIG)
    line = _one_line_error(err)
    assert code == 2, line
    assert str(bad) in line and field in line, line
    assert len(line) < 500 + len(str(bad)), line  # one short line, whatever the input holds


def test_a_folder_with_only_the_parquet_is_read(base_run, tmp_path, capsys):
    cand = _copy(base_run, tmp_path / "cand")
    (cand / "per_query.csv").unlink()
    assert run(capsys, "gate", base_run, cand, "--config", CONFIG)[0] == 0


def test_there_are_at_least_30_malformed_inputs():
    assert len(MALFORMED) >= 30


@pytest.mark.parametrize("name", list(MALFORMED))
def test_the_pytest_helper_refuses_the_same_inputs(base_run, tmp_path, monkeypatch, name):
    from ragdiag.testing import assert_no_regression

    monkeypatch.setenv("RAGDIAG_MAX_GATE_BYTES", str(_largest(base_run) + 100))
    bad = _copy(base_run, tmp_path / "bad")
    MALFORMED[name][0](bad)
    with pytest.raises(ValueError, match=MALFORMED[name][1]):
        assert_no_regression(bad, base_run, config=CONFIG)
    with pytest.raises(ValueError, match=MALFORMED[name][1]):
        assert_no_regression(base_run, bad, config=CONFIG)


@pytest.mark.parametrize("kwargs, name", [
    ({"cut": float("nan")}, "cut"), ({"cut": -5}, "cut"), ({"cut": math.inf}, "cut"), ({"cut": 1e9}, "cut"),
    ({"cut": "0.5"}, "cut"), ({"margin": float("nan")}, "margin"), ({"margin": -0.1}, "margin"),
    ({"alpha": 0.9}, "alpha"), ({"strict": "yes"}, "strict"), ({"config": None}, "config"),
    ({"config": 42}, "config"), ({"config": "nonsense"}, "config"), ({"candidate_config": 3}, "candidate_config"),
    ({"candidate": 42}, "candidate"), ({"candidate": None}, "candidate"), ({"baseline_dir": b"run"}, "baseline_dir"),
    ({"baseline_dir": None}, "baseline_dir"), ({"baseline_dir": ""}, "baseline_dir"),
])
def test_the_pytest_helper_names_every_bad_argument(base_run, kwargs, name):
    from ragdiag.testing import assert_no_regression

    args = {"baseline_dir": base_run, "candidate": base_run, "config": CONFIG, **kwargs}
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        assert_no_regression(args.pop("baseline_dir"), args.pop("candidate"), **args)


def test_a_malformed_limit_is_exit_2(base_run, capsys, monkeypatch):
    monkeypatch.setenv("RAGDIAG_MAX_GATE_BYTES", "lots")
    code, out, err = run(capsys, "gate", base_run, base_run, "--config", CONFIG)
    assert code == 2 and "RAGDIAG_MAX_GATE_BYTES must be a positive integer" in _one_line_error(err)


@pytest.mark.parametrize("cut", ["nan", "-1", "1e309", "inf", "2.5"])
def test_the_cli_refuses_a_cut_out_of_range(base_run, capsys, cut):
    code, out, err = run(capsys, "gate", base_run, base_run, "--config", CONFIG, "--cut", cut)
    assert code == 2 and "--cut must be a finite cosine distance" in _one_line_error(err)


# --- real regressions: the candidate's gate inputs mutated --------------------------------------------------------
def _gate_rows(folder: Path) -> tuple[list[str], list[dict]]:
    rows = list(csv.DictReader(io.StringIO((folder / "gate_inputs.csv").read_text(encoding="utf-8"), newline="")))
    return list(rows[0]), rows


def _write_rows(folder: Path, header, rows) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=header)
    writer.writeheader()
    writer.writerows(rows)
    (folder / "gate_inputs.csv").write_text(buf.getvalue(), encoding="utf-8")


def _answered_rate(rows, cut: float) -> float:
    mine = [r for r in rows if r["strategy"] == "C" and r["kind"] == "answerable"]
    return sum(float(r["closest_holder"]) < cut for r in mine) / len(mine)


@pytest.fixture(scope="module")
def answering_run(base_run, tmp_path_factory):
    """``base_run`` stamped with a cut that answers every answerable query it ranks (the FAKE encoder's distances
    are far from MiniLM's; at 0.6 it answers nothing, and nothing could be lost)."""
    folder = _copy(base_run, tmp_path_factory.mktemp("answering") / "run")
    _, rows = _gate_rows(folder)
    finite = [float(r["closest_holder"]) for r in rows if r["strategy"] == "C" and math.isfinite(float(r["closest_holder"]))]
    doc = _summary(folder)
    doc["gate"]["cut"] = min(2.0, round(max(finite) + 0.01, 3))
    _set_summary(folder, doc)
    assert _answered_rate(rows, doc["gate"]["cut"]) >= 0.5
    return folder


def test_losing_every_answer_fails_with_exit_1(answering_run, tmp_path, capsys):
    base_run = answering_run
    cand = _copy(base_run, tmp_path / "cand")
    header, rows = _gate_rows(cand)
    for r in rows:
        if r["strategy"] == "C" and r["kind"] == "answerable":
            r["closest_holder"] = "inf"
    _write_rows(cand, header, rows)
    code, out, err = run(capsys, "gate", base_run, cand, "--config", CONFIG)
    assert code == 1, out + err
    assert "answered" in out and "fail" in out


def test_a_newly_destroyed_needle_fails_with_exit_1(base_run, capsys):
    code, out, err = run(capsys, "gate", base_run, base_run, "--config", CONFIG, "--candidate-config", "A/dense")
    assert code == 1 and "Newly destroyed" in out


@pytest.mark.parametrize("seed", range(40))
def test_a_candidate_that_lost_more_than_the_margin_never_passes(answering_run, tmp_path, capsys, seed):
    """Random mutations of the candidate's distances (answers lost and found, bluffs added): whenever the answered
    rate at the baseline's cut fell by more than the margin, the exit code is not 0 (1 or 3), never 2."""
    base_run = answering_run
    rng = random.Random(seed)
    cut = _summary(base_run)["gate"]["cut"]
    cand = _copy(base_run, tmp_path / "cand")
    header, rows = _gate_rows(cand)
    before = _answered_rate(rows, cut)
    for r in rows:
        if r["strategy"] != "C":
            continue
        roll = rng.random()
        if r["kind"] == "answerable" and roll < 0.45:
            r["closest_holder"] = rng.choice(["inf", repr(cut), repr(cut + rng.random())])  # lost (at the cut: not under it)
        elif r["kind"] == "answerable" and roll < 0.55:
            r["closest_holder"] = repr(rng.uniform(0, cut * 0.99))  # found
            r["closest"] = repr(min(float(r["closest"]), float(r["closest_holder"])))
        elif r["kind"] != "answerable" and roll < 0.5:
            r["closest"] = repr(rng.uniform(0, 2))
    _write_rows(cand, header, rows)
    after = _answered_rate(rows, cut)
    code, out, err = run(capsys, "gate", base_run, cand, "--config", CONFIG)  # the default margin, 0.05
    assert code in (0, 1, 3), err
    if before - after > 0.05:
        assert code != 0, (before, after, out)
    OUTCOMES.append((round(before - after, 3), code))


OUTCOMES: list = []


def test_the_random_mutations_covered_losses_and_both_refusals():
    """The property above was not vacuous: some mutations lost more than the margin, some failed outright."""
    if len(OUTCOMES) < 40:
        pytest.skip("run with the property test")
    assert sum(drop > 0.05 for drop, _ in OUTCOMES) >= 10
    assert any(code == 1 for _, code in OUTCOMES)
