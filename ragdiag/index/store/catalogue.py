"""The catalogue of stamped indexes, and keeping the store tidy: status, clear, verify.

Each index is a catalogue row holding its :class:`~ragdiag.index.store.IndexStamp`
(checksummed like every entry). :meth:`CatalogueMethods.status` says which
rows are stale against the current model, corpus, pipeline and extractors, and
why; :meth:`CatalogueMethods.clear` frees space; :meth:`CatalogueMethods.verify`
finds damaged entries ahead of time.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, replace
from typing import Sequence

from .engine import _CorruptDatabase
from .caches import ScoreCache, VectorCache
from .keys import _canonical, _text_crc, text_sha256
from .staleness import CurrentState, IndexStatus, _as_state, _judge
from .stamps import IndexStamp, encoder_space

__all__ = ["CatalogueMethods", "ClearResult", "VerifyResult"]


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



class CatalogueMethods:
    """The catalogue and housekeeping of a store (mixed into :class:`~ragdiag.index.store.Store`)."""

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
            found, _ = self.vector_cache().fetch(stamp.space, stamp.dim, members)
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

    # ----- clearing and checking ---------------------------------------------------
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
                if not VectorCache.entry_ok(space, text_sha, dim, data, crc):
                    bad_vec.append((rowid,))
            for rowid, space, qsha, text_sha, data, crc in conn.execute(
                    "SELECT rowid, space, query_sha, text_sha, data, crc FROM scores"):
                n_sco += 1
                if not ScoreCache.entry_ok(space, qsha, text_sha, data, crc):
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

