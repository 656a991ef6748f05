"""Many processes opening one new history file at the same moment: every one opens it.

SQLite refuses the switch to WAL mode without waiting ("database is locked")
while another process switches the same new file; CI met this once in two
writers. The race is rare (about 1 process in 50 here), so a few rounds of
eight processes each give it a fair chance to show.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_OPEN = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ragdiag.present.history import open_history
    go = Path(sys.argv[2])
    Path(sys.argv[3]).touch()  # imported, ready to open
    while not go.exists():
        time.sleep(0.002)
    with open_history(sys.argv[1]) as hist:
        assert hist.runs() == ()
""")


def test_eight_processes_opening_a_new_file_at_once_all_open_it(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    failures = []
    for round_ in range(4):
        folder = tmp_path / f"round{round_}"
        folder.mkdir()
        go = folder / "go"
        ready = [folder / f"ready{i}" for i in range(8)]
        procs = [subprocess.Popen([sys.executable, "-c", _OPEN, str(folder / "h.sqlite"), str(go), str(r)],
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
