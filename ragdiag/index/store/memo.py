"""Arrays derived from texts, kept beside the store: BM25 tokens, the token audit's layouts.

One ``.npz`` file per content key under ``<store>/memo/<kind>/``: the key is a
sha256 of everything the arrays depend on (the texts, the tokenizer's
identity), so a changed text or model is simply another key. Each file
holds a CRC-32 of its arrays, checked on read; a file that fails, or cannot
be read, counts as missing (the caller recomputes and writes it again).
Writes go to a temporary file renamed into place, so a reader never sees
half a file; a folder that cannot be written is skipped silently (the
results are the same, only recomputed next time).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from pathlib import Path
from typing import Iterable

import numpy as np

__all__ = ["Memo", "content_key"]


def content_key(*parts: str | Iterable[str]) -> str:
    """sha256 of the parts (a string, or an iterable of strings each ended by a NUL).

    >>> content_key("tokens-v1", ["a", "b"]) == content_key("tokens-v1", ["a", "b"]) != content_key("tokens-v1", ["ab"])
    True
    """
    h = hashlib.sha256()
    for part in parts:
        for text in ([part] if isinstance(part, str) else part):
            h.update(text.encode("utf-8"))
            h.update(b"\x00")
        h.update(b"\x01")
    return h.hexdigest()


def _crc(arrays: dict[str, np.ndarray]) -> int:
    crc = 0
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        crc = zlib.crc32(f"{name}:{a.dtype.str}:{a.shape}".encode(), crc)
        crc = zlib.crc32(a.view(np.uint8).reshape(-1) if a.size else b"", crc)
    return crc


class Memo:
    """``get(kind, key)`` / ``put(kind, key, arrays)`` of named arrays under ``root / "memo"``."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root) / "memo"

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / f"{key}.npz"

    def get(self, kind: str, key: str) -> dict[str, np.ndarray] | None:
        """The arrays stored under ``key``, or None (absent, unreadable or failing their CRC)."""
        path = self._path(kind, key)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in data.files if name != "_crc"}
                crc = int(data["_crc"])
        except (OSError, ValueError, KeyError, EOFError, zlib.error):
            return None
        return arrays if crc == _crc(arrays) else None

    def put(self, kind: str, key: str, arrays: dict[str, np.ndarray]) -> None:
        """Store ``arrays`` under ``key`` (atomically; silently skipped when the folder cannot be written)."""
        path = self._path(kind, key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as f:
                    np.savez(f, _crc=np.int64(_crc(arrays)), **arrays)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError:
            return
