"""The store's content caches: one class per payload kind, each with a public ``get`` / ``put``.

A payload kind names what is stored (``"embedding"``: float32 vectors keyed by
text; ``"scores"``: float64 pair scores keyed by query and text) and lives in
spaces of its own (:func:`~ragdiag.index.store.keys.payload_space` of the kind and an
identity), registered in the ``spaces`` table. Every entry carries a CRC-32 of
its key and bytes, checked on every read: an entry that fails is never served,
it counts as missing and is recomputed. A new kind (sparse vectors, another
index's payload) is a :class:`PayloadCache` subclass with its ``kind``, its
table and its ``get`` / ``put``.

:class:`CacheMethods` gives the :class:`~ragdiag.index.store.Store` its
compute-what-is-missing entry points, :meth:`~CacheMethods.embed` and
:meth:`~CacheMethods.scores`.
"""

from __future__ import annotations

import sqlite3
import struct
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from ..encoder.protocols import EncodesInSessions, ProgressFn
from .engine import Engine
from .keys import _canonical, _chunks, _score_crc, _vector_crc, payload_space, text_sha256
from .stamps import _stamp_dict, encoder_space

__all__ = ["CacheMethods", "DEFAULT_COMMIT_EVERY", "EmbedResult", "PayloadCache", "ScoreCache", "ScoreResult",
           "VectorCache"]

#: Texts per committed part of ``Store.embed`` in this process: an interrupted run loses at most this many.
DEFAULT_COMMIT_EVERY = 128


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


class PayloadCache:
    """One payload kind of a store: entries in spaces of ``kind``, each checked by its CRC on read."""

    kind: ClassVar[str] = ""

    def __init__(self, store: Engine):
        self.store = store

    def space(self, identity: str) -> str:
        """The space of this kind under ``identity`` (a model's stamp, a scorer's name...)."""
        return payload_space(self.kind, identity)

    def _insert(self, space: str, identity: str, sql: str, rows: list[tuple], *, what: str) -> None:
        """Register ``space`` (as this kind, under ``identity``) and run ``sql`` over ``rows``, in one transaction."""
        def go(conn: sqlite3.Connection) -> None:
            def statements() -> None:
                conn.execute("INSERT OR IGNORE INTO spaces VALUES (?, ?, ?)", (space, self.kind, identity))
                conn.executemany(sql, rows)

            self.store._write(conn, statements)

        self.store._run(go, default=None, what=what)


