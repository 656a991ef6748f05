"""The SQLite engine under the store: one connection, WAL, write transactions, corruption handling.

- Every write is one SQLite transaction (WAL journal): a crash mid-write
  leaves the previous state readable, and any number of processes can read
  and write at once (writers queue on ``busy_timeout``).
- A database file that SQLite itself cannot use (a corrupt page, a mangled
  schema, a header it rejects, or a failed ``PRAGMA quick_check`` at open) is
  moved aside as ``ragdiag.sqlite.corrupt-<UTC timestamp>`` and the store
  starts empty, with a :class:`RuntimeWarning`. A cache that cannot be written
  (disk full, locked for longer than the timeout) warns and still returns the
  results (:meth:`Engine._run`).
- A database file deleted or replaced while in use is noticed, and later
  writes go to the new file.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Self

from ...core.wal import switch_to_wal
from .keys import DB_NAME, resolve_root

__all__ = ["Engine", "SCHEMA_VERSION"]

SCHEMA_VERSION = "1"

# SQLite result codes that say nothing about the file's health: PERM, BUSY, LOCKED,
# NOMEM, READONLY, INTERRUPT, IOERR, FULL, CANTOPEN, PROTOCOL, NOLFS, AUTH.
_ENVIRONMENT_CODES = {3, 5, 6, 7, 8, 9, 10, 13, 14, 15, 22, 23}


class _CorruptDatabase(sqlite3.DatabaseError):
    """The database file failed SQLite's own integrity check."""


