"""The last cost measurement of an input set, kept in the cache folder so that a page can show it before measuring.

:func:`~ragdiag.analyses.cost.costs` times every configuration query by query,
which takes a while; :func:`save_measurement` writes what it measured (the rows,
the machine, when, how long it took, at which gate and sample) as one JSON file
under ``<cache>/measurements/``, named by a hash of the caller's ``key`` (the
input set it measured: corpus, ground truth and configurations), and
:func:`last_measurement` reads it back into the same records. A file that does
not parse is treated as absent (never an error: it is a convenience, not a
result).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..core.gate import Gate
from ..core.stats import Interval
from .cost import CostRow

__all__ = ["CostMeasurement", "save_measurement", "last_measurement", "measurement_path", "FOLDER"]

#: The cache folder's sub-folder for measurements.
FOLDER = "measurements"
_VERSION = 1


@dataclass(frozen=True)
class CostMeasurement:
    """One run of :func:`~ragdiag.analyses.cost.costs`: its rows and where, when and how long it was measured.

    ``measured_at``: ISO 8601 time in UTC; ``seconds``: how long the measurement took; ``sample``: the queries
    timed per configuration; ``gate``: the gate the prompts were priced at (recall at its k).
    """

    rows: tuple[CostRow, ...]
    machine: dict
    measured_at: str
    seconds: float
    sample: int
    gate: Gate


def measurement_path(root: str | os.PathLike, key: str) -> Path:
    """The file holding the last measurement of ``key`` under the cache folder ``root``.

    >>> measurement_path("cache", "abc").name
    'cost-ba7816bf8f01cfea.json'
    """
    return Path(root) / FOLDER / f"cost-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:16]}.json"


def _num(x):
    """A float as JSON holds it (NaN and infinities as None: JSON has no such numbers)."""
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _row_json(r: CostRow) -> dict:
    out = {f.name: getattr(r, f.name) for f in fields(CostRow)}
    out["recall"] = asdict(r.recall)
    out["gate"] = {"keep": r.gate.keep, "cut": r.gate.cut, "k": r.gate.k}
    out["build_covers"] = list(r.build_covers)
    return {k: (_num(v) if not isinstance(v, dict) else {a: _num(b) for a, b in v.items()}) for k, v in out.items()}


def _row_from(d: dict) -> CostRow:
    nan = float("nan")
    values = {k: (nan if v is None and k not in ("recall", "gate") else v) for k, v in d.items()}
    rec = {k: (nan if v is None else v) for k, v in d["recall"].items()}
    values["recall"] = Interval(**rec)
    values["gate"] = Gate(**d["gate"])
    values["build_covers"] = tuple(d.get("build_covers") or ())
    return CostRow(**{f.name: values[f.name] for f in fields(CostRow) if f.name in values})


def save_measurement(root: str | os.PathLike, key: str, m: CostMeasurement) -> Path:
    """Write ``m`` as the last measurement of ``key`` under ``root`` (atomically: a reader never sees half a file);
    returns the file. ``OSError`` when the folder cannot be written."""
    path = measurement_path(root, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"version": _VERSION, "measured_at": m.measured_at, "seconds": m.seconds, "sample": m.sample,
           "gate": {"keep": m.gate.keep, "cut": m.gate.cut, "k": m.gate.k}, "machine": m.machine,
           "rows": [_row_json(r) for r in m.rows]}
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def last_measurement(root: str | os.PathLike, key: str) -> CostMeasurement | None:
    """The last measurement of ``key`` under ``root``, or None when there is none (or it does not read back)."""
    path = measurement_path(root, key)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("version") != _VERSION:
            return None
        return CostMeasurement(tuple(_row_from(r) for r in doc["rows"]), dict(doc["machine"]), str(doc["measured_at"]),
                               float(doc["seconds"]), int(doc["sample"]), Gate(**doc["gate"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
