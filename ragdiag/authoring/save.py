"""Opening and saving a ground-truth file without losing anything.

- The file is written as it was read: JSON (2-space indent) or YAML, keeping
  every key ragdiag does not understand (the data is the parsed mapping itself;
  nothing is rebuilt from :class:`ragdiag.documents.truth.GroundTruth`).
- Atomically (:func:`ragdiag.core.files.atomic_write`): the new text goes to a temporary file in the same
  folder, is flushed to disk, and replaces the file with one ``os.replace``; a crash or a full disk at
  any point leaves either the old file or the new one, never half of one, and the temporary files of a
  killed save are removed by the next save.
- The previous version is kept beside it (``kb.truth.prev.json``, with the file's permission bits). The file
  keeps its permission bits, and a symlinked file stays a symlink (its target is
  what is rewritten).
- Optimistic concurrency: :func:`save_truth` takes the SHA-256 of the bytes
  that were opened and refuses (:class:`ConflictError`) when the file on disk
  is no longer those bytes (changed, created or deleted since). The check and
  the replace run under an exclusive lock (``fcntl.flock`` on a ``.lock`` file
  beside it), so two writers cannot both pass the check.
- :func:`merge` re-applies one's own edits onto the file as it now is
  (three-way, entries matched by id), so a refused save loses nothing; an
  entry both sides added under the same new id (two editors both given
  ``o03``) keeps the other side's id and one's own is renumbered
  (:func:`renumber_new_ids`), so neither entry is lost.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..core.files import file_mode

__all__ = ["Opened", "ConflictError", "open_truth", "save_truth", "dumps", "merge", "renumber_new_ids", "backup_path",
           "new_truth"]


class ConflictError(ValueError):
    """The file changed on disk since it was opened; reload (and merge) before saving."""


@dataclass(frozen=True)
class Opened:
    """A ground-truth file as opened: its path, format, the SHA-256 of its bytes (None: no file) and its data."""

    path: Path
    fmt: str  # "json" | "yaml"
    sha256: str | None
    data: dict


def _fmt(path: Path) -> str:
    return "yaml" if path.suffix.lower() in (".yaml", ".yml") else "json"


def new_truth() -> dict:
    """An empty ground truth: no questions, no out-of-domain queries.

    >>> new_truth()
    {'questions': [], 'ood': []}
    """
    return {"questions": [], "ood": []}


def _parse(raw: bytes, path: Path) -> dict:
    from ..documents.truth import TruthError, decode_truth

    try:
        data = decode_truth(raw, path)  # the loader's own reading: BOM accepted, duplicate keys refused
    except TruthError as exc:
        fmt = _fmt(path).upper()
        problem = exc.problems[0].removeprefix(f"invalid {fmt} ")
        raise ValueError(f"{path.name} is not valid {fmt}: {problem}; fix it by hand first") from None
    if data is None:
        data = new_truth()
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: the top level must be a mapping with 'questions' and 'ood' lists")
    return data


def _sha(raw: bytes | None) -> str | None:
    return None if raw is None else hashlib.sha256(raw).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def open_truth(path: str | Path) -> Opened:
    """Read a ground-truth file (JSON or YAML); a missing file opens as a new, empty one.

    Raises ValueError for a file that does not read (its format named, e.g. ``invalid JSON at line 3``),
    a key written twice in one object, a top level that is not a mapping, or something not a regular file.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        raise ValueError(f"{path.name} is not a regular file (a folder, device or pipe)")
    raw = _read(path)
    if raw is None:
        return Opened(path, _fmt(path), None, new_truth())
    return Opened(path, _fmt(path), _sha(raw), _parse(raw, path))


def dumps(data: dict, fmt: str) -> str:
    """The text of ``data`` in ``fmt`` (keys in their order, Unicode kept)."""
    if fmt == "yaml":
        import yaml

        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def backup_path(path: Path) -> Path:
    """Where the previous version is kept: ``kb.truth.json`` -> ``kb.truth.prev.json``."""
    return path.with_name(f"{path.stem}.prev{path.suffix}")


