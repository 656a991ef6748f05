"""Where the files ragdiag bundles beside its library are: the dashboard and the bundled corpus.

In a checkout of the repository they are the repository's own ``app.py``,
``app_pages/``, ``ui/``, ``.streamlit/`` and ``data/``. An installed wheel
carries the same files as the package ``ragdiag_bundle`` (copied there by
``setup.py`` at build time), so ``ragdiag eval`` finds the bundled corpus and
its shipped index, and ``ragdiag dashboard`` the app, from any folder.

The package is only located here (its folder), never imported: the library
stays free of the dashboard's imports.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

__all__ = ["BUNDLE_PACKAGE", "bundle_root"]

#: The package a wheel carries the dashboard and the bundled corpus in.
BUNDLE_PACKAGE = "ragdiag_bundle"

_CHECKOUT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def bundle_root() -> Path:
    """The folder holding ``app.py`` and ``data/``: the checkout's root, else the installed ``ragdiag_bundle``.

    The checkout comes first, so an editable install or a run from the
    repository reads the files it is editing. When neither is there (a wheel
    built without the bundle), the checkout's path is returned and what is
    missing is reported by whoever opens a file in it.
    """
    if ((_CHECKOUT / "app.py").is_file() and (_CHECKOUT / "ui" / "serve.py").is_file()
            and (_CHECKOUT / "data" / "sklearn-user-guide").is_dir()):
        return _CHECKOUT
    spec = importlib.util.find_spec(BUNDLE_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return _CHECKOUT
