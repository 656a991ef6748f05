"""Reading a store never creates one: the folder an adapter opens must already hold that store."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["existing_store"]


def existing_store(path: str | os.PathLike, marker: str, kind: str) -> Path:
    """``path`` when it is a folder holding ``marker`` (the file every ``kind`` store has), else ValueError.

    A database client opening a missing folder creates an empty store there (and a file in any folder it is
    pointed at); evaluating a store only reads, so a path that is not already one is refused first.
    """
    p = Path(os.path.expanduser(os.fspath(path)))
    if not p.exists():
        raise ValueError(f"no {kind} store at {os.fspath(path)!r}: the folder does not exist (nothing was created)")
    if not p.is_dir():
        raise ValueError(f"{os.fspath(path)!r} is a file, not a {kind} folder")
    if not (p / marker).is_file():
        raise ValueError(f"no {kind} store at {os.fspath(path)!r}: it has no {marker} (nothing was written there)")
    return p
