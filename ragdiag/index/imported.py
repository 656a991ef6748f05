"""Vectors a team already has: chunk (and query) vectors read from a file, evaluated like ragdiag's own.

A Spark or Ray pipeline embeds where it already runs and writes one table:

- **Parquet or Arrow** (``.parquet``, ``.arrow``, ``.feather``, ``.ipc``): a ``vector``
  column (a list of floats per row) and the rows' keys, one of ``chunk_id``
  (ragdiag's chunk ids, e.g. ``C:svm:0001``), ``doc_id`` + ``start`` + ``end``
  (character offsets into the document's canonical text) or ``text`` (the text
  embedded); the schema's metadata names the ``model`` and its ``dim``.
- **.npy** (``float32``, one row per vector) with a sidecar ``<name>.json``:
  ``{"model": ..., "dim": ..., "key": "chunk_id" | "text", "ids": [...]}``, one id per row.

:class:`ImportedEncoder` serves those vectors where the evaluation asks an
encoder for them (looked up by the chunk's text, id or span), so every
retriever, the store and the reports see them as they see ragdiag's own. Its
stamp names the model and says the vectors are imported (``pooling`` and
``precision`` are ``"imported"``; ``weights_sha256`` is the file's sha256), so
they never mix with vectors ragdiag computed. Query vectors come from a second
file (keyed by ``text`` or ``query_id``) or from the named model, which also
counts the wordpieces for the chunk audit.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .encoder.protocols import EncoderStamp

__all__ = ["VectorTable", "VectorFileError", "read_vector_table", "ImportedEncoder", "chunk_keys"]

_ARROW = (".parquet", ".arrow", ".feather", ".ipc")


class VectorFileError(ValueError):
    """A vector file that cannot be used; the message is one line saying what to fix."""


@dataclass(frozen=True, eq=False)
class VectorTable:
    """The rows of a vector file: ``keys[i]`` (a chunk id, a ``(doc_id, start, end)`` span or a text) -> ``vectors[i]``."""

    path: Path
    key: str  # chunk_id, span, text or query_id
    keys: tuple
    vectors: np.ndarray  # float32 (rows, dim), unit length
    model: str
    dim: int
    sha256: str

    def lookup(self) -> dict:
        """Key -> row (the first row of a repeated key)."""
        out: dict = {}
        for i, k in enumerate(self.keys):
            out.setdefault(k, i)
        return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _meta(value, name: str, path: Path) -> str:
    if value in (None, "", b""):
        raise VectorFileError(f"{path.name}: no '{name}' in its metadata; write the embedding model's name and "
                           "dimension there (Parquet/Arrow schema metadata 'model' and 'dim', or the .npy's "
                           "sidecar .json)")
    return value.decode() if isinstance(value, bytes) else str(value)


def _read_arrow(path: Path):
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path) if path.suffix == ".parquet" else feather.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise VectorFileError(f"{path.name}: not a readable {path.suffix[1:]} file "
                              f"({' '.join(str(exc).split())[:200]})") from None
    meta = table.schema.metadata or {}
    names = set(table.column_names)
    if "vector" not in names:
        raise VectorFileError(f"{path.name}: no 'vector' column (columns: {', '.join(sorted(names))})")
    if "chunk_id" in names:
        key, keys = "chunk_id", tuple(table.column("chunk_id").to_pylist())
    elif {"doc_id", "start", "end"} <= names:
        key = "span"
        keys = tuple(zip(table.column("doc_id").to_pylist(), table.column("start").to_pylist(),
                         table.column("end").to_pylist()))
    elif "query_id" in names:
        key, keys = "query_id", tuple(table.column("query_id").to_pylist())
    elif "text" in names:
        key, keys = "text", tuple(table.column("text").to_pylist())
    else:
        raise VectorFileError(f"{path.name}: no key column; add chunk_id, doc_id + start + end, or text")
    col = table.column("vector").combine_chunks()
    if len(col) == 0:
        raise VectorFileError(f"{path.name}: no rows")
    kind = col.type
    is_list = pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind)
    if not is_list or not (pa.types.is_floating(kind.value_type) or pa.types.is_integer(kind.value_type)):
        raise VectorFileError(f"{path.name}: column 'vector' is {str(kind)[:60]}; write a list of numbers per row "
                              "(float32)")
    flat = col.values if hasattr(col, "values") else col.flatten()
    lengths = np.diff(np.asarray(col.offsets)) if hasattr(col, "offsets") else np.full(len(col), col.type.list_size)
    if col.null_count or len(set(lengths.tolist())) != 1:
        raise VectorFileError(f"{path.name}: every row's vector must have the same length (found "
                           f"{sorted(set(lengths.tolist()))[:3]}, {col.null_count} missing)")
    vectors = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(col), int(lengths[0]))
    return key, keys, vectors, meta.get(b"model"), meta.get(b"dim")


def _read_npy(path: Path):
    side = path.with_suffix(".json")
    if not side.is_file():
        raise VectorFileError(f"{path.name}: a .npy needs its ids beside it in {side.name} "
                           '({"model": ..., "dim": ..., "key": "chunk_id" or "text", "ids": [...]})')
    try:
        info = json.loads(side.read_text(encoding="utf-8"))
        vectors = np.load(path, mmap_mode="r")
    except (ValueError, OSError) as exc:
        raise VectorFileError(f"{path.name}: cannot read it with {side.name} ({exc})") from None
    key = info.get("key", "chunk_id")
    if key not in ("chunk_id", "text", "query_id"):
        raise VectorFileError(f"{side.name}: key must be chunk_id, text or query_id, got {key!r}")
    ids = info.get("ids")
    if not isinstance(ids, list) or vectors.ndim != 2 or len(ids) != len(vectors):
        raise VectorFileError(f"{side.name}: 'ids' must list one id per row of {path.name} "
                           f"({vectors.shape[0] if vectors.ndim == 2 else '?'} rows, "
                           f"{len(ids) if isinstance(ids, list) else 'no'} ids)")
    return key, tuple(ids), np.asarray(vectors, dtype=np.float32), info.get("model"), info.get("dim")


def read_vector_table(path: str | Path) -> VectorTable:
    """Read a vector file (see the module's docstring); :class:`VectorFileError` says what is wrong in one line."""
    path = Path(path)
    if not path.is_file():
        raise VectorFileError(f"{path}: no such file")
    if path.suffix in _ARROW:
        key, keys, vectors, model, dim = _read_arrow(path)
    elif path.suffix == ".npy":
        key, keys, vectors, model, dim = _read_npy(path)
    else:
        raise VectorFileError(f"{path.name}: unknown kind of file; use .parquet, .arrow/.feather/.ipc, or .npy with its "
                           ".json of ids")
    model = _meta(model, "model", path)
    try:
        dim = int(_meta(dim, "dim", path))
    except ValueError:
        raise VectorFileError(f"{path.name}: 'dim' must be a whole number, got {dim!r}") from None
    if vectors.shape[1] != dim:
        raise VectorFileError(f"{path.name}: its vectors have {vectors.shape[1]} dimensions but its metadata says "
                           f"{model} has {dim}")
    norms = np.linalg.norm(vectors, axis=1)
    if not np.isfinite(vectors).all() or (norms == 0).any():
        raise VectorFileError(f"{path.name}: {int((~np.isfinite(vectors).all(axis=1) | (norms == 0)).sum())} vectors are "
                           "zero or not finite")
    vectors = vectors / norms[:, None] if np.abs(norms - 1).max() > 1e-6 else vectors
    return VectorTable(path, key, keys, np.ascontiguousarray(vectors, dtype=np.float32), model, dim, _sha256(path))


class ImportedEncoder:
    """An encoder that serves imported vectors: chunk texts from ``chunks``, queries from ``queries`` or ``model``.

    Parameters
    ----------
    chunks : VectorTable
        The chunk vectors, keyed by chunk id, span or text.
    key_of : callable
        ``text -> list of keys`` for every chunk text the evaluation may ask for
        (:func:`chunk_keys` builds it from the corpus and the strategies).
    model : encoder or None
        The named model (counts wordpieces; embeds the queries when ``queries`` is None).
    queries : VectorTable or None
        Query vectors keyed by ``text`` or ``query_id``.
    query_ids : dict
        Query text -> query id (to read ``queries`` keyed by query id).
    """

    def __init__(self, chunks: VectorTable, key_of: Callable[[str], list], *, model=None,
                 queries: VectorTable | None = None, query_ids: dict[str, str] | None = None):
        if model is None and queries is None:
            raise ValueError("imported vectors need the queries' vectors: a second file, or the model that embeds them")
        if queries is not None and queries.dim != chunks.dim:
            raise VectorFileError(f"{queries.path.name}: query vectors have {queries.dim} dimensions, the chunk vectors "
                               f"{chunks.dim}")
        model_dim = getattr(getattr(model, "stamp", None), "dim", None) if model is not None else None
        if queries is None and model_dim is not None and model_dim != chunks.dim:
            raise VectorFileError(f"{chunks.path.name}: {chunks.dim}-dimensional vectors, but the model that embeds the "
                               f"queries ({model.stamp.model}) gives {model_dim}")
        self.chunks, self.queries, self.model = chunks, queries, model
        self._key_of, self._rows = key_of, chunks.lookup()
        self._query_rows = queries.lookup() if queries is not None else {}
        self._query_ids = dict(query_ids or {})

    @property
    def stamp(self) -> EncoderStamp:
        """The vectors' identity: the named model, imported from a file of this sha256."""
        base = getattr(self.model, "stamp", None)
        return EncoderStamp(model=self.chunks.model, weights_sha256=self.chunks.sha256, dim=self.chunks.dim,
                            max_seq_length=int(getattr(base, "max_seq_length", 0) or 0), pooling="imported",
                            normalize=True, precision="imported")

    @property
    def max_seq_length(self) -> int:
        """The named model's window, in wordpieces (the chunk audit)."""
        return int(self.model.max_seq_length)

    def _row(self, text: str) -> np.ndarray | None:
        for key in self._key_of(text):
            i = self._rows.get(key)
            if i is not None:
                return self.chunks.vectors[i]
        if self.queries is not None:
            i = self._query_rows.get(text if self.queries.key == "text" else self._query_ids.get(text))
            if i is not None:
                return self.queries.vectors[i]
        return None

    def check(self, chunk_texts: Sequence[str]) -> None:
        """Raise :class:`VectorFileError` unless every chunk text has a vector (before any work is done)."""
        missing = [t for t in chunk_texts if self._row(t) is None]
        if missing:
            first = (self._key_of(missing[0]) or [missing[0][:60]])[0]
            raise VectorFileError(f"{self.chunks.path.name}: no vector for {len(missing)} of {len(chunk_texts)} chunks "
                                  f"(first: {first}); embed every chunk of the strategies evaluated, or pass "
                                  "--strategies")

    def encode(self, texts: Sequence[str], *, progress=None, token_sink=None) -> np.ndarray:
        """The imported vector of each text; texts with none are queries for the model, or an error."""
        texts = list(texts)
        out = np.zeros((len(texts), self.chunks.dim), dtype=np.float32)
        missing = []
        for i, t in enumerate(texts):
            v = self._row(t)
            if v is None:
                missing.append(i)
            else:
                out[i] = v
        if missing:
            self.check([texts[i] for i in missing if self._key_of(texts[i])])
            if self.model is None:
                raise VectorFileError(f"{self.queries.path.name}: no vector for {len(missing)} queries (first: "
                                   f"{texts[missing[0]][:60]!r})")
            out[missing] = self.model.encode([texts[i] for i in missing])
        if token_sink is not None and self.model is not None:
            for i, tok in enumerate(self.model.token_embeddings(texts)):
                token_sink(i, tok)
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def token_embeddings(self, texts: Sequence[str], *, progress=None) -> list[np.ndarray]:
        """The named model's wordpiece vectors (MaxSim); needs the model."""
        if self.model is None or not callable(getattr(self.model, "token_embeddings", None)):
            raise VectorFileError("MaxSim needs the named model's wordpiece vectors: the model is not available")
        return self.model.token_embeddings(texts, progress=progress)

    def count_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """Wordpieces per text, as the named model counts them (the chunk audit)."""
        return self.model.count_tokens(texts)

    def window_ends(self, texts: Sequence[str]) -> np.ndarray:
        """Where the named model stops reading each text."""
        return self.model.window_ends(texts)


def chunk_keys(chunks_by_strategy: dict[str, Sequence], key: str) -> Callable[[str], list]:
    """``text -> keys`` of the chunks embedding that text, for a table keyed by ``key`` (chunk_id, span or text)."""
    table: dict[str, list] = {}
    for chunks in chunks_by_strategy.values():
        for c in chunks:
            k = c.id if key == "chunk_id" else (c.doc_id, c.start, c.end) if key == "span" else c.embed_text
            table.setdefault(c.embed_text, []).append(k)
    return lambda text: table.get(text, [])
