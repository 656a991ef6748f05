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

Modules (one job each; every public name is re-exported here)
-------------------------------------------------------------
- :mod:`~ragdiag.index.store.keys`: content keys, payload spaces, checksums, the cache folder.
- :mod:`~ragdiag.index.store.stamps`: :class:`IndexStamp` and the one builder of stamps.
- :mod:`~ragdiag.index.store.staleness`: :class:`CurrentState`, judging indexes, the status table.
- :mod:`~ragdiag.index.store.engine`: the SQLite engine (WAL, transactions, quarantine of corrupt files).
- :mod:`~ragdiag.index.store.caches`: one cache per payload kind (vectors, pair scores) with ``get`` / ``put``.
- :mod:`~ragdiag.index.store.catalogue`: the catalogue of indexes; ``status``, ``clear``, ``verify``.
- :mod:`~ragdiag.index.store.glue`: the stamps a run would build now, and recording an evaluation.

Example
-------
>>> import tempfile
>>> import numpy as np
>>> from ragdiag.index.encoder import EncoderStamp
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

# _chunking_label stays importable from here (``index status`` labels its rows with it).
from .caches import CacheMethods, EmbedResult, PayloadCache, ScoreCache, ScoreResult, VectorCache
from .catalogue import CatalogueMethods, ClearResult, VerifyResult
from .engine import Engine
from .glue import current_stamps, record_evaluation
from .keys import CACHE_ENV, DB_NAME, payload_space, resolve_root, text_sha256
from .staleness import CurrentState, IndexStatus, _chunking_label, format_status_table
from .stamps import IndexStamp, corpus_extractors, encoder_space, evaluation_stamps, index_stamp, run_stamp

__all__ = [
    "CACHE_ENV",
    "DB_NAME",
    "ClearResult",
    "CurrentState",
    "EmbedResult",
    "IndexStamp",
    "IndexStatus",
    "PayloadCache",
    "ScoreCache",
    "ScoreResult",
    "Store",
    "VectorCache",
    "VerifyResult",
    "encoder_space",
    "corpus_extractors",
    "current_stamps",
    "evaluation_stamps",
    "format_status_table",
    "index_stamp",
    "payload_space",
    "record_evaluation",
    "resolve_root",
    "run_stamp",
    "text_sha256",
]


class Store(CatalogueMethods, CacheMethods, Engine):
    """The cache folder's SQLite store (stateful: holds one connection, thread-safe).

    The :class:`Engine` (connection, transactions, corruption handling) with
    the caches (:meth:`embed`, :meth:`scores`, :meth:`vector_cache`,
    :meth:`score_cache`) and the catalogue (:meth:`record_index`,
    :meth:`status`, :meth:`clear`, :meth:`verify`). ``Store(root, check=True,
    timeout=60.0)`` takes the :class:`Engine`'s parameters.
    """
