"""Evaluate the index you ship, in place: adapters to vector databases behind one small protocol.

An adapter answers a batch of query vectors with each query's hits (text,
and where it has them the document and offsets). The hits are mapped back to
the corpus and scored exactly like an external run (:mod:`ragdiag.evaluation.external`);
hits that map to no place of the corpus are reported, never counted silently.
Chroma and Qdrant adapters need the optional packages of
``requirements-vectordb.txt``; another store is one small class
(see :class:`VectorStoreAdapter`).
"""

from .base import (
    HitMapping,
    StoreEvaluation,
    VectorStoreAdapter,
    evaluate_store,
    map_hits,
    query_vectors,
    store_run,
)

__all__ = ["VectorStoreAdapter", "HitMapping", "StoreEvaluation", "evaluate_store", "map_hits", "query_vectors",
           "store_run", "ChromaAdapter", "QdrantAdapter"]


def __getattr__(name):  # the database packages are imported only when their adapter is asked for
    if name == "ChromaAdapter":
        from .chroma import ChromaAdapter

        return ChromaAdapter
    if name == "QdrantAdapter":
        from .qdrant import QdrantAdapter

        return QdrantAdapter
    raise AttributeError(name)
