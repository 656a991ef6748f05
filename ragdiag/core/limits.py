"""Bounds on every input: what may be read, and how much of it.

Only regular files are read (never a FIFO, a device or a socket: ``/dev/zero``
would read forever, a FIFO would block). Every read has a byte limit, and a
corpus has limits on its number of files, its total bytes and its folder depth.
The limits have defaults sized well above real corpora and run files; the
operator overrides each with an environment variable (named in every message
that reports a limit).

>>> Limits().max_files, Limits.from_env({"RAGDIAG_MAX_FILES": "10"}).max_files
(5000, 10)
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Mapping

__all__ = ["Limits", "LimitError", "read_limited", "read_stream_limited", "read_input", "file_kind", "ENV"]

# field -> environment variable that overrides it
ENV = {
    "max_files": "RAGDIAG_MAX_FILES",
    "max_file_bytes": "RAGDIAG_MAX_FILE_BYTES",
    "max_total_bytes": "RAGDIAG_MAX_CORPUS_BYTES",
    "max_depth": "RAGDIAG_MAX_DEPTH",
    "max_truth_bytes": "RAGDIAG_MAX_TRUTH_BYTES",
    "max_run_bytes": "RAGDIAG_MAX_RUN_BYTES",
    "max_gate_bytes": "RAGDIAG_MAX_GATE_BYTES",
}


class LimitError(ValueError):
    """An input over a limit, or not a regular file; the message says which and how to raise the limit."""


@dataclass(frozen=True)
class Limits:
    """Limits on inputs (defaults; each overridable by the environment variable in :data:`ENV`)."""

    max_files: int = 5000  # files (any type, hidden ones excluded) under a corpus folder
    max_file_bytes: int = 50_000_000  # one corpus file
    max_total_bytes: int = 500_000_000  # all supported files of a corpus together
    max_depth: int = 32  # folder nesting under a corpus folder
    max_truth_bytes: int = 20_000_000  # a ground-truth file
    max_run_bytes: int = 20_000_000  # a run file (the dashboard's upload limit matches it)
    max_gate_bytes: int = 500_000_000  # one file of an `eval --out` folder the regression gate reads

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        """The defaults, with every ``RAGDIAG_MAX_*`` variable that is set (a positive integer) applied."""
        env = os.environ if env is None else env
        values = {}
        for f in fields(cls):
            raw = env.get(ENV[f.name], "").strip().replace("_", "")
            if not raw:
                continue
            try:
                value = int(raw)
            except ValueError:
                raise LimitError(f"{ENV[f.name]} must be a positive integer, got {raw!r}") from None
            if value < 1:
                raise LimitError(f"{ENV[f.name]} must be a positive integer, got {raw!r}")
            values[f.name] = value
        return cls(**values)


def file_kind(mode: int) -> str:
    """A human name for a non-regular file's type.

    >>> file_kind(stat.S_IFIFO), file_kind(stat.S_IFCHR)
    ('named pipe (FIFO)', 'character device')
    """
    if stat.S_ISFIFO(mode):
        return "named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISDIR(mode):
        return "folder"
    return "special file"


def read_limited(path: str | os.PathLike, limit: int, *, what: str = "file", env_var: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Raises :class:`LimitError` for anything that is not a regular file (checked
    on the opened descriptor, which is opened non-blocking so a FIFO cannot
    hang) or is larger than ``limit``; ``OSError`` when it cannot be opened.
    """
    fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise LimitError(f"{what} {Path(path).name!r} is a {file_kind(st.st_mode)}, not a regular file")
        raise_hint = f" (set {env_var} to raise the limit)" if env_var else ""
        if st.st_size > limit:
            raise LimitError(f"{what} {Path(path).name!r} is {st.st_size:,} bytes; the limit is {limit:,}{raise_hint}")
        chunks, total = [], 0
        while True:
            block = os.read(fd, min(1 << 20, limit + 1 - total))
            if not block:
                break
            chunks.append(block)
            total += len(block)
            if total > limit:  # grew while we read
                raise LimitError(f"{what} {Path(path).name!r} is over the limit of {limit:,} bytes{raise_hint}")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_stream_limited(stream, limit: int, *, what: str = "input", env_var: str | None = None) -> bytes:
    """At most ``limit`` bytes of a binary ``stream`` (standard input in a pipeline), else :class:`LimitError`.

    >>> import io
    >>> read_stream_limited(io.BytesIO(b"abc"), 3)
    b'abc'
    """
    chunks, total = [], 0
    while True:
        block = stream.read(min(1 << 20, limit + 1 - total))
        if not block:
            return b"".join(chunks)
        chunks.append(block)
        total += len(block)
        if total > limit:
            hint = f" (set {env_var} to raise the limit)" if env_var else ""
            raise LimitError(f"{what} is over the limit of {limit:,} bytes{hint}")


def read_input(path: str | os.PathLike, key: str, *, what: str, limits: "Limits | None" = None,
               hint: str = "") -> bytes:
    """The bytes of an input file (ground truth, run file) under the limit ``limits.<key>``.

    Every way it can fail raises ``ValueError`` with one line a user can act on
    (``hint`` follows "file not found" and "is a folder"); callers wrap it in
    their own typed error.
    """
    try:
        limits = limits or Limits.from_env()
        return read_limited(path, getattr(limits, key), what=what, env_var=ENV[key])
    except FileNotFoundError:
        raise ValueError("file not found" + (f"; {hint}" if hint else "")) from None
    except IsADirectoryError:
        raise ValueError("is a folder" + (f"; {hint}" if hint else f", not a {what}")) from None
    except LimitError as exc:
        raise ValueError(str(exc)) from None
    except OSError as exc:
        raise ValueError(f"cannot read it: {exc.strerror or exc}") from None
