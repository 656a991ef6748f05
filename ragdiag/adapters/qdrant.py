"""Qdrant: local mode (``path``, embedded, exact search) or a server (``url``).

Points carry a payload with the chunk's ``text`` and, when stored, ``doc``/
``start``/``end``. With a collection in the cosine distance Qdrant's score is
the cosine similarity; the adapter reports ``1 - score`` as the distance.
Needs ``pip install -r requirements-vectordb.txt``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ..evaluation.external import ExternalHit

__all__ = ["QdrantAdapter"]


def _client(path: str | Path | None = None, url: str | None = None, api_key: str | None = None,
            timeout: int | None = None):
    try:
        from qdrant_client import QdrantClient
    except ImportError:
        raise ImportError("the Qdrant adapter needs qdrant-client: pip install -r requirements-vectordb.txt") from None
    if (path is None) == (url is None):
        raise ValueError("give Qdrant either a local path (embedded) or a server url, not both")
    if url:
        return QdrantClient(url=url, api_key=api_key, check_compatibility=False,
                            **({"timeout": timeout} if timeout else {}))
    return QdrantClient(path=str(path))


class QdrantAdapter:
    """Query an existing Qdrant collection (local folder or server) with ragdiag's query vectors."""

    def __init__(self, collection: str = "ragdiag", *, path: str | Path | None = None, url: str | None = None,
                 api_key: str | None = None, text_key: str = "text", name: str | None = None,
                 timeout: int = 10):
        from ._paths import existing_store

        if (path is None) == (url is None):
            raise ValueError("give Qdrant either a local path (embedded) or a server url, not both")
        if path is not None:
            path = existing_store(path, "meta.json", "Qdrant")  # reading creates nothing
        try:
            self.client = _client(path, url, api_key, timeout=timeout)
            exists = self.client.collection_exists(collection)
        except ImportError:
            raise
        except Exception as exc:  # noqa: BLE001 - httpx/grpc/qdrant errors of an unreachable or odd server
            where = f"the Qdrant server at {url!r}" if url else f"the Qdrant folder {str(path)!r}"
            raise ValueError(f"cannot read {where}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                             .rstrip(": ")) from None
        if not exists:
            known = ", ".join(c.name for c in self.client.get_collections().collections) or "none"
            raise ValueError(f"no Qdrant collection {collection!r} at {url or path} (collections there: {known})")
        params = self.client.get_collection(collection).config.params.vectors
        metric = str(getattr(params, "distance", "")).lower()
        self.distances = "cosine" in metric  # scores of other metrics are not cosine distances
        self.collection, self.text_key = collection, text_key
        self.name = name or f"qdrant-{collection}"

    def search(self, vectors: np.ndarray, k: int) -> list[list[ExternalHit]]:
        """The collection's top ``k`` for each query vector, one request per query."""
        out = []
        for v in np.asarray(vectors, dtype=np.float32):
            points = self.client.query_points(self.collection, query=v.tolist(), limit=k, with_payload=True).points
            hits = []
            for p in points:
                pl = p.payload or {}
                has = all(key in pl for key in ("doc", "start", "end"))
                hits.append(ExternalHit(str(pl.get(self.text_key, "")), pl["doc"] if has else None,
                                        int(pl["start"]) if has else None, int(pl["end"]) if has else None,
                                        1.0 - float(p.score) if self.distances else float(p.score)))
            out.append(hits)
        return out

    def close(self) -> None:
        """Close the Qdrant client."""
        self.client.close()

    @staticmethod
    def build(chunks: Sequence, vectors: np.ndarray, collection: str = "ragdiag", *, path: str | Path | None = None,
              url: str | None = None, offsets: bool = True, batch: int = 500) -> None:
        """Write chunks and vectors into a new cosine collection (to try the adapter)."""
        from qdrant_client import models

        client = _client(path, url)
        vectors = np.asarray(vectors, dtype=np.float32)
        client.create_collection(collection, vectors_config=models.VectorParams(size=vectors.shape[1],
                                                                                distance=models.Distance.COSINE))
        for a in range(0, len(chunks), batch):
            points = [models.PointStruct(id=a + i, vector=vectors[a + i].tolist(),
                                         payload={"text": c.content, **({"doc": c.doc_id, "start": c.start,
                                                                         "end": c.end} if offsets else {})})
                      for i, c in enumerate(chunks[a : a + batch])]
            client.upsert(collection, points=points)
        client.close()
