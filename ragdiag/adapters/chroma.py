"""Chroma (persistent, embedded): ``chromadb.PersistentClient(path)``, one collection.

Hits carry the stored document text and, when the collection's metadata has
them, ``doc``/``start``/``end`` (ragdiag's document id and character offsets);
Chroma's cosine space returns cosine distances, so the abstention gate works.
Needs ``pip install -r requirements-vectordb.txt``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ..evaluation.external import ExternalHit

__all__ = ["ChromaAdapter"]

# Search breadth of Chroma's HNSW graph: far above the k asked, so the graph search is as good as exact here.
EF_SEARCH = 512


def _chromadb():
    try:
        import chromadb
        from chromadb.config import Settings
    except ImportError:
        raise ImportError("the Chroma adapter needs chromadb: pip install -r requirements-vectordb.txt") from None
    return chromadb, Settings


def _client(path: str | Path):
    chromadb, Settings = _chromadb()
    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


class ChromaAdapter:
    """Query an existing Chroma collection with ragdiag's query vectors."""

    distances = True

    def __init__(self, path: str | Path, collection: str = "ragdiag", *, name: str | None = None):
        from ._paths import existing_store

        self.client = _client(existing_store(path, "chroma.sqlite3", "Chroma"))  # reading creates nothing
        try:
            self.collection = self.client.get_collection(collection, embedding_function=None)
        except Exception as exc:  # noqa: BLE001 - chromadb raises its own NotFoundError types
            known = ", ".join(c.name for c in self.client.list_collections()) or "none"
            raise ValueError(f"no Chroma collection {collection!r} at {path} (collections there: {known})") from exc
        self.name = name or f"chroma-{collection}"

    def search(self, vectors: np.ndarray, k: int) -> list[list[ExternalHit]]:
        """The collection's top ``k`` for each query vector, with cosine distances."""
        res = self.collection.query(query_embeddings=np.asarray(vectors, dtype=np.float32), n_results=k,
                                    include=["documents", "metadatas", "distances"])
        out = []
        for docs, metas, dists in zip(res["documents"], res["metadatas"], res["distances"]):
            hits = []
            for text, meta, dist in zip(docs, metas, dists):
                meta = meta or {}
                has = all(isinstance(meta.get(key), (int, str)) for key in ("doc", "start", "end"))
                hits.append(ExternalHit(text or "", meta.get("doc") if has else None,
                                        int(meta["start"]) if has else None, int(meta["end"]) if has else None,
                                        float(dist)))
            out.append(hits)
        return out

    @staticmethod
    def build(path: str | Path, chunks: Sequence, vectors: np.ndarray, collection: str = "ragdiag", *,
              offsets: bool = True, batch: int = 1000) -> None:
        """Write chunks (their quoted text) and vectors into a new cosine collection (to try the adapter)."""
        client = _client(path)
        col = client.create_collection(collection, embedding_function=None,
                                       configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH,
                                                               "ef_construction": EF_SEARCH}})
        vectors = np.asarray(vectors, dtype=np.float32)
        for a in range(0, len(chunks), batch):
            part = chunks[a : a + batch]
            col.add(ids=[c.id for c in part], embeddings=vectors[a : a + batch], documents=[c.content for c in part],
                    metadatas=[{"doc": c.doc_id, "start": c.start, "end": c.end} if offsets else {"chunk": c.id}
                               for c in part])
