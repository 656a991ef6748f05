"""A baseline and a regressed candidate of the held-out corpus, made as a team's CI would make them.

The candidate is the same configuration, ``C/dense``, after a change that made
its chunker blind: the plugin module ``blind_chunker`` (written into the temp
folder) re-registers strategy C with fixed 512-character cuts that ignore
paragraphs, so the three needles that straddle character 512
(``test_regression_gate.make_heldout``) are destroyed. Both runs are
``python -m ragdiag eval --out`` in a child process with the FAKE encoder
(plumbing only), so the registry of the test process is never touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from heldout import make_heldout
from processes import child_pythonpath

REPO = Path(__file__).resolve().parents[2]

BLIND = '''"""Strategy C made blind: 512-character cuts that ignore paragraphs (a regression for the tests)."""
from ragdiag.index.chunking import STRATEGIES, Strategy, register_strategy

blind = STRATEGIES["A"]
register_strategy(Strategy("C", boundaries=blind.boundaries, header=blind.header, overlap=blind.overlap,
                           size=blind.size, overlap_chars=blind.overlap_chars, cuts=blind.cuts), replace=True)
'''


def child_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment of a child ``python -m ragdiag``: the FAKE encoder, no shipped index, ``tmp`` importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RAGDIAG_"))}
    env.update({"RAGDIAG_ENCODER": "fakes:fake_encoder", "RAGDIAG_NO_SNAPSHOT": "1",
                "PYTHONPATH": child_pythonpath(tmp)}, **extra)
    return env


def evaluate(tmp: Path, out: Path, *, blind: bool = False) -> Path:
    """``eval --out out`` of the held-out corpus under ``tmp`` (C/dense; blind cuts with ``blind``)."""
    folder, truth = make_heldout(tmp)
    (tmp / "blind_chunker.py").write_text(BLIND, encoding="utf-8")
    env = child_env(tmp, **({"RAGDIAG_PLUGINS": "blind_chunker"} if blind else {}))
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "eval", "--corpus", str(folder), "--truth", str(truth),
                           "--no-cache", "--strategies", "C", "--retrievers", "dense", "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out
