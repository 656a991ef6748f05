"""The baseline of the planned family: declared by the operator before anyone looks, never picked on screen.

"Is the candidate better than what we run?" is a planned comparison only when
"what we run" was fixed before the data were seen. It is read, in order, from

1. ``--baseline CONFIG`` on the command line,
2. the environment variable ``RAGDIAG_BASELINE``,
3. ``baseline = "CONFIG"`` under ``[ragdiag]`` in ``ragdiag.toml`` in the working folder,

and the screens say which. Without one, the planned family is not offered.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

__all__ = ["DeclaredBaseline", "declared_baseline", "BASELINE_ENV", "PROJECT_FILE"]

#: The environment variable that declares the baseline.
BASELINE_ENV = "RAGDIAG_BASELINE"
#: The project file (in the working folder) whose ``[ragdiag] baseline`` declares it.
PROJECT_FILE = "ragdiag.toml"


@dataclass(frozen=True)
class DeclaredBaseline:
    """A declared baseline and where it was declared (``--baseline``, ``RAGDIAG_BASELINE`` or ``ragdiag.toml``)."""

    config: str
    source: str

    def words(self) -> str:
        """``"E/hybrid, declared by RAGDIAG_BASELINE"``."""
        return f"{self.config}, declared by {self.source}"


def declared_baseline(explicit: str | None = None, *, env: Mapping[str, str] | None = None,
                      folder: str | Path | None = None) -> DeclaredBaseline | None:
    """The declared baseline (see the module's order), or ``None`` when none was declared.

    Raises ``ValueError`` for a project file that cannot be read or names a baseline that is not ``S/R``.

    >>> declared_baseline("E/hybrid", env={}).words()
    'E/hybrid, declared by --baseline'
    >>> declared_baseline(env={"RAGDIAG_BASELINE": "C/dense"}, folder="/nonexistent").source
    'RAGDIAG_BASELINE'
    """
    from ...evaluation.records import parse_key

    env = os.environ if env is None else env
    found = None
    if explicit:
        found = DeclaredBaseline(explicit, "--baseline")
    elif env.get(BASELINE_ENV, "").strip():
        found = DeclaredBaseline(env[BASELINE_ENV].strip(), BASELINE_ENV)
    else:
        path = Path(folder if folder is not None else Path.cwd()) / PROJECT_FILE
        if path.is_file():
            import tomllib

            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ValueError(f"{PROJECT_FILE} cannot be read: {exc}") from None
            value = (data.get("ragdiag") or {}).get("baseline")
            if value:
                found = DeclaredBaseline(str(value), PROJECT_FILE)
    if found is None:
        return None
    try:
        return DeclaredBaseline(parse_key(found.config).label, found.source)
    except ValueError as exc:
        raise ValueError(f"the baseline declared by {found.source} is not a configuration: {exc}") from None
