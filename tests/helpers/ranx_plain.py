"""ranx, the oracle, with numba's JIT off: the same maths as plain Python, in a child process.

ranx compiles each metric with numba on first use: seconds on a quiet machine, many minutes for each
test process on a busy one, for a few dozen queries that plain Python scores in milliseconds. numba
reads ``NUMBA_DISABLE_JIT`` when it is imported (and its typed containers when they are made), so
ranx runs in a child process started with it set. (Callers skip first when ranx is missing:
``pytest.importorskip("ranx")``.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

_CHILD = r"""
import json, sys
import ranx

job = json.load(sys.stdin)
out = []
for qrels, run in job["pairs"]:
    q = ranx.Qrels.from_file(qrels, kind="trec") if isinstance(qrels, str) else ranx.Qrels(qrels)
    r = ranx.Run.from_file(run, kind="trec") if isinstance(run, str) else ranx.Run(run)
    got = ranx.evaluate(q, r, job["metrics"], return_mean=job["mean"])
    if len(job["metrics"]) == 1:
        got = {job["metrics"][0]: got}
    out.append({m: (v.tolist() if hasattr(v, "tolist") else float(v)) for m, v in got.items()})
json.dump(out, sys.stdout)
"""


def ranx_evaluate(pairs, metrics: list[str], *, mean: bool = True) -> list[dict]:
    """``ranx.evaluate`` of each ``(qrels, run)`` pair: a ``{query: {doc: value}}`` dict or a TREC file's path each.

    Returns one ``{metric: value}`` per pair: a float with ``mean``, else an array over the queries in ranx's
    order (sorted query ids).
    """
    job = {"pairs": [[str(x) if isinstance(x, Path) else x for x in pair] for pair in pairs],
           "metrics": list(metrics), "mean": mean}
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(job), capture_output=True, text=True,
                          env={**os.environ, "NUMBA_DISABLE_JIT": "1"}, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"ranx failed in its child process:\n{proc.stderr[-3000:]}")
    return [{m: (v if mean else np.asarray(v)) for m, v in got.items()} for got in json.loads(proc.stdout)]
