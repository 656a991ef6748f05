"""BM25 with Lucene's idf, vectorised over a sparse matrix (all queries at once).

score(q, d) = sum over query tokens t of idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)); tokens from :func:`tokenize` (Unicode words,
NFKC-normalised and case-folded; scripts written without spaces between words, Chinese, Japanese, Thai,
Lao, Khmer and Myanmar, as overlapping character bigrams).

A chunk that shares no token with the query scores 0 and is not *retrieved*
(as in Lucene, which never returns it); a query with no token known to the
index retrieves nothing (:meth:`BM25Index.unmatched` says which).

A query token repeated twice counts twice (as in rank_bm25). The per-(term,
document) weights are computed once at indexing; a batch of queries is then
one sparse matrix product.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from .base import QueryBatch, Ranking, top_k_desc
from .search import Search, block_search, block_size

__all__ = ["tokenize", "lucene_idf", "BM25Index", "BM25Retriever"]

_INDEX_BLOCK = 8192  # texts tokenised per step while indexing
_SEARCH_ELEMENTS = 1 << 19  # BM25 scores per block: small enough to stay in cache

# Scripts written without spaces between words: Han, Hiragana, Katakana (and their extensions), and the
# Southeast Asian scripts Thai, Lao, Khmer (and Khmer symbols) and Myanmar (and its extensions A and B). A whole
# unspaced run as one token would be a sentence-long "word" that no query repeats; bigrams match, as for CJK.
_CJK = ("\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"
        "\u0e00-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u19e0-\u19ff\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff")


def _mark_class() -> str:
    """A regex class of every combining mark (categories Mn, Mc, Me), as ranges."""
    ranges, start, prev = [], None, None
    for cp in range(0x300, min(sys.maxunicode, 0xE01EF) + 1):
        if unicodedata.category(chr(cp))[0] == "M":
            if start is None:
                start = cp
            elif cp != prev + 1:
                ranges.append((start, prev))
                start = cp
            prev = cp
    if start is not None:
        ranges.append((start, prev))
    return "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in ranges)


@functools.cache
def _patterns() -> tuple[re.Pattern, re.Pattern]:
    """The token pattern and the CJK test, built on first use: listing the marks reads every code point
    (a third of a second), which a process that never tokenizes (``--help``, the dashboard's start) skips."""
    # A word: a letter or digit (not "_", not CJK), then letters, digits and combining marks (Indic vowel signs...).
    word = f"[^\\W_{_CJK}](?:[^\\W_{_CJK}]|[{_mark_class()}])*"
    return re.compile(f"[{_CJK}]+|{word}"), re.compile(f"[{_CJK}]")


# Greek accents (tonos, dialytika) dropped, as Lucene's GreekLowerCaseFilter does: capitals are written without them.
_GREEK = str.maketrans("άέήίόύώϊϋΐΰ", "αεηιουωιυιυ")


def tokenize(text: str) -> list[str]:
    """Unicode word tokens: NFKC-normalised, case-folded (Greek without accents); runs of CJK, Thai, Lao,
    Khmer or Myanmar characters as character bigrams.

    On ASCII text these are exactly the lowercase ``[a-z0-9]+`` runs.

    >>> tokenize("SGDClassifier's l1_ratio=0.15")
    ['sgdclassifier', 's', 'l1', 'ratio', '0', '15']
    >>> tokenize("Die GRÖSSE der Straße"), tokenize("机器学习"), tokenize("แมวกิน")
    (['die', 'grösse', 'der', 'strasse'], ['机器', '器学', '学习'], ['แม', 'มว', 'วก', 'กิ', 'ิน'])
    """
    token, cjk_run = _patterns()
    out: list[str] = []
    for tok in token.findall(unicodedata.normalize("NFKC", text).casefold().translate(_GREEK)):
        if cjk_run.match(tok):
            out.extend([tok] if len(tok) == 1 else [tok[i:i + 2] for i in range(len(tok) - 1)])
        else:
            out.append(tok)
    return out


def lucene_idf(n_docs: int, doc_freq: np.ndarray) -> np.ndarray:
    """ln(1 + (N - n + 0.5) / (n + 0.5)): always positive, unlike Robertson's idf.

    Parameters
    ----------
    n_docs : int
        Documents in the index, ``N``.
    doc_freq : array_like of int
        Per term, the documents it occurs in, ``n``.

    Returns
    -------
    numpy.ndarray of float64
        The idf per term.

    Examples
    --------
    A term in one document of ten: ln(1 + 9.5 / 1.5) = ln(7.3333) = 1.99243.

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
        n = len(texts)
        # Term frequencies, a block of texts at a time: no Python list of every token of the corpus.
        parts = []
        for start in range(0, n, _INDEX_BLOCK):
            lens, cols = [], []
            for text in texts[start : start + _INDEX_BLOCK]:
                toks = tokenize(text)
                lens.append(len(toks))
                cols.extend([vocab.setdefault(tok, len(vocab)) for tok in toks])
            rows = np.repeat(np.arange(len(lens), dtype=np.int32), lens)
            part = sp.csr_matrix((np.ones(len(cols)), (rows, np.asarray(cols, dtype=np.int32))),
                                 shape=(len(lens), len(vocab)), dtype=np.float64)
            part.sum_duplicates()
            parts.append(part)
        for part in parts:
            part.resize((part.shape[0], len(vocab)))
        tf = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, 0))
        del parts
        dl = np.asarray(tf.sum(axis=1)).ravel()
        avgdl = dl.mean() if n and dl.mean() > 0 else 1.0
        df = np.bincount(tf.indices, minlength=len(vocab))
        self.vocab = vocab
        self.idf = lucene_idf(n, df)
        norm = k1 * (1 - b + b * dl / avgdl)
        # tf -> weights in place, a slice of documents at a time (the formula's order of operations kept).
        for start in range(0, n, _INDEX_BLOCK):
            lo, hi = tf.indptr[start], tf.indptr[min(n, start + _INDEX_BLOCK)]
            row = np.repeat(np.arange(start, min(n, start + _INDEX_BLOCK)), np.diff(tf.indptr[start : start + _INDEX_BLOCK + 1]))
            d = tf.data[lo:hi]
            tf.data[lo:hi] = self.idf[tf.indices[lo:hi]] * d * (k1 + 1) / (d + norm[row])
        # Terms x documents, so a query batch is (queries x terms) @ (terms x documents).
        self.weights = tf.T.tocsr()
        del tf
        self.n_docs = n

    def query_matrix(self, queries: Sequence[str]) -> sp.csr_matrix:
        """(queries x vocabulary) token counts of the queries (tokens unknown to the index dropped)."""
        rows, cols = [], []
        for i, q in enumerate(queries):
            for tok in tokenize(q):
                j = self.vocab.get(tok)
                if j is not None:
                    rows.append(i)
                    cols.append(j)
        return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(queries), len(self.vocab)))

    def unmatched(self, queries: Sequence[str]) -> np.ndarray:
        """Per query: True when none of its tokens occurs in the index (BM25 can retrieve nothing)."""
        return np.array([not any(t in self.vocab for t in tokenize(q)) for q in queries], dtype=bool)

    def scorer(self, queries: Sequence[str]):
        """``cols -> (queries x len(cols))`` BM25 scores of a slice or array of document positions.

        Only the weight rows of terms that occur in the batch are touched: they
        are turned once into (documents x used terms), and a block of documents
        is a sparse-times-dense product of its rows with the queries' term counts
        (used terms x queries). Row by row this is the product over all
        documents, so the scores are bit for bit those of ``(weights.T @ counts).T``.
        (A sparse-times-sparse product was measured 4x slower at 91,800 chunks.)
        """
        nq = len(queries)
        qm = self.query_matrix(queries).tocsc()
        used = np.flatnonzero(np.diff(qm.indptr))
        if used.size == 0:
            return lambda cols: np.zeros((nq, len(range(self.n_docs)[cols]) if isinstance(cols, slice) else len(cols)))
        counts_t = qm[:, used].toarray().T  # used terms x queries
        by_doc = self.weights[used].T.tocsr()  # documents x used terms
        return lambda cols: (by_doc[cols] @ counts_t).T

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        """Dense (queries x documents) BM25 scores (all documents: for small indexes and tests).

        Parameters
        ----------
        queries : sequence of str
            The query texts, tokenized like the documents.

        Returns
        -------
        numpy.ndarray of float64
            ``(len(queries), n_docs)``; 0 where a document shares no token with the query.

        Examples
        --------
        Three texts of equal length make the length norm ``k1`` and, with ``tf = 1``,
        each score is the token's idf: ``ln(1 + 2.5/1.5) = ln(8/3) = 0.9808`` for
        "cherry" (in one text of three), ``ln(1 + 1.5/2.5) = ln 1.6 = 0.4700`` for "apple" (in two).

        >>> index = BM25Index(["apple pie", "apple tart", "cherry tart"])
        >>> index.scores(["cherry", "apple"]).round(4).tolist()
        [[0.0, 0.0, 0.9808], [0.47, 0.47, 0.0]]
        """
        return self.scorer(queries)(slice(0, self.n_docs))


class BM25Retriever:
    """The ``bm25`` retriever: a :class:`BM25Index` over the chunk texts; a score of 0 is not retrieved."""

    name = "bm25"
    zero_is_unmatched = True  # a score of 0 means "shares no token": not retrieved

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75):
        self.index = BM25Index(texts, k1=k1, b=b)

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        """Per query, chunk positions by descending score (the top ``depth``; all when None)."""
        scores = self.index.scores(batch.texts)
        order = top_k_desc(scores, depth)
        return [Ranking(o, s[o]) for o, s in zip(order, scores)]

    @property
    def n_chunks(self) -> int:
        """Chunks in the index."""
        return self.index.n_docs

    def scorer(self, batch: QueryBatch):
        """The batch's block scorer (see :meth:`BM25Index.scorer`)."""
        return self.index.scorer(batch.texts)

    def bounded_search(self, batch: QueryBatch, *, depth: int, targets=None, block: int | None = None) -> Search:
        """Top ``depth`` and the targets' rank by blocks of documents: no (queries x documents) array."""
        n = self.index.n_docs
        return block_search(self.scorer(batch), n, len(batch), depth, targets,
                            block=block or block_size(len(batch), n, _SEARCH_ELEMENTS))
