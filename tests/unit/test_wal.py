"""core.wal: the switch to WAL mode waits out another process's switch, and raises anything else."""

from __future__ import annotations

import sqlite3

import pytest

from ragdiag.core.wal import switch_to_wal


class _FakeLockedThenFree:
    """Fake connection (plumbing only): the journal-mode switch is refused ``refusals`` times, as SQLite refuses
    it without calling its busy handler while another process switches the same new file."""

    def __init__(self, refusals: int, message: str = "database is locked"):
        self.refusals, self.message, self.calls = refusals, message, 0

    def execute(self, sql):
        self.calls += 1
        if self.calls <= self.refusals:
            raise sqlite3.OperationalError(self.message)


def test_waits_out_a_lock_the_busy_handler_does_not_see():
    con = _FakeLockedThenFree(refusals=3)
    switch_to_wal(con, 5.0)
    assert con.calls == 4


def test_raises_any_other_error_at_once():
    con = _FakeLockedThenFree(refusals=3, message="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        switch_to_wal(con, 5.0)
    assert con.calls == 1


def test_a_lock_held_past_the_timeout_is_raised():
    con = _FakeLockedThenFree(refusals=10**9)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        switch_to_wal(con, 0.05)
