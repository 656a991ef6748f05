"""Keys, spaces and checksums of the store, and where its folder is.

Every entry is keyed by content (:func:`text_sha256`) inside a *space*: the
sha256 of a payload kind and an identity (:func:`payload_space`), so entries of
two models or two scorers can never be served for each other. Every entry
carries a CRC-32 of its key and bytes, checked on every read.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from datetime import datetime, timezone
from typing import Any, Iterator, Sequence

from ...core.cache_dir import CACHE_ENV, DEFAULT_DIRNAME, resolve_root  # re-exported: the store's names

__all__ = ["CACHE_ENV", "DB_NAME", "DEFAULT_DIRNAME", "payload_space", "resolve_root", "text_sha256"]

DB_NAME = "ragdiag.sqlite"

_IN_CHUNK = 500  # keys per ``IN (...)`` query, far below SQLite's variable limit


def text_sha256(text: str) -> str:
    """Hex sha256 of the UTF-8 text: the content key of a chunk or query.

    >>> text_sha256("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def payload_space(kind: str, identity: str) -> str:
    """The space of one payload kind (``"embedding"``, ``"scores"``...) under one identity: a sha256.

    >>> payload_space("scores", "ce:m:0123") == payload_space("embedding", "ce:m:0123")
    False
    """
    return hashlib.sha256(f"{kind}\0{identity}".encode()).hexdigest()


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
