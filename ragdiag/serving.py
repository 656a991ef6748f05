"""What a visitor of a served dashboard may open: the operator's data, nothing else.

The operator fixes the data with environment variables (``./run.sh dashboard``
sets them from its options):

- ``RAGDIAG_CORPUS`` / ``RAGDIAG_TRUTH``: the corpus folder and its ground truth.
- ``RAGDIAG_ROOTS``: further folders (or files) visitors may type, separated by
  ``os.pathsep`` (``:``). Without it, only the configured corpus folder and
  ground-truth file are allowed.
- ``RAGDIAG_LOCKED=1``: read-only presentation mode. Visitors see no path
  field at all (sidebar, external run's server path); uploads still work.

A path is allowed when, with every symlink resolved, it is one of the roots or
lies under one. The check is made before anything touches the path's content,
and the answer for a refused path is the same whether or not it exists, so the
dashboard is no file-existence oracle.

>>> a = Access(corpus="/srv/kb", truth="/srv/kb.truth.json", roots=(Path("/srv/kb"),))
>>> a.allows("/srv/kb/notes"), a.allows("/etc/passwd"), a.allows("/srv/kb/../kb2")
(True, False, False)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .truth import default_truth_path

__all__ = ["Access", "AccessError", "ENV_ROOTS", "ENV_LOCKED"]

ENV_ROOTS, ENV_LOCKED = "RAGDIAG_ROOTS", "RAGDIAG_LOCKED"
_TRUE = {"1", "true", "yes", "on"}


class AccessError(ValueError):
    """A path outside the allowed roots (the message never says whether it exists)."""


def _resolve(path: str | os.PathLike) -> Path:
    p = Path(os.path.expanduser(os.fspath(path)))
    try:
        return p.resolve(strict=False)
    except (OSError, RuntimeError):  # a symlink loop: compare it unresolved (it is refused or fails later)
        return Path(os.path.abspath(p))


@dataclass(frozen=True)
class Access:
    """The operator's data and the roots a visitor's path must lie in."""

    corpus: str
    truth: str  # "" -> the corpus's conventional truth file
    roots: tuple[Path, ...]
    locked: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, default_corpus: str | os.PathLike = "") -> Access:
        """The access the environment sets (see the module docstring); ``default_corpus`` without RAGDIAG_CORPUS."""
        env = os.environ if env is None else env
        corpus = (env.get("RAGDIAG_CORPUS") or "").strip() or os.fspath(default_corpus)
        truth = (env.get("RAGDIAG_TRUTH") or "").strip()
        roots = [corpus, truth or os.fspath(default_truth_path(corpus))]
        roots += [r.strip() for r in (env.get(ENV_ROOTS) or "").split(os.pathsep) if r.strip()]
        locked = (env.get(ENV_LOCKED) or "").strip().lower() in _TRUE
        return cls(corpus, truth, tuple(dict.fromkeys(_resolve(r) for r in roots if r)), locked)

    def allows(self, path: str | os.PathLike) -> bool:
        """Whether ``path``, every symlink resolved, is a root or lies under one."""
        p = _resolve(path)
        return any(p == r or p.is_relative_to(r) for r in self.roots)

    def check(self, path: str | os.PathLike, what: str = "path") -> Path:
        """``path`` (as given) when allowed, else :class:`AccessError`."""
        if not str(path).strip() or "\0" in str(path) or not self.allows(path):
            raise AccessError(f"this {what} is not one this dashboard serves: only the configured data "
                              f"and folders under the allowed roots ({ENV_ROOTS}) can be opened")
        return Path(os.path.expanduser(os.fspath(path)))