@contextlib.contextmanager
def _locked(path: Path):
    try:
        import fcntl
    except ImportError:  # not POSIX: the sha check still refuses stale writes, without the lock
        yield
        return
    lock = path.with_name(f".{path.name}.lock")
    with open(lock, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _atomic_write(path: Path, raw: bytes, *, mode: int | None = None) -> None:
    """:func:`ragdiag.core.files.atomic_write`: temp file beside it, fsync, rename; the temp files of killed
    saves cleaned first; ``mode`` (default: the file's own) kept."""
    from ..core.files import atomic_write

    atomic_write(path, raw, mode=mode)


def _clean_legacy_temps(path: Path) -> None:
    """Remove ``.NAME.XXXXXX.tmp`` files an earlier ragdiag's killed save left (under the lock: no save runs)."""
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()


def save_truth(path: str | Path, data: dict, *, expected_sha256: str | None, fmt: str | None = None) -> Opened:
    """Write ``data`` to ``path`` atomically, if the file is still what was opened (``expected_sha256``).

    ``expected_sha256`` is :attr:`Opened.sha256` (None: the file did not exist). Raises
    :class:`ConflictError` when the file on disk differs, :class:`~ragdiag.core.files.OutputError` (a
    ``ValueError``, one line) when it cannot be written (a full disk leaves the file and its backup as they
    were). Temporary files of saves killed earlier are removed. Returns the file as now opened.
    """
    given = path = Path(path)
    fmt = fmt or _fmt(path)
    raw = dumps(data, fmt).encode("utf-8")
    if path.is_symlink():  # rewrite the link's target, so the link stays a link
        path = path.resolve()
    if not path.parent.is_dir():
        raise ValueError(f"folder {str(path.parent)!r} does not exist")
    with _locked(path):
        _clean_legacy_temps(path)
        current = _read(path)
        if _sha(current) != expected_sha256:
            what = "was created" if expected_sha256 is None else "was deleted" if current is None else "changed"
            raise ConflictError(f"{path.name} {what} on disk since it was opened; reload it (your edits can be "
                                "merged onto it) before saving")
        if current is not None:  # the backup has the original's permission bits, not the umask's
            _atomic_write(backup_path(path), current, mode=file_mode(path))
        _atomic_write(path, raw)
    return Opened(given, fmt, _sha(raw), copy.deepcopy(data))


def _key(entry: object, n: int) -> str:
    if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]:
        return "id:" + entry["id"]
    return "entry:" + json.dumps(entry, sort_keys=True, default=str)


def _merge_list(base: list, mine: list, theirs: list, conflicts: list[str]) -> list:
    b = {_key(e, n): e for n, e in enumerate(base)}
    m = {_key(e, n): e for n, e in enumerate(mine)}
    t = {_key(e, n): e for n, e in enumerate(theirs)}
    order = list(dict.fromkeys([*t, *m]))
    out = []
    for key in order:
        be, me, te = b.get(key), m.get(key), t.get(key)
        if me == be:
            pick = te
        elif te == be:
            pick = me
        elif me == te:
            pick = me
        else:  # both changed it differently: mine wins, and it is reported
            conflicts.append(key.split(":", 1)[1])
            pick = me if me is not None else te
        if pick is not None:
            out.append(pick)
    return out


def _entries(data: dict, key: str) -> dict[str, object]:
    value = data.get(key)
    return {e["id"]: e for e in value if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"]} \
        if isinstance(value, list) else {}


def renumber_new_ids(base: dict, mine: dict, theirs: dict) -> tuple[dict, dict[str, str]]:
    """``mine`` with each entry it added under an id that ``theirs`` also added (for another entry) renumbered.

    Two editors who open the same file both get the next free id (``o03``) for what they add; whoever merges
    second keeps every entry: the other side's ``o03`` stays, one's own becomes the next id free on both
    sides. Returns the new mapping and ``{old id: new id}``.

    >>> base = {"ood": [{"id": "o01"}]}
    >>> mine = {"ood": [{"id": "o01"}, {"id": "o02", "query": "a"}]}
    >>> theirs = {"ood": [{"id": "o01"}, {"id": "o02", "query": "b"}]}
    >>> renumber_new_ids(base, mine, theirs)[1]
    {'o02': 'o03'}
    """
    import re

    from .edit import ids, next_id

    out = copy.deepcopy(mine)
    renamed: dict[str, str] = {}
    base_ids = ids(base)
    taken = ids(mine) | ids(theirs)
    theirs_entries = {**_entries(theirs, "questions"), **_entries(theirs, "ood")}
    for key in ("questions", "ood"):
        for entry in out.get(key) if isinstance(out.get(key), list) else ():
            eid = entry.get("id") if isinstance(entry, dict) else None
            if not isinstance(eid, str) or eid in base_ids or eid not in theirs_entries or theirs_entries[eid] == entry:
                continue
            m = re.fullmatch(r"(.*?)(\d+)", eid)
            new = next_id({"ood": [{"id": i} for i in taken]}, m.group(1) if m else f"{eid}-")
            entry["id"] = renamed[eid] = new
            taken.add(new)
    return out, renamed


def merge(base: dict, mine: dict, theirs: dict) -> tuple[dict, list[str]]:
    """Three-way merge of ground truths: ``mine`` edited ``base``, ``theirs`` is the file now.

    Entries of ``questions`` and ``ood`` are matched by id; an entry only one
    side changed (added, edited, deleted) takes that side's version; one both
    changed differently takes mine and its id is returned in the conflicts.
    An entry both sides added under one id is two entries: mine is renumbered
    first (:func:`renumber_new_ids`). Other top-level keys follow the same rule.
    """
    mine = renumber_new_ids(base, mine, theirs)[0]
    conflicts: list[str] = []
    out: dict = {}
    for key in dict.fromkeys([*theirs, *mine]):
        bv, mv, tv = base.get(key), mine.get(key), theirs.get(key)
        if key in ("questions", "ood") and all(isinstance(v, list) or v is None for v in (bv, mv, tv)):
            out[key] = _merge_list(bv or [], mv or [], tv or [], conflicts)
            continue
        if mv == bv:
            if key in theirs:
                out[key] = tv
        elif key in mine:
            out[key] = mv
    return copy.deepcopy(out), conflicts
