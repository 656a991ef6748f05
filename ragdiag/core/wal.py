"""Put an SQLite file in WAL mode when several processes may open it at once.

SQLite does not call its busy handler while it switches a file's journal
mode (the switch needs the file to itself), so two processes opening the same
new file at once can have one fail at once with "database is locked", however
long its ``busy_timeout``. :func:`switch_to_wal` retries instead, with a short
random pause, until ``timeout_s`` has passed.
"""

from __future__ import annotations

import random
import sqlite3
import time

__all__ = ["switch_to_wal"]


def switch_to_wal(con: sqlite3.Connection, timeout_s: float) -> None:
    """``PRAGMA journal_mode = WAL`` on ``con``, waiting up to ``timeout_s`` for another process's switch.

    Any error other than a lock is raised at once.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            con.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            locked = "locked" in str(exc) or "busy" in str(exc)
            if not locked or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.005, 0.05))
