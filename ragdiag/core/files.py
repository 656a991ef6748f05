"""Every file ragdiag writes: checked before the work starts, written whole or not at all.

One helper for every writer (``eval --out``, ``threshold --export``,
``gate --markdown/--junit``, ``report --out``, the ground-truth editor):

- :func:`check_output` runs *before* the work: the folder exists and can be
  written (a probe file, since ``access()`` says yes to root on a read-only
  mount), the path is not a folder or a special file, it is not one of the
  command's inputs, and an existing file is replaced only with ``force`` or
  when ragdiag wrote it (``ours``).
- :func:`atomic_write` (one file) and :func:`write_all` (several, all or none)
  write each file to a temporary file in the same folder, ``fsync`` it and
  ``os.replace`` it over the target, then ``fsync`` the folder: a crash or a
  full disk leaves the previous file, never half of a new one. An existing
  file keeps its permission bits. On any ``OSError`` (``ENOSPC``: "no space
  left on device") the temporary files are removed and :class:`OutputError`
  says so in one line.
- Temporary files carry the writer's process id (``.NAME.PID.RANDOM.ragdiag-tmp``);
  those of a process that no longer runs (a ``kill -9`` mid-save) are removed
  at the next write into that folder (:func:`clean_stale_temps`).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = atomic_write(d / "a.txt", "hello")
>>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
('hello', ['a.txt'])
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from typing import Callable, Iterable, Mapping

__all__ = ["OutputError", "TMP_SUFFIX", "check_output", "atomic_write", "write_all", "clean_stale_temps",
           "file_mode", "has_signature"]

#: The suffix of every temporary file ragdiag writes (so a later write can recognise and clean its own).
TMP_SUFFIX = ".ragdiag-tmp"


class OutputError(ValueError):
    """An output that cannot be (or was not) written; one line saying which file, why, and what to do."""


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded"
    return exc.strerror or str(exc)


def file_mode(path: Path) -> int:
    """The permission bits of ``path``, or those a new file gets under the current umask.

    >>> import tempfile, pathlib
    >>> file_mode(pathlib.Path(tempfile.mkdtemp()) / "absent") == 0o666 & ~_umask()
    True
    """
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def clean_stale_temps(folder: Path, name: str | None = None) -> list[Path]:
    """Remove the temporary files in ``folder`` (of the file ``name``, default: any) whose writer no longer runs.

    Returns the paths removed. A temporary file of a running process (another
    save in progress) is left alone.
    """
    removed = []
    pattern = f".{name}.*{TMP_SUFFIX}" if name else f".*{TMP_SUFFIX}"
    try:
        candidates = list(Path(folder).glob(pattern))
    except OSError:
        return removed
    for tmp in candidates:
        parts = tmp.name[: -len(TMP_SUFFIX)].rsplit(".", 2)
        try:
            pid = int(parts[-2])
        except (IndexError, ValueError):
            continue
        if not _alive(pid):
            with contextlib.suppress(OSError):
                tmp.unlink()
                removed.append(tmp)
    return removed


def has_signature(path: Path, test: Callable[[str], bool], *, limit: int = 65536) -> bool:
    """Whether the first ``limit`` bytes of the regular file ``path`` pass ``test`` (how a writer knows its own file)."""
    try:
        head = _head(path, limit)
    except (OSError, ValueError):
        return False
    return test(head.decode("utf-8", errors="replace"))


def _head(path: Path, limit: int) -> bytes:
    fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        return os.read(fd, limit)
    finally:
        os.close(fd)


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def check_output(path: str | os.PathLike, *, what: str = "--out", inputs: Iterable[str | os.PathLike] = (),
                 force: bool = False, ours: Callable[[Path], bool] | None = None,
                 example: str = "out.txt", force_hint: str | None = "--force",
                 ours_words: str = "a file ragdiag wrote") -> Path:
    """``path`` as a :class:`~pathlib.Path` when it can be written, else :class:`OutputError` naming ``what``.

    Checked before any work: not a folder nor a special file, its folder exists
    and is writable, it is none of ``inputs``; an existing file is replaced only
    with ``force`` or when ``ours(path)`` says ragdiag wrote it (``ours_words`` says what such a file is in
    the refusal; ``force_hint`` names the option that forces, None when the command has none).
    """
    out = Path(path)
    if not str(path):
        raise OutputError(f"{what} is empty; pass a file name like {example}")
    if out.is_dir():
        raise OutputError(f"{what} names {str(out)!r}, which is a folder; pass a file name like {example}")
    if out.exists() and not out.is_file():
        kind = "special file"
        with contextlib.suppress(OSError):
            from .limits import file_kind

            kind = file_kind(os.stat(out).st_mode)
        raise OutputError(f"{what} names {str(out)!r}, which is a {kind}, not a regular file; "
                          f"pass a file name like {example}")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"{what} {str(out)!r}: the folder {str(folder)!r} does not exist; create it first")
    for inp in inputs:
        if Path(inp).exists() and _same(out, Path(inp)):
            raise OutputError(f"{what} {str(out)!r} is one of this command's inputs ({str(inp)!r}); "
                              "name another file")
    if out.exists() and not os.access(out, os.W_OK):
        raise OutputError(f"{what} {str(out)!r} cannot be written (no write permission)")
    probe = folder / f".{out.name}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}"
    try:  # access() says yes to root on a read-only mount: only a write tells
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise OutputError(f"{what} {str(out)!r} cannot be written: the folder {str(folder)!r} refuses a file "
                          f"({_reason(exc)})") from None
    with contextlib.suppress(OSError):
        probe.unlink()
    clean_stale_temps(folder, out.name)
    if out.exists() and not force and not (ours is not None and ours(out)):
        hint = f"pass {force_hint} to replace it, or name another file" if force_hint else "name another file"
        raise OutputError(f"{what} {str(out)!r} exists and is not {ours_words}: refusing to overwrite it ({hint})")
    return out


def _write_fd(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` and flush it to the disk (the one place bytes reach a file)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
    os.fsync(fd)


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # make the renames themselves durable
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _target(path: Path) -> Path:
    """Where the bytes go: a symlink's target (so a link stays a link), else the path itself."""
    return path.resolve() if path.is_symlink() else path


