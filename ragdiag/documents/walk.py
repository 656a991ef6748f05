"""Walking a corpus folder within its limits, and the error for a folder that cannot be used.

:func:`walk_corpus` lists every file :func:`ragdiag.documents.corpus.load_corpus` will
consider, without following a symlinked folder; both names are re-exported by
:mod:`ragdiag.documents.corpus`.
"""

from __future__ import annotations

import os
import stat as stat_
from dataclasses import dataclass
from pathlib import Path

from .extract import SUPPORTED_SUFFIXES
from ..core.limits import ENV as LIMIT_ENV
from ..core.limits import Limits, file_kind

__all__ = ["CorpusError", "walk_corpus"]


class CorpusError(ValueError):
    """A corpus folder that cannot be used at all (missing, or nothing loadable).

    ``failures``: the files that failed, when nothing could be loaded.
    """

    def __init__(self, message: str, failures: tuple = ()):
        super().__init__(message)
        self.failures = tuple(failures)


@dataclass(frozen=True)
class _Entry:
    """One file under a corpus folder: readable (``reason`` empty) or skipped with a reason."""

    rel: str
    path: Path
    size: int = 0
    mtime_ns: int = 0
    reason: str = ""


def walk_corpus(root: str | Path, limits: Limits | None = None) -> list[_Entry]:
    """Every non-hidden file under ``root``, sorted, without following any symlinked folder.

    Bounded: more than ``limits.max_files`` files, or supported files of more
    than ``limits.max_total_bytes`` together, raise :class:`CorpusError` (the
    walk stops there); folders nested deeper than ``limits.max_depth``, symlink
    loops, dangling symlinks, symlinks leaving the folder and anything that is
    not a regular file (FIFO, device, socket) are entries with a ``reason``.
    """
    limits = limits or Limits.from_env()
    root = Path(root)
    resolved_root = root.resolve()
    out: list[_Entry] = []
    total = 0

    def too_many() -> CorpusError:
        return CorpusError(f"corpus folder {str(root)!r} holds more than {limits.max_files:,} files; the limit is "
                           f"{limits.max_files:,} (set {LIMIT_ENV['max_files']} to raise it, or point at a smaller folder)")

    def visit(folder: Path, rel_parts: tuple[str, ...]) -> None:
        nonlocal total
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            out.append(_Entry("/".join(rel_parts) or ".", folder, reason=f"cannot list folder: {exc.strerror or exc}"))
            return
        for e in entries:
            if e.name.startswith("."):
                continue
            parts = (*rel_parts, e.name)
            rel = "/".join(parts)
            path = Path(e.path)
            if len(out) >= limits.max_files:
                raise too_many()
            try:
                if e.is_symlink():
                    try:
                        target = path.resolve(strict=True)
                    except RuntimeError:
                        out.append(_Entry(rel, path, reason="symlink loop (not followed)"))
                        continue
                    except OSError:
                        out.append(_Entry(rel, path, reason="dangling symlink: its target does not exist"))
                        continue
                    if not target.is_relative_to(resolved_root):
                        out.append(_Entry(rel, path, reason="symlink pointing outside the corpus folder (not followed)"))
                        continue
                    if target.is_dir():
                        out.append(_Entry(rel, path, reason="symlink to a folder (not followed)"))
                        continue
                    st = target.stat()
                else:
                    st = e.stat(follow_symlinks=False)
            except OSError as exc:
                out.append(_Entry(rel, path, reason=f"cannot read: {exc.strerror or exc}"))
                continue
            if stat_.S_ISDIR(st.st_mode):
                if len(parts) > limits.max_depth:
                    out.append(_Entry(rel, path, reason=f"folder nested deeper than {limits.max_depth} levels; skipped "
                                                        f"(set {LIMIT_ENV['max_depth']} to raise the limit)"))
                    continue
                visit(path, parts)
                continue
            if not stat_.S_ISREG(st.st_mode):
                out.append(_Entry(rel, path, reason=f"{file_kind(st.st_mode)}, not a regular file; skipped"))
                continue
            if path.suffix.lower() in SUPPORTED_SUFFIXES and st.st_size <= limits.max_file_bytes:
                total += st.st_size
                if total > limits.max_total_bytes:
                    raise CorpusError(
                        f"the documents under {str(root)!r} exceed {limits.max_total_bytes:,} bytes together; the limit "
                        f"is {limits.max_total_bytes:,} (set {LIMIT_ENV['max_total_bytes']} to raise it)")
            out.append(_Entry(rel, path, st.st_size, st.st_mtime_ns))

    visit(root, ())
    return out
