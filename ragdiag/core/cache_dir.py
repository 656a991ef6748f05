"""Where ragdiag's cache folder is: one rule for the store, the exported ONNX models and every other file kept
between runs (a foundation, so that the encoder can find its folder without importing the store)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "DEFAULT_DIRNAME", "resolve_root"]

CACHE_ENV = "RAGDIAG_CACHE"
DEFAULT_DIRNAME = ".ragdiag-cache"


def resolve_root(root: str | os.PathLike | None = None) -> Path:
    """The cache folder: ``root`` if given, else ``$RAGDIAG_CACHE``, else ``./.ragdiag-cache``.

    >>> str(resolve_root("/tmp/x"))
    '/tmp/x'
    """
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.cwd() / DEFAULT_DIRNAME