def _is_corruption(exc: BaseException) -> bool:
    """True when an error means the file is damaged, not that the machine is busy or full.

    Every statement here is fixed and valid, so any SQLite error other than
    the environmental ones (busy, locked, read-only, full, I/O, permission...)
    comes from a damaged file: a corrupt page, a mangled schema ("no such
    column"), a header SQLite rejects ("unsupported file format").
    """
    if isinstance(exc, (_CorruptDatabase, UnicodeDecodeError)):
        # A damaged schema can make even SQLite's error message undecodable.
        return True
    if not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.ProgrammingError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        msg = str(exc).lower()
        return "malformed" in msg or "not a database" in msg
    return (code & 0xFF) not in _ENVIRONMENT_CODES


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: rely on SQLite alone
        yield
        return
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS spaces(space TEXT PRIMARY KEY, kind TEXT NOT NULL, identity TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors(space TEXT NOT NULL, text_sha TEXT NOT NULL, dim INTEGER NOT NULL,
    data BLOB NOT NULL, crc INTEGER NOT NULL, PRIMARY KEY(space, text_sha));
CREATE TABLE IF NOT EXISTS scores(space TEXT NOT NULL, query_sha TEXT NOT NULL, text_sha TEXT NOT NULL,
    data BLOB NOT NULL, crc INTEGER NOT NULL, PRIMARY KEY(space, query_sha, text_sha));
CREATE TABLE IF NOT EXISTS indexes(key TEXT PRIMARY KEY, space TEXT NOT NULL, stamp TEXT NOT NULL,
    crc INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS index_chunks(index_key TEXT NOT NULL, text_sha TEXT NOT NULL,
    PRIMARY KEY(index_key, text_sha)) WITHOUT ROWID;
"""



class Engine:
    """The cache folder's SQLite database (stateful: holds one connection, thread-safe).

    Parameters
    ----------
    root : cache folder; None -> ``$RAGDIAG_CACHE`` or ``./.ragdiag-cache``. Created if missing.
    check : run ``PRAGMA quick_check`` at open (reads the whole file once; a
        file that fails is moved aside and the store starts empty).
    timeout : seconds a writer waits for another process's write to finish.
    """

    def __init__(self, root: str | os.PathLike | None = None, *, check: bool = True, timeout: float = 60.0):
        self.root = resolve_root(root)
        self.root.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            with contextlib.suppress(OSError):
                ignore.write_text("# ragdiag cache: never commit\n*\n")
        self.path = self.root / DB_NAME
        self.check = check
        self.timeout = float(timeout)
        self.quarantined: list[Path] = []  # files this instance moved aside
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None
        with self._lock:
            self._connect()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.root)!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (the last one to close folds the WAL into the file)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # ----- connection, corruption ---------------------------------------------
    def _connect(self) -> None:
        last: BaseException | None = None
        for _ in range(3):
            conn = None
            try:
                self._inode = self.path.stat().st_ino if self.path.exists() else None
                conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                       check_same_thread=False)
                # Damaged text comes back undecodable rather than raising: its checksum then fails.
                conn.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
                conn.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
                switch_to_wal(conn, self.timeout)
                conn.execute("PRAGMA synchronous=NORMAL")
                if self.check:
                    result = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
                    if result != ["ok"]:
                        raise _CorruptDatabase("; ".join(map(str, result)))
                self._ensure_schema(conn)
                if self._inode is None:
                    self._inode = self.path.stat().st_ino
                self._conn = conn
                return
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                if conn is not None:
                    conn.close()
                if not (_is_corruption(exc) or self._readonly_header(exc)):
                    raise
                last = exc
                self._quarantine(str(exc))
        raise RuntimeError(f"ragdiag cache {self.path} stays unreadable after moving it aside: {last}")

    def _readonly_header(self, exc: BaseException) -> bool:
        """A "read-only database" error on a file we may write: a damaged header's write-version byte."""
        code = getattr(exc, "sqlite_errorcode", None)
        return (code is not None and (code & 0xFF) == sqlite3.SQLITE_READONLY and self.path.exists()
                and os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK))

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        def statements() -> None:
            conn.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute("INSERT OR IGNORE INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
            (version,) = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if version != SCHEMA_VERSION:
                raise _CorruptDatabase(f"schema version {version!r}, this ragdiag reads {SCHEMA_VERSION!r}")
            for statement in filter(str.strip, _SCHEMA.split(";")):
                conn.execute(statement)

        self._write(conn, statements)

    def _disconnect(self) -> None:
        """Drop the connection, ignoring errors from a damaged or vanished file."""
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def _quarantine(self, reason: str) -> None:
        """Move the unreadable database (and its WAL) aside; the next connect starts fresh."""
        self._disconnect()
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        with _file_lock(self.root / "ragdiag.lock"):
            try:
                inode = self.path.stat().st_ino
            except FileNotFoundError:
                inode = None
            # Another process may already have replaced the file: leave its fresh one alone.
            if inode is not None and (self._inode is None or inode == self._inode):
                os.replace(self.path, target)
                for suffix in ("-wal", "-journal"):
                    side = self.path.with_name(self.path.name + suffix)
                    if side.exists():
                        os.replace(side, target.with_name(target.name + suffix))
                with contextlib.suppress(FileNotFoundError):
                    self.path.with_name(self.path.name + "-shm").unlink()
                self.quarantined.append(target)
                warnings.warn(f"ragdiag cache {self.path} was unreadable ({reason}); moved aside to "
                              f"{target.name}, starting empty", RuntimeWarning, stacklevel=4)
        self._inode = None

    def _run(self, fn: Callable[[sqlite3.Connection], Any], *, default: Any, what: str) -> Any:
        """Run ``fn(conn)``; on a corrupt file move it aside and retry once on a fresh one.

        A failure that remains (corruption again, disk full, lock timeout)
        warns and returns ``default``: the cache never fails the caller.
        """
        with self._lock:
            self._notice_deleted()
            for attempt in (0, 1):
                try:
                    if self._conn is None:
                        self._connect()
                    return fn(self._conn)
                except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                    if self._conn is not None and self._conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            self._conn.execute("ROLLBACK")
                    if _is_corruption(exc) and attempt == 0:
                        self._quarantine(str(exc))
                        continue
                    if isinstance(exc, sqlite3.OperationalError) or _is_corruption(exc):
                        warnings.warn(f"ragdiag cache {self.path}: {what} failed ({exc}); continuing without it",
                                      RuntimeWarning, stacklevel=3)
                        return default
                    raise
        return default  # pragma: no cover

    def _notice_deleted(self) -> None:
        """The database file was deleted (or replaced) under us: warn, and reconnect to a fresh file.

        Without this every later write would go to the unlinked file and be lost with no sign.
        """
        if self._conn is None:
            return
        try:
            inode = self.path.stat().st_ino
        except FileNotFoundError:
            inode = None
        except OSError:
            return
        if inode is not None and inode == self._inode:
            return
        self._disconnect()
        warnings.warn(f"ragdiag cache {self.path} was deleted or replaced while in use; reconnecting (entries "
                      "computed so far in this run are written to the new file from now on)",
                      RuntimeWarning, stacklevel=4)
        with contextlib.suppress(OSError):
            self.root.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _write(conn: sqlite3.Connection, statements: Callable[[], None]) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            statements()
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # ----- space ----------------------------------------------------------------
    def size_bytes(self) -> int:
        """Bytes on disk: the database file and its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += self.path.with_name(self.path.name + suffix).stat().st_size
        return total

    def _compact(self) -> None:
        with self._lock:
            if self._conn is None:
                return
            try:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._conn.execute("VACUUM")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError:
                pass  # another process is reading: the pages are free for reuse, the file keeps its size

