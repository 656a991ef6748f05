"""``RAGDIAG_TEST_TIMES``: each test file's wall and CPU time (its child processes' too) and each failure as it
happens (``tests/helpers/timing.py``), summed by ``scripts/suite_times.py``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import suite_times  # noqa: E402

#: The tests of the run the plugin watches. A process they end is sampled first (``timing.sample_now``, as the
#: sampler would have within PERIOD), so the figures do not hang on when the sampler last ran.
CASES = '''
import os, subprocess, sys, time
from timing import sample_now

def _cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def test_passes():
    pass

def test_fails():
    assert 1 == 2

def test_starts_a_process_that_burns_cpu(request):
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    while _cpu(p.pid) < 0.4:  # a state: it has burnt 0.4 CPU seconds
        time.sleep(0.05)
    sample_now(request.config)
    p.kill()
    p.wait()
'''


#: As Chromium's renderers: a grandchild that burns CPU and is never waited for (its parent is killed), so the
#: kernel's count of ended children never sees its CPU; the samples do.
UNWAITED = '''
import os, signal, subprocess, sys, time

BURN = "import time\\nwhile True: pass"
PARENT = ("import subprocess, sys, time\\n"
          "p = subprocess.Popen([sys.executable, '-c', %r])\\n"
          "print(p.pid, flush=True)\\n"
          "time.sleep(300)\\n" % BURN)

def _cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def test_a_grandchild_nobody_waits_for(request):
    from timing import sample_now

    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    while _cpu(child) < 0.6:  # a state, not a moment: the grandchild has burnt 0.6 CPU seconds
        time.sleep(0.05)
    sample_now(request.config)
    os.kill(child, signal.SIGKILL)  # left a zombie of the parent's: never waited for
    parent.kill()
    parent.wait()
'''


@pytest.fixture(scope="module")
def times(tmp_path_factory):
    """A run of three tests (one fails, one starts a process that burns 0.4 CPU seconds) with the plugin on."""
    base = tmp_path_factory.mktemp("times")
    (base / "test_cases.py").write_text(CASES, encoding="utf-8")
    (base / "test_more.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    (base / "test_unwaited.py").write_text(UNWAITED, encoding="utf-8")
    out = base / "times.tsv"
    env = {**os.environ, "RAGDIAG_TEST_TIMES": str(out), "PYTHONPATH": str(ROOT / "tests" / "helpers")}
    env.pop("PYTEST_XDIST_WORKER", None)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "timing", "-p", "no:cacheprovider", "-q",
                          "test_cases.py", "test_more.py", "test_unwaited.py"], cwd=base, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr  # the one failure
    return out


def test_each_file_is_a_line_with_its_tests_and_its_processes_cpu(times):
    lines = [line.split("\t") for line in times.read_text(encoding="utf-8").splitlines()]
    files = {parts[1]: parts for parts in lines if parts[0] == "file"}
    assert set(files) == {"test_cases.py", "test_more.py", "test_unwaited.py"}
    cases = files["test_cases.py"]
    assert cases[5] == "3" and cases[6] == "main"
    assert float(cases[4]) >= 0.4  # the process it started: 0.4 CPU seconds
    assert float(files["test_more.py"][4]) < 0.3


def test_a_descendant_that_is_never_waited_for_is_counted_from_the_samples(times):
    line = next(parts for parts in (x.split("\t") for x in times.read_text(encoding="utf-8").splitlines())
                if parts[:2] == ["file", "test_unwaited.py"])
    assert float(line[4]) >= 0.6  # the grandchild's 0.6 CPU seconds


def test_the_processes_cpu_is_also_written_by_command_name(times):
    lines = [x.split("\t") for x in times.read_text(encoding="utf-8").splitlines()]
    named = dict(item.rpartition("=")[::2] for parts in lines if parts[:2] == ["processes", "test_unwaited.py"]
                 for item in parts[2].split())
    assert float(named["python"]) >= 0.6, named  # the grandchild is a Python process


def test_a_failure_is_written_when_it_happens_before_its_file_ends(times):
    lines = times.read_text(encoding="utf-8").splitlines()
    failed = lines.index("failed\ttest_cases.py::test_fails\tcall")
    ends = next(i for i, line in enumerate(lines) if line.startswith("file\ttest_cases.py\t"))
    assert failed < ends


def test_the_summary_lists_the_files_by_cpu_and_names_the_failure(times, capsys):
    assert suite_times.main([str(times)]) == 1  # a failure in the run
    out = capsys.readouterr().out
    assert out.startswith("3 files, 5 tests: ")
    assert out.index("test_cases.py") < out.index("test_more.py")  # the costlier first
    assert "failed: 1\n  test_cases.py::test_fails (call)" in out
    assert re.search(r"by command name \(sampled\):\n  python +\d+ CPU s", out), out


@pytest.mark.parametrize("content, message", [
    ("file\tx.py\t1\n", "not a line of RAGDIAG_TEST_TIMES"),
    ("something else\n", "not a line of RAGDIAG_TEST_TIMES"),
])
def test_a_file_that_is_not_a_times_file_is_refused_with_its_line(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.tsv"
    bad.write_text(content, encoding="utf-8")
    assert suite_times.main([str(bad)]) == 2
    assert f"bad.tsv:1: {message}" in capsys.readouterr().err


def test_a_missing_file_says_how_to_make_one(tmp_path, capsys):
    assert suite_times.main([str(tmp_path / "none.tsv")]) == 2
    assert "run the tests with RAGDIAG_TEST_TIMES=" in capsys.readouterr().err


def test_the_costs_table_lists_the_longest_files_first_and_the_collection_takes_them_first(times, tmp_path):
    """``--costs`` writes the files by wall time, longest first; ``file_order`` reads it back and puts those files
    first in the collection (each file's tests in their order, every other file after them in its own)."""
    from types import SimpleNamespace

    from file_order import costliest_first, read_costs

    table = tmp_path / "costs.tsv"
    assert suite_times.main([str(times), "--costs", str(table)]) == 1  # the run's one failure, as without --costs
    costs = read_costs(table)
    walls = {parts[1]: float(parts[2]) for parts in (x.split("\t") for x in times.read_text(encoding="utf-8")
                                                     .splitlines()) if parts[0] == "file"}
    assert list(costs) == sorted(walls, key=lambda f: -walls[f])
    assert costs == {f: pytest.approx(w, abs=0.5) for f, w in walls.items()}
    items = [SimpleNamespace(path=tmp_path / name, name=f"{name}::{i}")
             for name in ("test_new.py", *sorted(costs)) for i in range(2)]
    ordered = [item.name.split("::") for item in costliest_first(items, costs, tmp_path)]
    assert [int(i) for _, i in ordered] == [0, 1] * (len(costs) + 1)  # each file's tests together, in their order
    files = [name for name, i in ordered if i == "0"]
    assert [costs.get(f, 0.0) for f in files] == sorted((costs.get(f, 0.0) for f in files), reverse=True)
    assert all(files.index(f) < files.index("test_new.py") for f, c in costs.items() if c > 0)  # not in the table


@pytest.mark.parametrize("line", ["tests/a.py\n", "tests/a.py\tsoon\n", "tests/a.py\t-3\n"])
def test_a_costs_table_line_that_is_not_a_file_and_seconds_is_refused_with_its_number(tmp_path, line):
    from file_order import read_costs

    table = tmp_path / "costs.tsv"
    table.write_text("# comment\ntests/b.py\t4\n" + line, encoding="utf-8")
    with pytest.raises(ValueError, match=r"costs.tsv:3: not 'file<TAB>seconds'"):
        read_costs(table)


def test_the_suite_takes_the_costliest_file_of_its_table_first():
    """The checkout's own table: the first file this suite collects is the table's first (run.sh keeps the order
    with --no-loadscope-reorder, see tests/conftest.py)."""
    from file_order import read_costs

    first = next(iter(read_costs(ROOT / "tests" / "file_costs.tsv")))
    assert (ROOT / first).is_file(), f"tests/file_costs.tsv names {first}, which is not a file: write the table anew"
    run = subprocess.run([sys.executable, "-m", "pytest", "-m", "", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "tests/unit/test_stats.py", first], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0].startswith(first + "::"), run.stdout[:500]
    assert "--no-loadscope-reorder" in (ROOT / "run.sh").read_text(encoding="utf-8")
