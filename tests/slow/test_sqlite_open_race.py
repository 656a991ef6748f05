"""Eight processes opening one new SQLite file (the history, the cache) at the same moment: every one opens it.

SQLite refuses the switch to WAL mode without waiting ("database is locked")
while another process switches the same new file; CI met this once with two
history writers. The race is rare, so each file is opened in four rounds by
eight processes that start each round together.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # 8 interpreters a file, 4 rounds each

REPO = Path(__file__).resolve().parents[2]

_OPEN = {
    "history": """
        from ragdiag.present.history import open_history
        def open_it(path):
            with open_history(path / "h.sqlite") as hist:
                assert hist.runs() == ()
    """,
    "cache": """
        from ragdiag.index.store.engine import Engine
        def open_it(path):
            with Engine(path / "cache") as engine:
                assert engine.path.is_file()
    """,
}
_THEN = """
    import sys, time, traceback
    from pathlib import Path
    base, rounds, me = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    for k in range(rounds):
        folder = base / f"round{k}"
        (folder / f"ready{me}").touch()  # imported (or done with the last round), ready to open
        while not (folder / "go").exists():
            time.sleep(0.002)
        try:
            open_it(folder)
        except Exception:
            (folder / f"failed{me}").write_text(traceback.format_exc().strip().splitlines()[-1])
"""
ROUNDS, PROCESSES = 4, 8


@pytest.mark.parametrize("what", sorted(_OPEN))
def test_eight_processes_opening_a_new_file_at_once_all_open_it(tmp_path, what):
    """The same eight processes open a new file in each round (an interpreter's start is most of the CPU: 8
    interpreters a file rather than 32); a round starts when every one of them is ready for it."""
    code = textwrap.dedent(_OPEN[what]) + textwrap.dedent(_THEN)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for k in range(ROUNDS):
        (tmp_path / f"round{k}").mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(ROUNDS), str(i)],
                              env=env, stderr=subprocess.PIPE, text=True) for i in range(PROCESSES)]
    failures = []
    try:
        for k in range(ROUNDS):
            folder = tmp_path / f"round{k}"
            ready = [folder / f"ready{i}" for i in range(PROCESSES)]
            deadline = time.monotonic() + 300
            while not all(r.exists() for r in ready):  # every process is here: they open together
                assert time.monotonic() < deadline, f"round {k}: a process did not get ready"
                assert all(p.poll() is None for p in procs), [p.stderr.read() for p in procs if p.poll() is not None]
                time.sleep(0.01)
            (folder / "go").touch()
        for p in procs:
            assert p.wait(timeout=300) == 0, p.stderr.read()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for k in range(ROUNDS):
        failures += [f.read_text() for f in sorted((tmp_path / f"round{k}").glob("failed*"))]
    assert failures == []
