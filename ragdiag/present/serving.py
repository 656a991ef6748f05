"""What a visitor of a served dashboard may open: the operator's data, nothing else.

The operator fixes the data with environment variables (``./run.sh dashboard``
sets them from its options):

- ``RAGDIAG_CORPUS`` / ``RAGDIAG_TRUTH``: the corpus folder and its ground truth.
- ``RAGDIAG_ROOTS``: further folders (or files) visitors may type, separated by
  ``os.pathsep`` (``:``). Without it, only the configured corpus folder and
  ground-truth file are allowed.
- ``RAGDIAG_LOCKED=1``: read-only presentation mode. Visitors see no path
  field at all (sidebar, external run's server path, another model's folder);
  uploads still work.
- ``RAGDIAG_MODELS``: further embedding models (names after ``@``: a hub id in
  the local cache or a model folder) visitors may pick on the Variants page,
  separated by ``os.pathsep``; in locked mode these and the aliases are all.

Every path a visitor can cause to be read or written goes through
:meth:`Access.check`, derived ones included: the ground truth beside a chosen
corpus folder (:meth:`Access.truth_target`), a model folder
(:meth:`Access.model`), a run file.

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

from ..documents.truth import default_truth_path

__all__ = ["Access", "AccessError", "ENV_ROOTS", "ENV_LOCKED", "ENV_MODELS"]

ENV_ROOTS, ENV_LOCKED, ENV_MODELS = "RAGDIAG_ROOTS", "RAGDIAG_LOCKED", "RAGDIAG_MODELS"
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
    models: tuple[str, ...] = ()  # model names the operator lists (RAGDIAG_MODELS)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, default_corpus: str | os.PathLike = "") -> Access:
        """The access the environment sets (see the module docstring); ``default_corpus`` without RAGDIAG_CORPUS."""
        env = os.environ if env is None else env
        corpus = (env.get("RAGDIAG_CORPUS") or "").strip() or os.fspath(default_corpus)
        truth = (env.get("RAGDIAG_TRUTH") or "").strip()
        roots = [corpus, truth or os.fspath(default_truth_path(corpus))]
        roots += [r.strip() for r in (env.get(ENV_ROOTS) or "").split(os.pathsep) if r.strip()]
        locked = (env.get(ENV_LOCKED) or "").strip().lower() in _TRUE
        models = tuple(m.strip() for m in (env.get(ENV_MODELS) or "").split(os.pathsep) if m.strip())
        return cls(corpus, truth, tuple(dict.fromkeys(_resolve(r) for r in roots if r)), locked, models)

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

    @property
    def operator_truth(self) -> Path:
        """The operator's ground-truth file: ``RAGDIAG_TRUTH``, else the one beside the configured corpus."""
        return Path(self.truth) if self.truth else default_truth_path(self.corpus)

    def truth_target(self, corpus: str | os.PathLike, chosen: str | os.PathLike) -> Path:
        """The ground-truth file an editor may write for ``corpus`` when ``chosen`` is the truth in use.

        ``chosen`` when it is the operator's truth file or the one beside ``corpus`` and passes the
        access check; else the operator's truth file when ``corpus`` is the operator's corpus; else
        :class:`AccessError` (a file derived from a visitor's corpus is checked like a typed path).
        """
        candidates = [self.operator_truth, default_truth_path(corpus)]
        writable = [c for c in candidates if self.allows(c)]
        chosen_r = _resolve(chosen)
        for c in writable:
            if _resolve(c) == chosen_r:
                return Path(chosen)
        if writable and _resolve(corpus) == _resolve(self.corpus):
            return writable[0]
        raise AccessError("this ground-truth file is not one this dashboard serves: only the configured "
                          f"data and files under the allowed roots ({ENV_ROOTS}) can be written")

    def model(self, name: str) -> str:
        """``name`` when a visitor may load that embedding model, else :class:`AccessError`.

        Allowed: the aliases (``minilm``, ``use``), the names the operator lists (``RAGDIAG_MODELS``);
        unlocked, also a hub id already in the local cache and a folder under the allowed roots.
        Anything else is refused with one answer, whether or not such a folder exists.
        """
        from ..index.models import MODEL_ALIASES

        name = str(name).strip()
        if name in MODEL_ALIASES or name in self.models:
            return name
        if not self.locked and name:
            from ..index.encoder.resolve import _in_hf_cache

            if _hub_id(name) and not name.startswith((".", "~")) and _in_hf_cache(name):
                return name
            if "\0" not in name and self.allows(name):
                return name
        raise AccessError("this model is not one this dashboard serves: only the listed models "
                          f"({ENV_MODELS}) and folders under the allowed roots ({ENV_ROOTS}) can be loaded")


def _hub_id(name: str) -> bool:
    import re

    return re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", name) is not None
