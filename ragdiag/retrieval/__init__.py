"""Retrievers behind one protocol: dense, BM25, hybrid (RRF), rerankers."""

from .base import QueryBatch, Ranking, Retriever, Unavailable, top_k_desc
from .bm25 import BM25Index, BM25Retriever, lucene_idf, tokenize
from .dense import DenseRetriever, cosine_distances, normalisation_check
from .hybrid import HybridRetriever, ranks_from_orders, rrf_fuse
from .rerank import CrossEncoderScorer, MaxSimScorer, RerankRetriever, maxsim

RETRIEVERS = ("dense", "bm25", "hybrid", "rerank-maxsim", "rerank-ce")

__all__ = [
    "QueryBatch", "Ranking", "Retriever", "Unavailable", "top_k_desc",
    "BM25Index", "BM25Retriever", "lucene_idf", "tokenize",
    "DenseRetriever", "cosine_distances", "normalisation_check",
    "HybridRetriever", "ranks_from_orders", "rrf_fuse",
    "CrossEncoderScorer", "MaxSimScorer", "RerankRetriever", "maxsim",
    "RETRIEVERS",
]