class VectorCache(PayloadCache):
    """Dense float32 vectors keyed by (encoder space, text sha256)."""

    kind = "embedding"

    @staticmethod
    def entry_ok(space: Any, text_sha: Any, dim: Any, data: Any, crc: Any) -> bool:
        """Whether a stored row is a whole vector of ``dim`` float32 whose CRC matches its key and bytes."""
        return (type(data) is bytes and type(space) is str and type(text_sha) is str and type(dim) is int
                and type(crc) is int and len(data) == 4 * dim and crc == _vector_crc(space, text_sha, dim, data))

    def fetch(self, space: str, dim: int, shas: Sequence[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """``(found, bad)``: the valid stored vectors of ``shas``, and the keys whose entry failed its checksum."""
        def go(conn: sqlite3.Connection):
            found: dict[str, np.ndarray] = {}
            bad: list[str] = []
            for part in _chunks(shas):
                sql = (f"SELECT text_sha, dim, data, crc FROM vectors "
                       f"WHERE space=? AND text_sha IN ({','.join('?' * len(part))})")
                for text_sha, d, data, crc in conn.execute(sql, (space, *part)):
                    if d == dim and self.entry_ok(space, text_sha, d, data, crc):
                        found[text_sha] = np.frombuffer(data, dtype="<f4")
                    else:
                        bad.append(str(text_sha))
            return found, bad

        return self.store._run(go, default=({}, []), what="reading vectors")

    def write(self, space: str, stamp: dict, shas: Sequence[str], vectors: np.ndarray) -> None:
        """Store ``vectors`` (rows for ``shas``) in ``space`` in one transaction."""
        dim = int(stamp["dim"])
        rows = []
        for s, v in zip(shas, np.ascontiguousarray(vectors, dtype="<f4")):
            data = v.tobytes()
            rows.append((space, s, dim, data, _vector_crc(space, s, dim, data)))
        self._insert(space, _canonical(stamp), "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)", rows,
                     what="writing vectors")

    def get(self, stamp: Any, text_shas: Sequence[str]) -> dict[str, np.ndarray]:
        """The valid stored vectors of ``text_shas`` (see :func:`~ragdiag.index.store.text_sha256`) under encoder ``stamp``."""
        enc = _stamp_dict(stamp)
        found, _ = self.fetch(encoder_space(enc), int(enc["dim"]), list(dict.fromkeys(text_shas)))
        return found

    def put(self, stamp: Any, text_shas: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors computed elsewhere (a verified snapshot) under encoder ``stamp``, in one transaction."""
        enc = _stamp_dict(stamp)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(text_shas), int(enc["dim"])):
            raise ValueError(f"vectors of shape {vectors.shape} for {len(text_shas)} texts of dim {enc['dim']}")
        if not np.isfinite(vectors).all():
            raise ValueError("non-finite vectors; nothing was stored")
        self.write(encoder_space(enc), enc, list(text_shas), vectors)


class ScoreCache(PayloadCache):
    """Pair scores keyed by (scorer space, query sha256, text sha256): the ``ScoreCache`` of rerankers."""

    kind = "scores"

    @staticmethod
    def entry_ok(space: Any, qsha: Any, text_sha: Any, data: Any, crc: Any) -> bool:
        """Whether a stored row is one float64 score whose CRC matches its key and bytes."""
        return (type(data) is bytes and len(data) == 8 and type(space) is str and type(qsha) is str
                and type(text_sha) is str and type(crc) is int and crc == _score_crc(space, qsha, text_sha, data))

    def _fetch_in(self, conn: sqlite3.Connection, space: str, qsha: str,
                  keys: Sequence[str]) -> tuple[dict[str, float], list[str]]:
        found: dict[str, float] = {}
        bad: list[str] = []
        for part in _chunks(list(keys)):
            sql = (f"SELECT text_sha, data, crc FROM scores WHERE space=? AND query_sha=? "
                   f"AND text_sha IN ({','.join('?' * len(part))})")
            for text_sha, data, crc in conn.execute(sql, (space, qsha, *part)):
                if self.entry_ok(space, qsha, text_sha, data, crc):
                    found[text_sha] = struct.unpack("<d", data)[0]
                else:
                    bad.append(str(text_sha))
        return found, bad

    def fetch(self, space: str, qsha: str, keys: Sequence[str]) -> tuple[dict[str, float], list[str]]:
        """``(found, bad)``: the valid stored scores of (query, each key), and the keys that failed their checksum."""
        return self.store._run(lambda conn: self._fetch_in(conn, space, qsha, keys), default=({}, []),
                               what="reading scores")

    def write(self, scorer: str, space: str, qsha: str, shas: Sequence[str], values: Sequence[float]) -> None:
        """Store the scores of (query, each of ``shas``) in one transaction."""
        rows = []
        for s, v in zip(shas, values):
            data = struct.pack("<d", float(v))
            rows.append((space, qsha, s, data, _score_crc(space, qsha, s, data)))
        self._insert(space, str(scorer), "INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)", rows,
                     what="writing scores")

    def get(self, scorer: str, query: str, texts: Sequence[str]) -> np.ndarray:
        """Cached scores, NaN where none is stored or a stored one failed its checksum."""
        shas = [text_sha256(t) for t in texts]
        found, _ = self.fetch(self.space(str(scorer)), text_sha256(query), list(dict.fromkeys(shas)))
        return np.array([found.get(s, np.nan) for s in shas], dtype=np.float64)

    def get_many(self, scorer: str, queries: Sequence[str], texts: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """:meth:`get` for each query and its texts, in one pass over the store (one connection, no per-query setup)."""
        space = self.space(str(scorer))
        shas = [[text_sha256(t) for t in ts] for ts in texts]

        def fetch(conn: sqlite3.Connection) -> list[np.ndarray]:
            out = []
            for q, ss in zip(queries, shas):
                found, _ = self._fetch_in(conn, space, text_sha256(q), list(dict.fromkeys(ss)))
                out.append(np.array([found.get(s, np.nan) for s in ss], dtype=np.float64))
            return out

        return self.store._run(fetch, default=[np.full(len(ss), np.nan) for ss in shas], what="reading scores")

    def put(self, scorer: str, query: str, texts: Sequence[str], scores: np.ndarray) -> None:
        """Store one score per text for (``query``, text) under scorer identity ``scorer``."""
        shas = [text_sha256(t) for t in texts]
        self.write(scorer, self.space(str(scorer)), text_sha256(query), shas,
                   np.asarray(scores, dtype=np.float64).reshape(-1))




class CacheMethods:
    """The store's compute-what-is-missing entry points over its caches (mixed into :class:`~ragdiag.index.store.Store`)."""

    def vector_cache(self) -> VectorCache:
        """This store's vectors, by encoder stamp (get / put)."""
        return VectorCache(self)

    def score_cache(self) -> ScoreCache:
        """This store as the ``ScoreCache`` of :mod:`ragdiag.retrieval.rerank` (get / put)."""
        return ScoreCache(self)

    def embed(self, encoder: Any, texts: Sequence[str], *, progress: ProgressFn | None = None,
              commit_every: int | None = None) -> EmbedResult:
        """Vectors for ``texts`` under ``encoder.stamp``, computing only those not stored.

        Missing texts (distinct ones; longest first when the encoder has
        ``count_tokens``) are encoded with
        ``encoder.encode(batch, progress=...)`` in batches of ``commit_every``,
        each batch committed in one transaction, so an interrupted run keeps
        its finished batches. ``commit_every`` defaults to ``DEFAULT_COMMIT_EVERY`` (128), or to the
        encoder's ``texts_per_commit`` when it keeps workers up across calls
        (:class:`~ragdiag.index.encoder.protocols.EncodesInSessions`: all the
        batches then run in one ``encoding_session()``). ``progress(done, total)``
        counts texts being computed (it is not called when everything is stored).
        """
        held = encoder if isinstance(encoder, EncodesInSessions) else None
        if commit_every is None:
            commit_every = int(held.texts_per_commit) if held is not None else DEFAULT_COMMIT_EVERY
        if commit_every < 1:
            raise ValueError(f"commit_every must be >= 1, got {commit_every}")
        stamp = _stamp_dict(encoder.stamp)
        dim = int(stamp["dim"])
        space = encoder_space(stamp)
        cache = self.vector_cache()
        texts = list(texts)
        bad_type = next((t for t in texts if not isinstance(t, str)), None)
        if bad_type is not None:
            raise TypeError(f"texts must be strings, got {type(bad_type).__name__}")
        shas = [text_sha256(t) for t in texts]
        unique = dict(zip(shas, texts))
        found, bad = cache.fetch(space, dim, list(unique))
        missing = [s for s in unique if s not in found]
        count = getattr(encoder, "count_tokens", None)
        if callable(count) and len(missing) > commit_every:
            # Longest first over all missing texts, not only inside each committed part: every batch then
            # holds texts of like length and wastes no compute on padding (10% faster on strategy C).
            lengths = np.asarray(count([unique[s] for s in missing]))
            missing = [missing[i] for i in np.argsort(-lengths, kind="stable")]
        total = len(missing)
        with held.encoding_session() if held is not None and total else nullcontext():
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
                cache.write(space, stamp, part, vectors)
                found.update(zip(part, vectors))
        out = np.empty((len(texts), dim), dtype=np.float32)
        for i, s in enumerate(shas):
            out[i] = found[s]
        return EmbedResult(out, computed=total, reused=len(unique) - total, repaired=len(set(bad)))

    def stored_vectors(self, stamp: Any, text_shas: Sequence[str]) -> set[str]:
        """Which of ``text_shas`` (see :func:`text_sha256`) have a valid stored vector under encoder ``stamp``."""
        return set(self.vector_cache().get(stamp, text_shas))

    def put_vectors(self, stamp: Any, text_shas: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors computed elsewhere (a verified snapshot) under encoder ``stamp``, in one transaction."""
        self.vector_cache().put(stamp, text_shas, vectors)

    def scores(self, scorer: str, query: str, texts: Sequence[str],
               compute: Callable[[list[str]], np.ndarray]) -> ScoreResult:
        """Scores of (``query``, text) pairs under scorer identity ``scorer``, computing only missing ones.

        ``compute(missing_texts)`` returns one score per text. The identity
        must change whenever the scores would (model name + weights hash).
        """
        cache = self.score_cache()
        space = cache.space(str(scorer))
        qsha = text_sha256(query)
        texts = list(texts)
        shas = [text_sha256(t) for t in texts]
        unique = dict(zip(shas, texts))
        found, bad = cache.fetch(space, qsha, list(unique))
        missing = [s for s in unique if s not in found]
        if missing:
            values = np.asarray(compute([unique[s] for s in missing]), dtype=np.float64).reshape(-1)
            if len(values) != len(missing):
                raise ValueError(f"compute returned {len(values)} scores for {len(missing)} texts")
            cache.write(scorer, space, qsha, missing, values)
            found.update(zip(missing, map(float, values)))
        out = np.array([found[s] for s in shas], dtype=np.float64)
        return ScoreResult(out, computed=len(missing), reused=len(unique) - len(missing), repaired=len(set(bad)))
