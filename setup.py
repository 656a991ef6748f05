"""The build's one step beyond ``pyproject.toml``: the wheel also carries the dashboard and the bundled corpus.

They live at the repository's root (``app.py``, ``app_pages/``, ``ui/``,
``.streamlit/config.toml``, ``data/sklearn-user-guide*``), where
``./run.sh`` and ``streamlit run app.py`` use them. Building a wheel copies
them into the package ``ragdiag_bundle`` so that ``ragdiag dashboard`` and
``ragdiag eval`` (the bundled corpus and its shipped index) work from any
folder once the wheel is installed (:mod:`ragdiag.core.bundle` finds them).
Everything else is declared in ``pyproject.toml``.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PACKAGE = "ragdiag_bundle"
# What the bundle holds, as globs relative to the repository's root (MANIFEST.in puts them in the sdist too).
BUNDLE = ("app.py", "app_pages/*.py", "ui/*.py", "ui/*.png", ".streamlit/config.toml",
          "data/sklearn-user-guide/*.md", "data/sklearn-user-guide.truth.json",
          "data/sklearn-user-guide.index.npz", "data/sklearn-user-guide.SOURCE.md")
INIT = '"""The dashboard and the bundled corpus, as files (found by ragdiag.core.bundle, never imported)."""\n'


class BuildWithBundle(build_py):
    """``build_py``, then copy :data:`BUNDLE` into ``<build>/ragdiag_bundle/``."""

    def run(self):
        super().run()
        dest = Path(self.build_lib) / PACKAGE
        for pattern in BUNDLE:
            found = sorted(ROOT.glob(pattern))
            if not found:
                raise FileNotFoundError(f"setup.py: nothing matches {pattern!r} to bundle")
            for src in found:
                target = dest / src.relative_to(ROOT)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
        (dest / "__init__.py").write_text(INIT, encoding="utf-8")


setup(cmdclass={"build_py": BuildWithBundle})
