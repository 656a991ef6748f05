"""BM25 with Lucene's idf, vectorised over a sparse matrix (all queries at once).

score(q, d) = sum over query tokens t of idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)); tokens are lowercase ``[a-z0-9]+``.

A query token repeated twice counts twice (as in rank_bm25). The per-(term,
document) weights are computed once at indexing; a batch of queries is then
one sparse matrix product.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from .base import QueryBatch, Ranking, top_k_desc

__all__ = ["tokenize", "lucene_idf", "BM25Index", "BM25Retriever"]

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lowercase ``[a-z0-9]+`` tokens.

    >>> tokenize("SGDClassifier's l1_ratio=0.15")
    ['sgdclassifier', 's', 'l1', 'ratio', '0', '15']
    """
    return _TOKEN.findall(text.lower())


def lucene_idf(n_docs: int, doc_freq: np.ndarray) -> np.ndarray:
    """ln(1 + (N - n + 0.5) / (n + 0.5)): always positive, unlike Robertson's idf.

    >>> round(float(lucene_idf(10, np.array([1]))[0]), 6)
    1.99243
    """
    doc_freq = np.asarray(doc_freq, dtype=np.float64)
    return np.log1p((n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


class BM25Index:
    """Sparse BM25 weights of a fixed set of texts (stateful: the index)."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75):
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1, self.b = k1, b
        vocab: dict[str, int] = {}
        rows, cols = [], []
        for i, text in enumerate(texts):
            for tok in tokenize(text):
                rows.append(i)
                cols.append(vocab.setdefault(tok, len(vocab)))
        n = len(texts)
        tf = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, len(vocab)), dtype=np.float64)
        tf.sum_duplicates()
        dl = np.asarray(tf.sum(axis=1)).ravel()
        avgdl = dl.mean() if n and dl.mean() > 0 else 1.0
        df = np.diff(tf.tocsc().indptr)
        self.vocab = vocab
        self.idf = lucene_idf(n, df)
        norm = k1 * (1 - b + b * dl / avgdl)
        w = tf.tocoo()
        data = self.idf[w.col] * w.data * (k1 + 1) / (w.data + norm[w.row])
        # Terms x documents, so a query batch is (queries x terms) @ (terms x documents).
        self.weights = sp.csr_matrix((data, (w.col, w.row)), shape=(len(vocab), n))
        self.n_docs = n

    def query_matrix(self, queries: Sequence[str]) -> sp.csr_matrix:
        rows, cols = [], []
        for i, q in enumerate(queries):
            for tok in tokenize(q):
                j = self.vocab.get(tok)
                if j is not None:
                    rows.append(i)
                    cols.append(j)
        return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(queries), len(self.vocab)))

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        """Dense (queries x documents) BM25 scores.

        Only the weight rows of terms that occur in the batch are touched, and
        the product is (documents x used terms) @ (used terms x queries), a
        sparse-times-dense kernel that writes the dense result once.
        """
        qm = self.query_matrix(queries).tocsc()
        used = np.flatnonzero(np.diff(qm.indptr))
        if used.size == 0:
            return np.zeros((len(queries), self.n_docs))
        counts = qm[:, used].toarray()  # queries x used terms
        return (self.weights[used].T.tocsr() @ counts.T).T


class BM25Retriever:
    name = "bm25"

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75):
        self.index = BM25Index(texts, k1=k1, b=b)

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        scores = self.index.scores(batch.texts)
        order = top_k_desc(scores, depth)
        return [Ranking(o, s[o]) for o, s in zip(order, scores)]
