"""The on-disk store: cached embeddings and pair scores, and a catalogue of stamped indexes.

One SQLite file, ``ragdiag.sqlite``, in a cache folder: the ``root`` argument,
else ``$RAGDIAG_CACHE``, else ``.ragdiag-cache/`` under the working directory.

- **Embeddings** are keyed by (*space*, sha256 of the embedded text), where the
  space is the sha256 of the full encoder stamp (model, weights hash, dim,
  max sequence length, pooling, normalisation, precision). A vector computed
  by another model or precision lives in another space and is simply not
  found: vectors of two models are never mixed.
- **Pair scores** (cross-encoder, MaxSim) are keyed by (scorer identity,
  sha256 of the query, sha256 of the chunk text).
- **Indexes** are catalogue rows, each an :class:`IndexStamp`. :meth:`Store.status`
  says which are stale against the current model, corpus, pipeline and
  extractors, and why; :meth:`Store.clear` frees space.

Safety
------
- Every write is one SQLite transaction (WAL journal): a crash mid-write
  leaves the previous state readable, and any number of processes can read
  and write at once (writers queue on ``busy_timeout``).
- Every entry carries a CRC-32 of its key and bytes, checked on every read. An
  entry that fails (flipped or truncated bytes) is never served: it counts as
  missing, is recomputed and overwritten.
- A database file that SQLite itself cannot use (a corrupt page, a mangled
  schema, a header it rejects, or a failed ``PRAGMA quick_check`` at open) is
  moved aside as ``ragdiag.sqlite.corrupt-<UTC timestamp>`` and the store
  starts empty, with a :class:`RuntimeWarning`. A cache that cannot be written (disk full,
  locked for longer than the timeout) warns and still returns the results.

Example
-------
>>> import tempfile
>>> from ragdiag.encoder import EncoderStamp
>>> class Ones:  # a fake encoder: every text maps to the same unit vector
...     stamp = EncoderStamp("fake-ones", "0" * 64, 2, 8, "mean", True, "fp32")
...     def encode(self, texts, *, progress=None):
...         return np.tile(np.float32([0.6, 0.8]), (len(texts), 1))
>>> with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
...     first = store.embed(Ones(), ["a", "b"])
...     again = store.embed(Ones(), ["b", "a", "c"])
>>> (first.computed, first.reused), (again.computed, again.reused)
((2, 0), (1, 2))
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import struct
import threading
import warnings
import zlib
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from . import PIPELINE_VERSION

__all__ = [
    "CACHE_ENV",
    "DB_NAME",
    "ClearResult",
    "CurrentState",
    "EmbedResult",
    "IndexStamp",
    "IndexStatus",
    "ScoreResult",
    "Store",
    "VerifyResult",
    "encoder_space",
    "corpus_extractors",
    "current_stamps",
    "format_status_table",
    "record_evaluation",
    "resolve_root",
    "text_sha256",
]

CACHE_ENV = "RAGDIAG_CACHE"
DEFAULT_DIRNAME = ".ragdiag-cache"
DB_NAME = "ragdiag.sqlite"
SCHEMA_VERSION = "1"

_IN_CHUNK = 500  # keys per ``IN (...)`` query, far below SQLite's variable limit
# SQLite result codes that say nothing about the file's health: PERM, BUSY, LOCKED,
# NOMEM, READONLY, INTERRUPT, IOERR, FULL, CANTOPEN, PROTOCOL, NOLFS, AUTH.
_ENVIRONMENT_CODES = {3, 5, 6, 7, 8, 9, 10, 13, 14, 15, 22, 23}
_ENCODER_FIELDS = ("model", "weights_sha256", "dim", "max_seq_length", "pooling", "normalize", "precision")

ProgressFn = Callable[[int, int], None]


# ---------------------------------------------------------------------------
# keys and checksums
# ---------------------------------------------------------------------------


def text_sha256(text: str) -> str:
    """Hex sha256 of the UTF-8 text: the content key of a chunk or query.

    >>> text_sha256("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _stamp_dict(stamp: Any) -> dict:
    """An encoder stamp as a plain dict: an ``EncoderStamp`` or a mapping."""
    if hasattr(stamp, "as_dict"):
        stamp = stamp.as_dict()
    if not isinstance(stamp, Mapping):
        raise TypeError(f"an encoder stamp must be an EncoderStamp or a mapping, got {type(stamp).__name__}")
    missing = [k for k in _ENCODER_FIELDS if k not in stamp]
    if missing:
        raise ValueError(f"encoder stamp lacks {', '.join(missing)}: got keys {sorted(stamp)}")
    return dict(stamp)


def encoder_space(stamp: Any) -> str:
    """The embedding space of an encoder stamp: sha256 of its canonical JSON.

    Two stamps that differ in anything (weights, precision, window...) give
    two spaces, so their vectors can never be served for each other.
    """
    return hashlib.sha256(("embedding\0" + _canonical(_stamp_dict(stamp))).encode()).hexdigest()


def _score_space(identity: str) -> str:
    return hashlib.sha256(("scores\0" + identity).encode()).hexdigest()


def _utf8(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")  # damaged text read back stays hashable


def _vector_crc(space: str, text_sha: str, dim: int, data: bytes) -> int:
    return zlib.crc32(data, zlib.crc32(_utf8(f"{space}\0{text_sha}\0{dim}")))


def _score_crc(space: str, query_sha: str, text_sha: str, data: bytes) -> int:
    return zlib.crc32(data, zlib.crc32(_utf8(f"{space}\0{query_sha}\0{text_sha}")))


def _text_crc(key: str, text: str) -> int:
    return zlib.crc32(_utf8(text), zlib.crc32(_utf8(key)))


def _chunks(items: Sequence, n: int = _IN_CHUNK) -> Iterator[Sequence]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def resolve_root(root: str | os.PathLike | None = None) -> Path:
    """The cache folder: ``root`` if given, else ``$RAGDIAG_CACHE``, else ``./.ragdiag-cache``."""
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.cwd() / DEFAULT_DIRNAME


# ---------------------------------------------------------------------------
# stamps
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexStamp:
    """Everything that determines what an index holds, written beside it.

    ``key`` identifies the index: a hash of every field except ``created``
    and ``n_chunks`` (so rebuilding the same index replaces its row).
    ``n_chunks`` is the number of chunks the store actually holds vectors
    for when recorded with ``texts`` (see :meth:`Store.record_index`).
    ``extractor_versions`` are strings such as ``"markdown/1"`` (name/version).
    ``chunking`` is a JSON-able dict of the strategy's parameters.

    >>> s = IndexStamp("m", "w" * 64, 384, 256, "mean", True, "fp32", "1", ("markdown/1",),
    ...                "c" * 64, "/docs", {"strategy": "E", "size": 512}, 940, "2026-01-01T00:00:00+00:00")
    >>> s.key == replace(s, n_chunks=10, created="2027-01-01T00:00:00+00:00").key
    True
    >>> s.key == replace(s, precision="bf16").key
    False
    """

    model: str
    weights_sha256: str
    dim: int
    max_seq_length: int
    pooling: str
    normalize: bool
    precision: str
    pipeline_version: str
    extractor_versions: tuple[str, ...]
    corpus_sha256: str
    corpus_root: str
    chunking: Mapping[str, Any]
    n_chunks: int
    created: str = field(default_factory=_now_iso)

    def __post_init__(self) -> None:
        for name in ("dim", "max_seq_length", "n_chunks"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"IndexStamp.{name} must be a non-negative integer, got {value!r}")
            object.__setattr__(self, name, int(value))
        if isinstance(self.extractor_versions, str):
            raise ValueError("extractor_versions must be a sequence of strings such as ('markdown/1',), not one string")
        object.__setattr__(self, "extractor_versions", tuple(sorted({str(v) for v in self.extractor_versions})))
        try:
            chunking = json.loads(_canonical(dict(self.chunking)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"IndexStamp.chunking must be a JSON-able dict of parameters: {exc}") from None
        object.__setattr__(self, "chunking", chunking)
        object.__setattr__(self, "pipeline_version", str(self.pipeline_version))
        object.__setattr__(self, "normalize", bool(self.normalize))

    def __hash__(self) -> int:
        return hash((self.key, self.n_chunks, self.created))

    @classmethod
    def build(cls, encoder_stamp: Any, *, corpus_sha256: str, corpus_root: str | os.PathLike,
              chunking: Mapping[str, Any], n_chunks: int, extractor_versions: Sequence[str] = (),
              pipeline_version: str = PIPELINE_VERSION, created: str | None = None) -> IndexStamp:
        """The stamp of an index built now: encoder stamp (or its dict) plus corpus and chunking.

        ``corpus_root`` is made absolute, so the same folder matches from any working directory.
        """
        enc = _stamp_dict(encoder_stamp)
        return cls(**{k: enc[k] for k in _ENCODER_FIELDS}, pipeline_version=pipeline_version,
                   extractor_versions=tuple(extractor_versions), corpus_sha256=corpus_sha256,
                   corpus_root=os.path.abspath(os.fspath(corpus_root)), chunking=chunking, n_chunks=n_chunks,
                   created=created or _now_iso())

    @property
    def encoder(self) -> dict:
        """The encoder part of the stamp (equal to ``EncoderStamp.as_dict()``)."""
        return {k: getattr(self, k) for k in _ENCODER_FIELDS}

    @property
    def space(self) -> str:
        """The embedding space its vectors live in (see :func:`encoder_space`)."""
        return encoder_space(self.encoder)

    @property
    def slot(self) -> tuple[str, str]:
        """(corpus root, chunking parameters): what a current stamp is compared against."""
        return self.corpus_root, _canonical(self.chunking)

    @property
    def key(self) -> str:
        d = self.as_dict()
        del d["created"], d["n_chunks"]
        return hashlib.sha256(_canonical(d).encode()).hexdigest()

    def as_dict(self) -> dict:
        d = asdict(self)
        d["extractor_versions"] = list(self.extractor_versions)
        d["chunking"] = dict(self.chunking)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> IndexStamp:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass(frozen=True)
class CurrentState:
    """What is current now, to judge stored indexes against.

    ``encoders``: stamps (or dicts) of the encoders in use; an index made by
    none of them is stale. ``corpora``: corpus root -> corpus sha256.
    ``extractor_versions``: the extractors available now (None: not checked);
    an index is stale when an extractor it used now has another version.
    ``indexes``: stamps of the indexes the current run would build; a stored
    index with the same corpus and chunking must hold as many chunks.
    """

    encoders: tuple[Mapping[str, Any], ...]
    corpora: Mapping[str, str] = field(default_factory=dict)
    pipeline_version: str | None = PIPELINE_VERSION
    extractor_versions: tuple[str, ...] | None = None
    indexes: tuple[IndexStamp, ...] = ()

    def __post_init__(self) -> None:
        encoders = self.encoders
        if hasattr(encoders, "as_dict") or isinstance(encoders, Mapping):
            encoders = (encoders,)
        object.__setattr__(self, "encoders", tuple(_stamp_dict(e) for e in encoders))
        object.__setattr__(self, "corpora", {os.path.abspath(k): v for k, v in dict(self.corpora).items()})
        if self.extractor_versions is not None:
            object.__setattr__(self, "extractor_versions", tuple(sorted(set(self.extractor_versions))))
        object.__setattr__(self, "indexes", tuple(self.indexes))

    @classmethod
    def from_stamps(cls, stamps: Sequence[IndexStamp]) -> CurrentState:
        """The current state implied by the stamps of the indexes a run would build now."""
        stamps = tuple(stamps)
        encoders: list[dict] = []
        for s in stamps:
            if s.encoder not in encoders:
                encoders.append(s.encoder)
        pipelines = {s.pipeline_version for s in stamps}
        if len(pipelines) > 1:
            raise ValueError(f"current stamps disagree on the pipeline version: {sorted(pipelines)}")
        corpora: dict[str, str] = {}
        for s in stamps:
            if corpora.setdefault(s.corpus_root, s.corpus_sha256) != s.corpus_sha256:
                raise ValueError(f"current stamps disagree on the corpus hash of {s.corpus_root}")
        extractors = sorted({v for s in stamps for v in s.extractor_versions})
        return cls(encoders=tuple(encoders), corpora=corpora,
                   pipeline_version=pipelines.pop() if pipelines else None,
                   extractor_versions=tuple(extractors) if stamps else None, indexes=stamps)


@dataclass(frozen=True)
class IndexStatus:
    """A stored index judged against the current state.

    ``reasons`` say why it is stale (empty when current); ``unchecked`` names
    what could not be compared (e.g. ``"corpus"`` for a corpus root the
    current state does not know).
    """

    stamp: IndexStamp
    stale: bool
    reasons: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class EmbedResult:
    """Vectors in input order, float32 ``(len(texts), dim)``.

    ``computed`` + ``reused`` is the number of distinct texts; ``repaired``
    counts stored entries that failed their checksum and were recomputed.
    """

    vectors: np.ndarray
    computed: int
    reused: int
    repaired: int = 0


@dataclass(frozen=True, eq=False)
class ScoreResult:
    """Scores in input order, float64 ``(len(texts),)``; counts as in :class:`EmbedResult`."""

    scores: np.ndarray
    computed: int
    reused: int
    repaired: int = 0


@dataclass(frozen=True)
class ClearResult:
    """What :meth:`Store.clear` removed and how many bytes the files shrank by."""

    freed_bytes: int
    removed_indexes: int
    removed_vectors: int
    removed_scores: int = 0

    def __str__(self) -> str:
        return (f"freed {self.freed_bytes / 1e6:.1f} MB: {self.removed_indexes} indexes, "
                f"{self.removed_vectors} vectors, {self.removed_scores} scores removed")


@dataclass(frozen=True)
class VerifyResult:
    """Entries checked by :meth:`Store.verify` and how many failed their checksum (and were removed)."""

    vectors: int
    scores: int
    indexes: int
    bad: int
    removed: int


def corpus_extractors(corpus: Any) -> tuple[str, ...]:
    """The extractor versions a corpus was loaded with (``Document.extractor``), sorted."""
    return tuple(sorted({d.extractor for d in corpus.documents}))


def current_stamps(corpus: Any, encoder: Any, strategies: Any = None) -> list[IndexStamp]:
    """The stamps the indexes of ``corpus`` would get now, one per strategy (default: all six).

    ``encoder`` is an :class:`~ragdiag.encoder.Encoder` (or anything with a
    ``stamp``); chunk counts come from chunking the corpus (pure and fast).
    Pass the result to :meth:`Store.status` or :meth:`Store.clear`.
    """
    from .chunking import chunk_corpus, parse_strategies

    stamp = encoder.stamp
    extractors = corpus_extractors(corpus)
    return [IndexStamp.build(stamp, corpus_sha256=corpus.sha256, corpus_root=corpus.root, chunking=s.params(),
                             n_chunks=len(chunk_corpus(corpus, s)), extractor_versions=extractors)
            for s in parse_strategies(strategies)]


def record_evaluation(store: Store, evaluation: Any) -> list[IndexStamp]:
    """Record one catalogue row per strategy index of an :class:`~ragdiag.evaluate.Evaluation`.

    Each row counts the chunks whose vectors the store actually holds. Returns
    the stamps as recorded; nothing when the encoder had no stamp.
    """
    enc = dict(evaluation.encoder_stamp or {})
    if any(k not in enc for k in _ENCODER_FIELDS):
        return []
    pipeline = str(enc.get("pipeline_version", PIPELINE_VERSION))
    extractors = corpus_extractors(evaluation.corpus)
    recorded = []
    for index in evaluation.indexes.values():
        stamp = IndexStamp.build(enc, corpus_sha256=evaluation.corpus.sha256, corpus_root=evaluation.corpus.root,
                                 chunking=index.strategy.params(), n_chunks=len(index.chunks),
                                 extractor_versions=extractors, pipeline_version=pipeline)
        recorded.append(store.record_index(stamp, texts=[c.embed_text for c in index.chunks]))
    return recorded


# ---------------------------------------------------------------------------
# staleness
# ---------------------------------------------------------------------------


def _encoder_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    labels = {"dim": "dim", "max_seq_length": "max sequence length", "pooling": "pooling",
              "normalize": "normalize", "precision": "precision"}
    out = []
    if old["model"] != new["model"]:
        out.append(f"model {old['model']} -> {new['model']}")
    elif old["weights_sha256"] != new["weights_sha256"]:
        out.append("model weights changed")
    for k, label in labels.items():
        if old.get(k) != new.get(k):
            out.append(f"{label} {old.get(k)} -> {new.get(k)}")
    return out or ["encoder settings changed"]


def _split_extractor(v: str) -> tuple[str, str]:
    name, sep, version = v.partition("/")  # "pdf/1+pypdf-4.2" -> ("pdf", "1+pypdf-4.2")
    return (name, version) if sep else (v, "")


def _judge(stamp: IndexStamp, current: CurrentState) -> IndexStatus:
    reasons: list[str] = []
    unchecked: list[str] = []
    enc = stamp.encoder
    if not current.encoders:
        unchecked.append("model")
    elif enc not in current.encoders:
        ref = next((e for e in current.encoders if e["model"] == enc["model"]), current.encoders[0])
        reasons += _encoder_diff(enc, ref)
    if current.pipeline_version is None:
        unchecked.append("pipeline")
    elif stamp.pipeline_version != current.pipeline_version:
        reasons.append(f"pipeline version {stamp.pipeline_version} -> {current.pipeline_version}")
    if current.extractor_versions is None:
        unchecked.append("extractors")
    else:
        now = dict(_split_extractor(v) for v in current.extractor_versions)
        for name, version in map(_split_extractor, stamp.extractor_versions):
            if name not in now:
                reasons.append(f"extractor {name} no longer current")
            elif now[name] != version:
                reasons.append(f"extractor {name} {version} -> {now[name]}")
    corpus = current.corpora.get(stamp.corpus_root)
    if corpus is None:
        unchecked.append("corpus")
    elif corpus != stamp.corpus_sha256:
        reasons.append("corpus changed")
    else:
        expected = {s.n_chunks for s in current.indexes if s.slot == stamp.slot and s.corpus_sha256 == corpus}
        if expected and stamp.n_chunks not in expected:
            reasons.append(f"holds {stamp.n_chunks} chunks, the corpus now gives {max(expected)}")
    return IndexStatus(stamp, bool(reasons), tuple(reasons), tuple(unchecked))


def _as_state(current: CurrentState | Sequence[IndexStamp] | None) -> CurrentState:
    if current is None:  # nothing known but this code's pipeline version
        return CurrentState(encoders=())
    return current if isinstance(current, CurrentState) else CurrentState.from_stamps(current)


def _chunking_label(params: Mapping[str, Any]) -> str:
    """``{"name": "E", "boundaries": True, "header": False, "size": 512}`` -> ``"E boundaries size=512"``."""
    parts = [str(params["name"])] if "name" in params else []
    for k, v in sorted(params.items()):
        if k == "name" or v is False or v == 0:
            continue
        parts.append(k if v is True else f"{k}={v}")
    return " ".join(parts)


def format_status_table(statuses: Sequence[IndexStatus]) -> str:
    """A plain-text table of index statuses, one line per index (for ``ragdiag index status``)."""
    if not statuses:
        return "no indexes in the store"
    header = ("state", "model", "precision", "dim", "chunking", "corpus", "chunks", "created", "why")
    rows = [header]
    for st in statuses:
        s = st.stamp
        state = "STALE" if st.stale else ("current?" if st.unchecked else "current")
        why = "; ".join(st.reasons)
        if st.unchecked:
            why = "; ".join(filter(None, [why, "not checked: " + ", ".join(st.unchecked)]))
        chunking = _chunking_label(s.chunking)
        rows.append((state, Path(s.model).name or s.model, s.precision, str(s.dim), chunking, s.corpus_root,
                     str(s.n_chunks), s.created[:19].replace("T", " "), why))
    from ragdiag.tables import align  # absolute: this function may move inside a package

    lines = align(rows, last_free=True)
    n_stale = sum(st.stale for st in statuses)
    lines.append(f"{len(statuses)} indexes, {n_stale} stale")
    return "\n".join(line.rstrip() for line in lines)


# ---------------------------------------------------------------------------
# the store
# ---------------------------------------------------------------------------


class _CorruptDatabase(sqlite3.DatabaseError):
    """The database file failed SQLite's own integrity check."""


def _is_corruption(exc: BaseException) -> bool:
    """True when an error means the file is damaged, not that the machine is busy or full.

    Every statement here is fixed and valid, so any SQLite error other than
    the environmental ones (busy, locked, read-only, full, I/O, permission...)
    comes from a damaged file: a corrupt page, a mangled schema ("no such
    column"), a header SQLite rejects ("unsupported file format").
    """
    if isinstance(exc, (_CorruptDatabase, UnicodeDecodeError)):
        # A damaged schema can make even SQLite's error message undecodable.
        return True
    if not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.ProgrammingError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        msg = str(exc).lower()
        return "malformed" in msg or "not a database" in msg
    return (code & 0xFF) not in _ENVIRONMENT_CODES


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: rely on SQLite alone
        yield
        return
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS spaces(space TEXT PRIMARY KEY, kind TEXT NOT NULL, identity TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors(space TEXT NOT NULL, text_sha TEXT NOT NULL, dim INTEGER NOT NULL,
    data BLOB NOT NULL, crc INTEGER NOT NULL, PRIMARY KEY(space, text_sha));
CREATE TABLE IF NOT EXISTS scores(space TEXT NOT NULL, query_sha TEXT NOT NULL, text_sha TEXT NOT NULL,
    data BLOB NOT NULL, crc INTEGER NOT NULL, PRIMARY KEY(space, query_sha, text_sha));
CREATE TABLE IF NOT EXISTS indexes(key TEXT PRIMARY KEY, space TEXT NOT NULL, stamp TEXT NOT NULL,
    crc INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS index_chunks(index_key TEXT NOT NULL, text_sha TEXT NOT NULL,
    PRIMARY KEY(index_key, text_sha)) WITHOUT ROWID;
"""


class Store:
    """The cache folder's SQLite store (stateful: holds one connection, thread-safe).

    Parameters
    ----------
    root : cache folder; None -> ``$RAGDIAG_CACHE`` or ``./.ragdiag-cache``. Created if missing.
    check : run ``PRAGMA quick_check`` at open (reads the whole file once; a
        file that fails is moved aside and the store starts empty).
    timeout : seconds a writer waits for another process's write to finish.
    """

    def __init__(self, root: str | os.PathLike | None = None, *, check: bool = True, timeout: float = 60.0):
        self.root = resolve_root(root)
        self.root.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            with contextlib.suppress(OSError):
                ignore.write_text("# ragdiag cache: never commit\n*\n")
        self.path = self.root / DB_NAME
        self.check = check
        self.timeout = float(timeout)
        self.quarantined: list[Path] = []  # files this instance moved aside
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None
        with self._lock:
            self._connect()

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (the last one to close folds the WAL into the file)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # ----- connection, corruption ---------------------------------------------
    def _connect(self) -> None:
        last: BaseException | None = None
        for _ in range(3):
            conn = None
            try:
                self._inode = self.path.stat().st_ino if self.path.exists() else None
                conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                       check_same_thread=False)
                # Damaged text comes back undecodable rather than raising: its checksum then fails.
                conn.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
                conn.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                if self.check:
                    result = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
                    if result != ["ok"]:
                        raise _CorruptDatabase("; ".join(map(str, result)))
                self._ensure_schema(conn)
                if self._inode is None:
                    self._inode = self.path.stat().st_ino
                self._conn = conn
                return
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                if conn is not None:
                    conn.close()
                if not (_is_corruption(exc) or self._readonly_header(exc)):
                    raise
                last = exc
                self._quarantine(str(exc))
        raise RuntimeError(f"ragdiag cache {self.path} stays unreadable after moving it aside: {last}")

    def _readonly_header(self, exc: BaseException) -> bool:
        """A "read-only database" error on a file we may write: a damaged header's write-version byte."""
        code = getattr(exc, "sqlite_errorcode", None)
        return (code is not None and (code & 0xFF) == sqlite3.SQLITE_READONLY and self.path.exists()
                and os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK))

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute("INSERT OR IGNORE INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
            (version,) = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if version != SCHEMA_VERSION:
                raise _CorruptDatabase(f"schema version {version!r}, this ragdiag reads {SCHEMA_VERSION!r}")
            for statement in filter(str.strip, _SCHEMA.split(";")):
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _quarantine(self, reason: str) -> None:
        """Move the unreadable database (and its WAL) aside; the next connect starts fresh."""
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        with _file_lock(self.root / "ragdiag.lock"):
            try:
                inode = self.path.stat().st_ino
            except FileNotFoundError:
                inode = None
            # Another process may already have replaced the file: leave its fresh one alone.
            if inode is not None and (self._inode is None or inode == self._inode):
                os.replace(self.path, target)
                for suffix in ("-wal", "-journal"):
                    side = self.path.with_name(self.path.name + suffix)
                    if side.exists():
                        os.replace(side, target.with_name(target.name + suffix))
                with contextlib.suppress(FileNotFoundError):
                    self.path.with_name(self.path.name + "-shm").unlink()
                self.quarantined.append(target)
                warnings.warn(f"ragdiag cache {self.path} was unreadable ({reason}); moved aside to "
                              f"{target.name}, starting empty", RuntimeWarning, stacklevel=4)
        self._inode = None

    def _run(self, fn: Callable[[sqlite3.Connection], Any], *, default: Any, what: str) -> Any:
        """Run ``fn(conn)``; on a corrupt file move it aside and retry once on a fresh one.

        A failure that remains (corruption again, disk full, lock timeout)
        warns and returns ``default``: the cache never fails the caller.
        """
        with self._lock:
            self._notice_deleted()
            for attempt in (0, 1):
                try:
                    if self._conn is None:
                        self._connect()
                    return fn(self._conn)
                except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                    if self._conn is not None and self._conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            self._conn.execute("ROLLBACK")
                    if _is_corruption(exc) and attempt == 0:
                        self._quarantine(str(exc))
                        continue
                    if isinstance(exc, sqlite3.OperationalError) or _is_corruption(exc):
                        warnings.warn(f"ragdiag cache {self.path}: {what} failed ({exc}); continuing without it",
                                      RuntimeWarning, stacklevel=3)
                        return default
                    raise
        return default  # pragma: no cover

    def _notice_deleted(self) -> None:
        """The database file was deleted (or replaced) under us: warn, and reconnect to a fresh file.

        Without this every later write would go to the unlinked file and be lost with no sign.
        """
        if self._conn is None:
            return
        try:
            inode = self.path.stat().st_ino
        except FileNotFoundError:
            inode = None
        except OSError:
            return
        if inode is not None and inode == self._inode:
            return
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
        self._conn = None
        warnings.warn(f"ragdiag cache {self.path} was deleted or replaced while in use; reconnecting (entries "
                      "computed so far in this run are written to the new file from now on)",
                      RuntimeWarning, stacklevel=4)
        with contextlib.suppress(OSError):
            self.root.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _write(conn: sqlite3.Connection, statements: Callable[[], None]) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            statements()
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # ----- embeddings ---------------------------------------------------------
    def _fetch_vectors(self, space: str, dim: int, shas: Sequence[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        def go(conn: sqlite3.Connection):
            found: dict[str, np.ndarray] = {}
            bad: list[str] = []
            nbytes = 4 * dim
            for part in _chunks(shas):
                sql = (f"SELECT text_sha, dim, data, crc FROM vectors "
                       f"WHERE space=? AND text_sha IN ({','.join('?' * len(part))})")
                for text_sha, d, data, crc in conn.execute(sql, (space, *part)):
                    if (type(data) is bytes and type(text_sha) is str and d == dim and len(data) == nbytes
                            and type(crc) is int and crc == _vector_crc(space, text_sha, dim, data)):
                        found[text_sha] = np.frombuffer(data, dtype="<f4")
                    else:
                        bad.append(str(text_sha))
            return found, bad

        return self._run(go, default=({}, []), what="reading vectors")

    def _store_vectors(self, space: str, stamp: dict, shas: Sequence[str], vectors: np.ndarray) -> None:
        dim = int(stamp["dim"])
        rows = []
        for s, v in zip(shas, np.ascontiguousarray(vectors, dtype="<f4")):
            data = v.tobytes()
            rows.append((space, s, dim, data, _vector_crc(space, s, dim, data)))

        def go(conn: sqlite3.Connection) -> None:
            def statements() -> None:
                conn.execute("INSERT OR IGNORE INTO spaces VALUES (?, 'embedding', ?)", (space, _canonical(stamp)))
                conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)", rows)

            self._write(conn, statements)

        self._run(go, default=None, what="writing vectors")

    def embed(self, encoder: Any, texts: Sequence[str], *, progress: ProgressFn | None = None,
              commit_every: int = 128) -> EmbedResult:
        """Vectors for ``texts`` under ``encoder.stamp``, computing only those not stored.

        Missing texts (distinct ones) are encoded with
        ``encoder.encode(batch, progress=...)`` in batches of ``commit_every``,
        each batch committed in one transaction, so an interrupted run keeps
        its finished batches. ``progress(done, total)`` counts texts being
        computed (it is not called when everything is stored).
        """
        if commit_every < 1:
            raise ValueError(f"commit_every must be >= 1, got {commit_every}")
        stamp = _stamp_dict(encoder.stamp)
        dim = int(stamp["dim"])
        space = encoder_space(stamp)
        texts = list(texts)
        bad_type = next((t for t in texts if not isinstance(t, str)), None)
        if bad_type is not None:
            raise TypeError(f"texts must be strings, got {type(bad_type).__name__}")
        shas = [text_sha256(t) for t in texts]
        unique = dict(zip(shas, texts))
        found, bad = self._fetch_vectors(space, dim, list(unique))
        missing = [s for s in unique if s not in found]
        total = len(missing)
        for start in range(0, total, commit_every):
            part = missing[start : start + commit_every]
            report = None
            if progress is not None:
                def report(done: int, _n: int, base: int = start) -> None:
                    progress(base + done, total)
            vectors = np.asarray(encoder.encode([unique[s] for s in part], progress=report), dtype=np.float32)
            if vectors.shape != (len(part), dim):
                raise ValueError(f"encoder returned shape {vectors.shape}, expected {(len(part), dim)}")
            if not np.isfinite(vectors).all():
                raise ValueError("encoder returned non-finite values; nothing was cached")
            self._store_vectors(space, stamp, part, vectors)
            found.update(zip(part, vectors))
        out = np.empty((len(texts), dim), dtype=np.float32)
        for i, s in enumerate(shas):
            out[i] = found[s]
        return EmbedResult(out, computed=total, reused=len(unique) - total, repaired=len(set(bad)))

    def stored_vectors(self, stamp: Any, text_shas: Sequence[str]) -> set[str]:
        """Which of ``text_shas`` (see :func:`text_sha256`) have a valid stored vector under encoder ``stamp``."""
        enc = _stamp_dict(stamp)
        found, _ = self._fetch_vectors(encoder_space(enc), int(enc["dim"]), list(dict.fromkeys(text_shas)))
        return set(found)

    def put_vectors(self, stamp: Any, text_shas: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors computed elsewhere (a verified snapshot) under encoder ``stamp``, in one transaction."""
        enc = _stamp_dict(stamp)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(text_shas), int(enc["dim"])):
            raise ValueError(f"vectors of shape {vectors.shape} for {len(text_shas)} texts of dim {enc['dim']}")
        if not np.isfinite(vectors).all():
            raise ValueError("non-finite vectors; nothing was stored")
        self._store_vectors(encoder_space(enc), enc, list(text_shas), vectors)

    # ----- pair scores --------------------------------------------------------
    def _fetch_scores(self, space: str, qsha: str, keys: Sequence[str]) -> tuple[dict[str, float], list[str]]:
        def fetch(conn: sqlite3.Connection):
            found: dict[str, float] = {}
            bad: list[str] = []
            for part in _chunks(list(keys)):
                sql = (f"SELECT text_sha, data, crc FROM scores WHERE space=? AND query_sha=? "
                       f"AND text_sha IN ({','.join('?' * len(part))})")
                for text_sha, data, crc in conn.execute(sql, (space, qsha, *part)):
                    if (type(data) is bytes and len(data) == 8 and type(text_sha) is str and type(crc) is int
                            and crc == _score_crc(space, qsha, text_sha, data)):
                        found[text_sha] = struct.unpack("<d", data)[0]
                    else:
                        bad.append(str(text_sha))
            return found, bad

        return self._run(fetch, default=({}, []), what="reading scores")

    def _store_scores(self, scorer: str, space: str, qsha: str, shas: Sequence[str], values: Sequence[float]) -> None:
        rows = []
        for s, v in zip(shas, values):
            data = struct.pack("<d", float(v))
            rows.append((space, qsha, s, data, _score_crc(space, qsha, s, data)))

        def write(conn: sqlite3.Connection) -> None:
            def statements() -> None:
                conn.execute("INSERT OR IGNORE INTO spaces VALUES (?, 'scores', ?)", (space, str(scorer)))
                conn.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)", rows)

            self._write(conn, statements)

        self._run(write, default=None, what="writing scores")

    def scores(self, scorer: str, query: str, texts: Sequence[str],
               compute: Callable[[list[str]], np.ndarray]) -> ScoreResult:
        """Scores of (``query``, text) pairs under scorer identity ``scorer``, computing only missing ones.

        ``compute(missing_texts)`` returns one score per text. The identity
        must change whenever the scores would (model name + weights hash).
        """
        space = _score_space(str(scorer))
        qsha = text_sha256(query)
        texts = list(texts)
        shas = [text_sha256(t) for t in texts]
        unique = dict(zip(shas, texts))
        found, bad = self._fetch_scores(space, qsha, list(unique))
        missing = [s for s in unique if s not in found]
        if missing:
            values = np.asarray(compute([unique[s] for s in missing]), dtype=np.float64).reshape(-1)
            if len(values) != len(missing):
                raise ValueError(f"compute returned {len(values)} scores for {len(missing)} texts")
            self._store_scores(scorer, space, qsha, missing, values)
            found.update(zip(missing, map(float, values)))
        out = np.array([found[s] for s in shas], dtype=np.float64)
        return ScoreResult(out, computed=len(missing), reused=len(unique) - len(missing), repaired=len(set(bad)))

    def score_cache(self) -> "StoreScoreCache":
        """This store as the ``ScoreCache`` of :mod:`ragdiag.retrieval.rerank` (get / put)."""
        return StoreScoreCache(self)

    # ----- catalogue ----------------------------------------------------------
    def record_index(self, stamp: IndexStamp, *, texts: Sequence[str] | None = None) -> IndexStamp:
        """Write (or replace) the catalogue row of ``stamp.key``; returns the stamp as recorded.

        With ``texts`` (the chunks' embedded texts), ``n_chunks`` becomes the
        number of chunks whose vectors the store actually holds in the
        stamp's space, and the chunk keys are remembered so :meth:`clear`
        can free a stale index's vectors.
        """
        members: list[str] = []
        if texts is not None:
            shas = [text_sha256(t) for t in texts]
            members = list(dict.fromkeys(shas))
            found, _ = self._fetch_vectors(stamp.space, stamp.dim, members)
            stamp = replace(stamp, n_chunks=sum(s in found for s in shas))
        body = _canonical(stamp.as_dict())
        key = stamp.key

        def go(conn: sqlite3.Connection) -> None:
            def statements() -> None:
                conn.execute("INSERT OR REPLACE INTO indexes VALUES (?, ?, ?, ?)",
                             (key, stamp.space, body, _text_crc(key, body)))
                if texts is not None:
                    conn.execute("DELETE FROM index_chunks WHERE index_key=?", (key,))
                    conn.executemany("INSERT OR IGNORE INTO index_chunks VALUES (?, ?)", [(key, s) for s in members])

            self._write(conn, statements)

        self._run(go, default=None, what="recording the index")
        return stamp

    def _catalogue(self) -> tuple[list[IndexStamp], list[str]]:
        def go(conn: sqlite3.Connection):
            good, bad = [], []
            for key, body, crc in conn.execute("SELECT key, stamp, crc FROM indexes"):
                try:
                    if type(body) is not str or crc != _text_crc(key, body):
                        raise ValueError("checksum")
                    stamp = IndexStamp.from_dict(json.loads(body))
                    if stamp.key != key:
                        raise ValueError("key")
                    good.append(stamp)
                except (TypeError, ValueError):
                    bad.append(key)
            return good, bad

        good, bad = self._run(go, default=([], []), what="reading the catalogue")
        good.sort(key=lambda s: (s.corpus_root, _canonical(s.chunking), s.model, s.created))
        return good, bad

    def indexes(self) -> list[IndexStamp]:
        """Every index in the catalogue (rows that fail their checksum are skipped)."""
        return self._catalogue()[0]

    def status(self, current: CurrentState | Sequence[IndexStamp] | None) -> list[IndexStatus]:
        """Each stored index, stale or not, with the reasons (see :class:`CurrentState`).

        ``current`` may be the stamps a run would build now (see
        :func:`current_stamps`), or None when the corpus or model cannot be
        loaded: then only the pipeline version is judged.
        """
        state = _as_state(current)
        return [_judge(s, state) for s in self.indexes()]

    # ----- space ----------------------------------------------------------------
    def size_bytes(self) -> int:
        """Bytes on disk: the database file and its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += self.path.with_name(self.path.name + suffix).stat().st_size
        return total

    def _compact(self) -> None:
        with self._lock:
            if self._conn is None:
                return
            try:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._conn.execute("VACUUM")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError:
                pass  # another process is reading: the pages are free for reuse, the file keeps its size

    def indexes_of(self, corpus_root: str | os.PathLike) -> list[IndexStamp]:
        """The catalogued indexes of one corpus folder (compared as absolute paths)."""
        root = os.path.abspath(os.fspath(corpus_root))
        return [s for s in self.indexes() if s.corpus_root == root]

    def clear(self, *, stale_only: bool = False,
              current: CurrentState | Sequence[IndexStamp] | None = None,
              corpus_root: str | os.PathLike | None = None) -> ClearResult:
        """Free space: everything, or (``stale_only``) the stale indexes and vectors nothing current uses.

        ``stale_only`` removes, against ``current``: stale catalogue rows and
        rows that fail their checksum; vectors recorded as members of a
        removed index that no remaining index in the same space holds; and
        every vector of an embedding space that is neither a current encoder's
        nor used by a remaining index. Cached pair scores are kept (they are
        keyed by content and scorer, so they never go stale); ``clear()``
        removes them with everything else.
        """
        before = self.size_bytes()
        if corpus_root is not None and not stale_only:
            # One corpus: its catalogue rows, and the vectors only its indexes held (as a stale prune does).
            gone = [st.key for st in self.indexes_of(corpus_root)]
            good, _bad = self._catalogue()
            keep_spaces = {st.space for st in good}
            prune_spaces = False
        if not stale_only and corpus_root is None:
            def wipe(conn: sqlite3.Connection) -> tuple[int, int, int]:
                counts = [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                          for t in ("indexes", "vectors", "scores")]

                def statements() -> None:
                    for table in ("index_chunks", "indexes", "vectors", "scores", "spaces"):
                        conn.execute(f"DELETE FROM {table}")

                self._write(conn, statements)
                return tuple(counts)

            n_idx, n_vec, n_sco = self._run(wipe, default=(0, 0, 0), what="clearing")
        else:
            if stale_only:
                if current is None:
                    raise ValueError("clear(stale_only=True) needs current=: the state to judge staleness against")
                state = _as_state(current)
                good, bad = self._catalogue()
                statuses = [_judge(s, state) for s in good]
                gone = [st.stamp.key for st in statuses if st.stale] + bad
                keep_spaces = {st.stamp.space for st in statuses if not st.stale}
                keep_spaces |= {encoder_space(e) for e in state.encoders}
                prune_spaces = bool(state.encoders)

            def prune(conn: sqlite3.Connection) -> tuple[int, int, int]:
                removed_vectors = 0

                def statements() -> None:
                    nonlocal removed_vectors
                    conn.execute("CREATE TEMP TABLE IF NOT EXISTS gone(key TEXT PRIMARY KEY)")
                    conn.execute("CREATE TEMP TABLE IF NOT EXISTS keep(space TEXT PRIMARY KEY)")
                    conn.execute("DELETE FROM temp.gone")
                    conn.execute("DELETE FROM temp.keep")
                    conn.executemany("INSERT OR IGNORE INTO temp.gone VALUES (?)", [(k,) for k in gone])
                    conn.executemany("INSERT OR IGNORE INTO temp.keep VALUES (?)", [(s,) for s in keep_spaces])
                    cur = conn.execute("""
                        DELETE FROM vectors WHERE rowid IN (
                          SELECT v.rowid FROM vectors v
                          JOIN indexes i ON i.space = v.space AND i.key IN (SELECT key FROM temp.gone)
                          JOIN index_chunks c ON c.index_key = i.key AND c.text_sha = v.text_sha
                          WHERE NOT EXISTS (
                            SELECT 1 FROM index_chunks c2 JOIN indexes i2 ON i2.key = c2.index_key
                            WHERE i2.space = v.space AND c2.text_sha = v.text_sha
                              AND i2.key NOT IN (SELECT key FROM temp.gone)))""")
                    removed_vectors += cur.rowcount
                    if prune_spaces:
                        cur = conn.execute("DELETE FROM vectors WHERE space NOT IN (SELECT space FROM temp.keep)")
                        removed_vectors += cur.rowcount
                        conn.execute("DELETE FROM spaces WHERE kind='embedding' "
                                     "AND space NOT IN (SELECT space FROM temp.keep)")
                    conn.execute("DELETE FROM index_chunks WHERE index_key IN (SELECT key FROM temp.gone)")
                    conn.execute("DELETE FROM indexes WHERE key IN (SELECT key FROM temp.gone)")

                self._write(conn, statements)
                return len(gone), removed_vectors, 0

            n_idx, n_vec, n_sco = self._run(prune, default=(0, 0, 0), what="clearing stale indexes")
        self._compact()
        return ClearResult(max(0, before - self.size_bytes()), n_idx, n_vec, n_sco)

    def verify(self, *, repair: bool = True) -> VerifyResult:
        """Check every entry's checksum (and the file with ``quick_check``); remove bad entries if ``repair``.

        Bad entries are never served anyway; this finds them ahead of time.
        """
        def go(conn: sqlite3.Connection) -> tuple[int, int, list, list]:
            result = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
            if result != ["ok"]:
                raise _CorruptDatabase("; ".join(map(str, result)))
            bad_vec, bad_sco = [], []
            n_vec = n_sco = 0
            for rowid, space, text_sha, dim, data, crc in conn.execute(
                    "SELECT rowid, space, text_sha, dim, data, crc FROM vectors"):
                n_vec += 1
                ok = (type(data) is bytes and type(dim) is int and len(data) == 4 * dim and type(space) is str
                      and type(text_sha) is str and crc == _vector_crc(space, text_sha, dim, data))
                if not ok:
                    bad_vec.append((rowid,))
            for rowid, space, qsha, text_sha, data, crc in conn.execute(
                    "SELECT rowid, space, query_sha, text_sha, data, crc FROM scores"):
                n_sco += 1
                ok = (type(data) is bytes and len(data) == 8 and type(space) is str and type(qsha) is str
                      and type(text_sha) is str and crc == _score_crc(space, qsha, text_sha, data))
                if not ok:
                    bad_sco.append((rowid,))
            return n_vec, n_sco, bad_vec, bad_sco

        checked = self._run(go, default=None, what="verifying")
        if checked is None:
            return VerifyResult(0, 0, 0, 0, 0)
        n_vec, n_sco, bad_vec, bad_sco = checked
        good, bad_idx = self._catalogue()
        n_bad = len(bad_vec) + len(bad_sco) + len(bad_idx)
        if repair and n_bad:
            def fix(conn: sqlite3.Connection) -> None:
                def statements() -> None:
                    conn.executemany("DELETE FROM vectors WHERE rowid=?", bad_vec)
                    conn.executemany("DELETE FROM scores WHERE rowid=?", bad_sco)
                    conn.executemany("DELETE FROM index_chunks WHERE index_key=?", [(k,) for k in bad_idx])
                    conn.executemany("DELETE FROM indexes WHERE key=?", [(k,) for k in bad_idx])

                self._write(conn, statements)

            self._run(fix, default=None, what="removing bad entries")
        return VerifyResult(n_vec, n_sco, len(good) + len(bad_idx), n_bad, n_bad if repair else 0)


class StoreScoreCache:
    """Get/put view of a store's pair scores, for rerankers that score many queries in one pass."""

    def __init__(self, store: Store):
        self.store = store

    def get(self, scorer: str, query: str, texts: Sequence[str]) -> np.ndarray:
        """Cached scores, NaN where none is stored or a stored one failed its checksum."""
        shas = [text_sha256(t) for t in texts]
        found, _ = self.store._fetch_scores(_score_space(str(scorer)), text_sha256(query), list(dict.fromkeys(shas)))
        return np.array([found.get(s, np.nan) for s in shas], dtype=np.float64)

    def put(self, scorer: str, query: str, texts: Sequence[str], scores: np.ndarray) -> None:
        shas = [text_sha256(t) for t in texts]
        self.store._store_scores(scorer, _score_space(str(scorer)), text_sha256(query), shas,
                                 np.asarray(scores, dtype=np.float64).reshape(-1))