def _temp(target: Path, data: bytes, mode: int | None) -> Path:
    folder = target.parent if str(target.parent) else Path(".")
    clean_stale_temps(folder, target.name)
    tmp = folder / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}"
    bits = file_mode(target) if mode is None else mode
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with contextlib.suppress(OSError):
            os.fchmod(fd, bits)
        _write_fd(fd, data)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    os.close(fd)
    return tmp


def write_all(files: Mapping[str | os.PathLike, str | bytes], *, modes: Mapping | None = None) -> list[str]:
    """Write every file of ``files`` (path -> text or bytes), all or none; return the paths written.

    Every file is first written to a temporary file beside it and flushed;
    only when all are on disk are they renamed over their targets. An
    ``OSError`` on the way (a full disk) removes every temporary file, leaves
    every previous file as it was, and raises :class:`OutputError`.
    ``modes``: permission bits per path (default: the existing file's).
    """
    staged: list[tuple[Path, Path]] = []
    current: Path | None = None
    try:
        for path, data in files.items():
            current = _target(Path(path))
            if current.exists() and not current.is_file():  # never replace a device, a pipe or a folder
                from .limits import file_kind

                raise OutputError(f"cannot write {str(path)!r}: it is a {file_kind(os.stat(current).st_mode)}, not "
                                  "a regular file; nothing was written")
            raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
            mode = None if modes is None else modes.get(path)
            staged.append((_temp(current, raw, mode), current))
        for tmp, target in staged:
            current = target
            os.replace(tmp, target)
    except OSError as exc:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        n = len(files)
        kept = "the previous file is unchanged" if n == 1 else f"none of the {n} files was written"
        raise OutputError(f"cannot write {str(current)!r}: {_reason(exc)}; nothing partial was left, "
                          f"{kept}") from None
    for folder in {t.parent for _, t in staged}:
        _fsync_folder(folder)
    return [str(p) for p in files]


def atomic_write(path: str | os.PathLike, data: str | bytes, *, mode: int | None = None) -> str:
    """Write ``data`` (text as UTF-8) to ``path`` atomically (:func:`write_all` of one file); return the path.

    ``mode``: the permission bits (default: those of the file it replaces).
    """
    return write_all({path: data}, modes=None if mode is None else {path: mode})[0]
