"""Eight processes opening one new SQLite file (the history, the cache) at the same moment: every one opens it.

SQLite refuses the switch to WAL mode without waiting ("database is locked")
while another process switches the same new file; CI met this once with two
history writers. The race is rare, so each file is opened in four rounds of
eight processes that start together.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # 32 interpreters a file

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
    import sys, time
    from pathlib import Path
    go = Path(sys.argv[2])
    Path(sys.argv[3]).touch()  # imported, ready to open
    while not go.exists():
        time.sleep(0.002)
    open_it(Path(sys.argv[1]))
"""


@pytest.mark.parametrize("what", sorted(_OPEN))
def test_eight_processes_opening_a_new_file_at_once_all_open_it(tmp_path, what):
    code = textwrap.dedent(_OPEN[what]) + textwrap.dedent(_THEN)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    failures = []
    for round_ in range(4):
        folder = tmp_path / f"round{round_}"
        folder.mkdir()
        go = folder / "go"
        ready = [folder / f"ready{i}" for i in range(8)]
        procs = [subprocess.Popen([sys.executable, "-c", code, str(folder), str(go), str(r)],
                                  env=env, stderr=subprocess.PIPE, text=True) for r in ready]
        deadline = time.monotonic() + 300
        while not all(r.exists() for r in ready):  # every process imported: they open together
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "a process did not start"
            time.sleep(0.01)
        go.touch()
        for p in procs:
            if p.wait(timeout=300) != 0:
                failures.append(p.stderr.read().strip().splitlines()[-1])
    assert failures == []
