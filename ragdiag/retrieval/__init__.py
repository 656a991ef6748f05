"""Retrievers behind one protocol: dense, BM25, hybrid (RRF), rerankers; found by name in a registry."""

from .base import QueryBatch, Ranking, Retriever, Unavailable, top_k_desc
from .bm25 import BM25Index, BM25Retriever, lucene_idf, tokenize
from .dense import DenseRetriever, cosine_distances, normalisation_check
from .hybrid import HybridRetriever, ranks_from_orders, rrf_fuse
from .rerank import CrossEncoderScorer, MaxSimScorer, RerankRetriever, maxsim

from .registry import (BuildContext, RetrieverSpec, load_plugins, parse_retrievers, register_retriever,
                       retriever_names, retriever_spec)
from . import builtin  # noqa: E402,F401 - registers dense, bm25, hybrid, the rerankers and the dense variants, first

__all__ = [
    "QueryBatch", "Ranking", "Retriever", "Unavailable", "top_k_desc",
    "BM25Index", "BM25Retriever", "lucene_idf", "tokenize",
    "DenseRetriever", "cosine_distances", "normalisation_check",
    "HybridRetriever", "ranks_from_orders", "rrf_fuse",
    "CrossEncoderScorer", "MaxSimScorer", "RerankRetriever", "maxsim",
    "BuildContext", "RetrieverSpec", "load_plugins", "parse_retrievers", "register_retriever",
    "retriever_names", "retriever_spec",
]
