"""``scripts/busy.sh N CMD``: N busy processes for the length of CMD, none left after it, CMD's exit status kept."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "busy.sh"

pytestmark = pytest.mark.skipif(not (shutil.which("bash") and shutil.which("timeout") and Path("/proc").is_dir()),
                                reason="needs bash, coreutils' timeout and /proc")

#: The command run under busy.sh: prints the pids of its siblings (busy.sh's other children), then exits with 3.
SIBLINGS = """
import os, sys
parent = os.getppid()
for d in os.listdir('/proc'):
    if d.isdigit() and int(d) != os.getpid():
        try:
            stat = open(f'/proc/{d}/stat').read()
        except OSError:
            continue
        if int(stat.rsplit(')', 1)[1].split()[1]) == parent:
            print(d)
sys.exit(3)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_n_busy_processes_run_beside_the_command_and_end_with_it():
    done = subprocess.run([str(SCRIPT), "3", sys.executable, "-c", SIBLINGS], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 3, done.stderr  # the command's own status
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 3, done.stdout  # the three busy processes, beside the command
    assert not [p for p in pids if _alive(p)]  # none left spinning
    assert "3 busy processes" in done.stderr


#: Prints, for each of busy.sh's other children, its own children (none expected), then exits 0.
GRANDCHILDREN = SIBLINGS.replace("print(d)", "siblings.append(d)").replace("parent = os.getppid()", """parent = os.getppid()
siblings = []""").replace("sys.exit(3)", """for s in siblings:
    kids = open(f'/proc/{s}/task/{s}/children').read().split()
    print(s, len(kids))
""")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not Path(f"/proc/self/task/{os.getpid()}/children").exists(),
                    reason="needs /proc/PID/task/PID/children")
def test_each_busy_process_is_a_child_with_no_child_of_its_own():
    """Killing a busy process leaves nothing spinning: no wrapper (``timeout``) whose child a kill could orphan."""
    done = subprocess.run([str(SCRIPT), "2", sys.executable, "-c", GRANDCHILDREN], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert len(rows) == 2 and all(kids == "0" for _, kids in rows), done.stdout


@pytest.mark.parametrize("args", [[], ["2"], ["x", "true"], ["-1", "true"], ["65", "true"]])
def test_a_wrong_call_is_one_line_and_exit_2(args):
    done = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_zero_busy_processes_just_runs_the_command():
    done = subprocess.run([str(SCRIPT), "0", "sh", "-c", "exit 0"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def _live_children(pid: int) -> dict[int, str]:
    """``pid``'s children that have not ended (zombies left out), each with its command name."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return {}
    out = {}
    for k in map(int, kids):
        try:
            name = Path(f"/proc/{k}/comm").read_text().strip()
        except OSError:
            continue
        if _alive(k):
            out[k] = name
    return out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not Path(f"/proc/self/task/{os.getpid()}/children").exists(),
                    reason="needs /proc/PID/task/PID/children")
def test_the_busy_processes_are_bounded_in_time_on_their_own():
    """Each busy process stops on its own after BUSY_LIMIT seconds while busy.sh still waits on its command, so none
    is left spinning even were busy.sh killed outright (no trap runs).

    Reads states, never a moment: the busy processes have started once busy.sh says so, and the test waits until
    only the command is left beside busy.sh, however slowly a loaded machine gets there (a busy process that
    never stops fails on the suite's timeout, with its stack)."""
    proc = subprocess.Popen([str(SCRIPT), "2", "sleep", "600"], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "BUSY_LIMIT": "1"}, start_new_session=True)
    try:
        assert "2 busy processes" in proc.stderr.readline()  # printed once both are started
        while set(_live_children(proc.pid).values()) - {"sleep"}:
            time.sleep(0.1)  # polls a state: the busy processes gone
        assert proc.poll() is None  # busy.sh still waits on its command: they stopped on their own
        assert list(_live_children(proc.pid).values()) == ["sleep"]
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stderr.close()


def test_no_hypothesis_example_has_a_deadline_to_miss_on_a_busy_machine():
    # Hypothesis's default deadline (200 ms an example) is a timing assertion: a loaded run failed on it
    from hypothesis import settings

    assert settings().deadline is None
    assert settings.get_profile("ci").deadline is None and settings.get_profile("explore").deadline is None
