"""The readers that came after the last hardening round: one line naming file and field, never a traceback.

``--current-from`` (YAML with recursive aliases or an alias bomb, deep JSON),
the ground truth's YAML (the same loader), the pytest plugin's
``[tool.ragdiag]`` (``tool = 1``, settings of the wrong type), a run's
``needle_rank`` of ``nan``, and ``history add``'s ``summary.json`` (a pipe, a
device, not an object).
"""

from __future__ import annotations

import os
import sys
import time

import pytest

from ragdiag.analyses.threshold.proposal import cut_from_file
from ragdiag.core.safe_yaml import YamlLimitError, load_yaml

LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))


@pytest.mark.parametrize("text, words", [
    ("a: &a [*a]\nscore_threshold: 0.5\n", "recursive alias"),
    ("a: &a {b: *a}\n", "recursive alias"),
    (LAUGHS + "score_threshold: 0.5\n", "alias bomb"),
    ("x: " + "[" * 300 + "]" * 300 + "\n", "nested over"),
])
def test_yaml_limits(text, words):
    start = time.process_time()  # CPU, what a bomb would cost; a busy machine stretches wall time, not this
    with pytest.raises(YamlLimitError, match=words):
        load_yaml(text)
    assert time.process_time() - start < 2.0
    assert len(LAUGHS) < 1024  # the "billion laughs" is under 1 KB


def test_yaml_aliases_within_limits_still_load():
    assert load_yaml("base: &b {k: 1}\nother: *b\nlist: [*b, *b]\n") == {
        "base": {"k": 1}, "other": {"k": 1}, "list": [{"k": 1}, {"k": 1}]}


@pytest.mark.parametrize("name, text, words", [
    ("rec.yaml", "a: &a [*a]\nscore_threshold: 0.5\n", "recursive alias"),
    ("laughs.yaml", LAUGHS + "score_threshold: 0.5\n", "alias bomb"),
    ("deep.json", "[" * 5000 + "]" * 5000, "cannot be read"),
    ("deep.toml", "a = " + "[" * 3000 + "]" * 3000 + "\n", "cannot be read"),
])
def test_current_from_is_one_line_naming_the_file(tmp_path, name, text, words):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=words) as err:
        cut_from_file(path)
    assert str(err.value).startswith(f"--current-from {path}") and "\n" not in str(err.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_current_from_a_pipe_is_refused_not_read(tmp_path):
    fifo = tmp_path / "cut.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a file"):
        cut_from_file(fifo)


def test_truth_yaml_alias_bomb_is_a_truth_error(tmp_path):
    from ragdiag.documents.truth import TruthError, decode_truth

    with pytest.raises(TruthError, match="alias bomb"):
        decode_truth((LAUGHS + "questions: []\n").encode(), tmp_path / "kb.truth.yaml")
    with pytest.raises(TruthError, match="recursive alias"):
        decode_truth(b"questions: &q [*q]\n", tmp_path / "kb.truth.yaml")


@pytest.mark.parametrize("toml, words", [
    ("tool = 1\n", "tool is int, not a table"),
    ("[tool]\nragdiag = \"x\"\n", "tool.ragdiag is str, not a table"),
    ("[tool.ragdiag]\nmargin = \"five\"\n", "margin is str; write a number"),
    ("[tool.ragdiag]\nmargin = true\n", "margin is bool; write a number"),
    ("[tool.ragdiag]\nstrict = \"false\"\n", "strict is str; write true or false"),
    ("[tool.ragdiag]\nbaseline = 3\n", "baseline is int; write text"),
    ("[tool.ragdiag]\nconfig = [\"E/hybrid\"]\n", "config is list; write text"),
    ("a = " + "[" * 3000 + "]" * 3000 + "\n", "cannot be read"),
    (b"\xff\xfe = 1\n", "cannot be read"),
])
def test_plugin_settings_of_the_wrong_kind_are_one_line(tmp_path, toml, words):
    from ragdiag.pytest_plugin import read_settings

    path = tmp_path / "pyproject.toml"
    path.write_bytes(toml if isinstance(toml, bytes) else toml.encode())
    with pytest.raises(ValueError, match=words) as err:
        read_settings({}, path, tmp_path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


@pytest.mark.parametrize("rank", ["nan", "NaN", "None", "<NA>", "inf"])
def test_a_needle_rank_that_is_not_a_number_is_refused(rank):
    from ragdiag.present.regression.runs import RunError, _rank

    with pytest.raises(RunError, match="needle_rank must be a whole number or empty"):
        _rank(rank, "per_query.csv line 2")
    assert _rank("", "x") == 0 and _rank("3", "x") == 3 and _rank("-1", "x") == 0


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "list", "nested", "binary"])
def test_history_reads_summary_json_checked(tmp_path, kind):
    from ragdiag.present.history import HistoryError, read_summary

    summary = tmp_path / "summary.json"
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("needs named pipes")
        os.mkfifo(summary)
    elif kind == "dev-zero":
        if not os.path.exists("/dev/zero"):
            pytest.skip("needs /dev/zero")
        summary.symlink_to("/dev/zero")
    else:
        summary.write_bytes({"list": b"[1, 2]", "nested": b"[" * 100_000 + b"]" * 100_000,
                             "binary": b"\xff\xfe\x00"}[kind])
    start = time.process_time()  # CPU (/dev/zero read on would burn it); a pipe never opened fails on the timeout
    with pytest.raises(HistoryError) as err:
        read_summary(tmp_path)
    assert time.process_time() - start < 2.0 and "\n" not in str(err.value) and "summary.json" in str(err.value)


def test_history_add_of_a_pipe_is_exit_2_in_one_line(tmp_path):
    import subprocess

    if not hasattr(os, "mkfifo"):
        pytest.skip("needs named pipes")
    (tmp_path / "run").mkdir()
    os.mkfifo(tmp_path / "run" / "summary.json")
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "history", "add", str(tmp_path / "run"), "--history",
                           str(tmp_path / "h.sqlite")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "summary.json" in proc.stderr and "not a regular file" in proc.stderr
