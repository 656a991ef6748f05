"""BM25 with Lucene's idf, vectorised over a sparse matrix (all queries at once).

score(q, d) = sum over query tokens t of idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)); tokens from :func:`tokenize` (Unicode words,
NFKC-normalised and case-folded; scripts written without spaces between words, Chinese, Japanese, Thai,
Lao, Khmer and Myanmar, as overlapping character bigrams).

A chunk that shares no token with the query scores 0 and is not *retrieved*
(as in Lucene, which never returns it); a query with no token known to the
index retrieves nothing (:meth:`BM25Index.unmatched` says which).

A query token repeated twice counts twice (as in rank_bm25). The per-(term,
document) weights are computed once at indexing.

Indexing tokenises each text once (:func:`tokenize_corpus`: token ids in one flat
array with row offsets) and counts with scipy's compiled CSR kernels, with no
per-document Python loop. A query's scores are its terms' posting lists added
into one row, term by term in ascending term order: the same
additions, in the same order, as the sparse product ``(weights.T @ counts).T``,
so the scores are bit for bit those of the block scorer. Its top ``k`` is
selected among the chunks it touched.

When numba is importable, a large index's search runs compiled
(:mod:`ragdiag.retrieval.bm25_compiled`: the same additions in the same order, the
top ``k`` fused with the scoring, all the batch's queries in one call): the same
scores bit for bit and the same top ``k``. :func:`scorer_choice` says when;
``RAGDIAG_NUMBA=0`` turns it off, ``RAGDIAG_NUMBA=1`` uses it at every size.
"""

from __future__ import annotations

import functools
import itertools
import importlib.util
import os
import re
import sys
import unicodedata
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from .base import QueryBatch, Ranking, top_k_desc
from .search import Search, block_search

__all__ = ["tokenize", "tokenize_corpus", "stored_tokens", "Tokens", "lucene_idf", "BM25Index", "BM25Retriever",
           "scorer_choice", "NUMBA_ENV", "NUMBA_MIN_DOCS"]

_INDEX_BLOCK = 1 << 16  # documents whose weights are computed per step while indexing
_DENSE_MIN_DOCS = 4096  # below this, every posting list stays sparse (a dense row gains nothing)

#: The environment variable that picks the BM25 search's scorer: ``0`` numpy, ``1`` compiled (numba) at
#: every size, unset or ``auto``: compiled from :data:`NUMBA_MIN_DOCS` chunks when numba is importable.
NUMBA_ENV = "RAGDIAG_NUMBA"
#: Chunks from which ``auto`` compiles: below, a query costs well under a millisecond in numpy, and
#: importing numba and loading the cached machine code (about 0.5 s of CPU) would cost a small run more
#: than it saves (the bundled corpus, a few thousand chunks, never imports numba).
NUMBA_MIN_DOCS = 50_000

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


_ASCII_WORD = re.compile("[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Unicode word tokens: NFKC-normalised, case-folded (Greek without accents); runs of CJK, Thai, Lao,
    Khmer or Myanmar characters as character bigrams.

    On ASCII text these are exactly the lowercase ``[a-z0-9]+`` runs.

    >>> tokenize("SGDClassifier's l1_ratio=0.15")
    ['sgdclassifier', 's', 'l1', 'ratio', '0', '15']
    >>> tokenize("Die GRÖSSE der Straße"), tokenize("机器学习"), tokenize("แมวกิน")
    (['die', 'grösse', 'der', 'strasse'], ['机器', '器学', '学习'], ['แม', 'มว', 'วก', 'กิ', 'ิน'])
    """
    if text.isascii():  # NFKC and the Greek table leave ASCII alone; casefold is lower; words are [a-z0-9] runs
        return _ASCII_WORD.findall(text.lower())
    return _tokenize_unicode(text)


def _tokenize_unicode(text: str) -> list[str]:
    """:func:`tokenize` for any text (the ASCII shortcut aside)."""
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


@dataclass(frozen=True, eq=False)
class Tokens:
    """A tokenised corpus: text ``i``'s token ids are ``ids[indptr[i]:indptr[i + 1]]``, in reading order.

    ``vocab`` maps a token to its id (ids in order of first appearance).
    """

    ids: np.ndarray  # int32, every token of every text
    indptr: np.ndarray  # int64, len(texts) + 1 offsets into ids
    vocab: dict[str, int]

    def __len__(self) -> int:
        return len(self.indptr) - 1


def tokenize_corpus(texts: Sequence[str]) -> Tokens:
    """Tokenise every text once (:func:`tokenize`) into one flat array of token ids.

    The same tokens, ids and vocabulary as :func:`tokenize` text by text
    (:func:`_tokenize_corpus_per_text`, the reference the tests hold it to), without a
    Python object per token where the texts are ASCII: a run of ASCII texts is
    lower-cased and its separators blanked in one byte translation, a token starts
    where a letter or digit follows anything else (counted per text in numpy), the
    letters and digits are packed into one buffer that Arrow reads as the tokens
    (``LargeStringArray.from_buffers``), and Arrow's hash table gives each distinct token
    an id in order of first appearance (``dictionary_encode``). Other texts are
    tokenised one by one (and runs of fewer than :data:`_MIN_RUN` ASCII texts). Blocks of
    :data:`_BLOCK` texts bound the memory.

    >>> t = tokenize_corpus(["Apple pie", "apple TART tart"])
    >>> t.ids.tolist(), t.indptr.tolist(), t.vocab
    ([0, 1, 0, 2, 2], [0, 2, 5], {'apple': 0, 'pie': 1, 'tart': 2})
    """
    vocab: dict[str, int] = {}
    texts = texts if isinstance(texts, list) else list(texts)
    lens = np.zeros(len(texts), dtype=np.int64)
    parts = []
    get = vocab.setdefault
    for start in range(0, len(texts), _BLOCK):
        i = start
        for ascii_run, group in itertools.groupby(texts[start : start + _BLOCK], key=str.isascii):
            run = list(group)
            if ascii_run and len(run) >= _MIN_RUN:
                local, words = _ascii_tokens(run, lens[i : i + len(run)])
                lut = np.fromiter((get(w, len(vocab)) for w in words), dtype=np.int32, count=len(words))
                parts.append(lut[local])
            else:
                flat: list[str] = []
                for j, text in enumerate(run, i):
                    toks = tokenize(text)
                    lens[j] = len(toks)
                    flat.extend(toks)
                parts.append(np.fromiter((get(t, len(vocab)) for t in flat), dtype=np.int32, count=len(flat)))
            i += len(run)
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    return Tokens(np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32), indptr, vocab)


#: ASCII texts in a row from which they are split at once (a shorter run costs more in Arrow's set-up than it saves)
_MIN_RUN = 32

#: texts tokenised at once (Arrow's token array and the id table of one block are held, never the corpus's)
_BLOCK = 65536

#: byte -> itself lower-cased when an ASCII letter or digit, else a space (the separators ``[a-z0-9]+`` skips)
_WORD_TABLE = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 or 48 <= c <= 57 else 32 for c in range(256))


def _ascii_tokens(run: list[str], lens: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """ASCII texts' tokens: ``(ids, words)``, ``words[ids[t]]`` the ``t``-th token in reading order (ids by
    first appearance), each text's count written into ``lens``."""
    import pyarrow as pa

    # A space before the first text and after each, so no token runs on from one text into the next; the
    # letter-or-digit mask then changes at each token's start and at the byte after its end, alternately.
    text = b" " + " ".join(run).encode("ascii").translate(_WORD_TABLE) + b" "
    word = np.frombuffer(text, dtype=np.uint8) != 32
    edges = np.flatnonzero(word[1:] != word[:-1]) + 1
    first, last = edges[0::2], edges[1::2]
    ends = np.cumsum(np.fromiter(map(len, run), dtype=np.int64, count=len(run)) + 1)  # each text's space after
    lens[:] = np.diff(np.searchsorted(first, ends), prepend=0)
    offsets = np.zeros(first.size + 1, dtype=np.int64)
    np.cumsum(last - first, out=offsets[1:])
    tokens = pa.LargeStringArray.from_buffers(first.size, pa.py_buffer(offsets), pa.py_buffer(text.replace(b" ", b"")))
    encoded = tokens.dictionary_encode()
    return encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary.to_pylist()


def _tokenize_corpus_per_text(texts: Sequence[str]) -> Tokens:
    """:func:`tokenize_corpus` the plain way, :func:`tokenize` text by text: the reference it is tested
    (and benchmarked) against."""
    vocab: dict[str, int] = {}
    lens = np.zeros(len(texts), dtype=np.int64)
    flat: list[str] = []
    for i, text in enumerate(texts):
        toks = tokenize(text)
        lens[i] = len(toks)
        flat.extend(toks)
    get = vocab.setdefault
    ids = np.fromiter((get(t, len(vocab)) for t in flat), dtype=np.int32, count=len(flat))
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    return Tokens(ids, indptr, vocab)


TOKENIZER_VERSION = "bm25-tokens-1"  # part of the stored tokens' key: change it whenever tokenize() changes


def stored_tokens(texts: Sequence[str], memo=None) -> Tokens:
    """:func:`tokenize_corpus` of ``texts``, read from ``memo`` when it holds them (then written there).

    ``memo`` is a :class:`~ragdiag.index.store.memo.Memo` (or None: tokenise): the tokens are
    keyed by the sha256 of every text and :data:`TOKENIZER_VERSION`, so a warm run never re-tokenises.
    """
    if memo is None:
        return tokenize_corpus(texts)
    from ..index.store.memo import content_key

    key = content_key(TOKENIZER_VERSION, texts)
    got = memo.get("bm25-tokens", key)
    if got is not None:
        words = bytes(got["vocab"]).decode("utf-8").split("\n") if got["vocab"].size else []
        if len(got["indptr"]) == len(texts) + 1:
            return Tokens(got["ids"], got["indptr"], {w: i for i, w in enumerate(words)})
    tokens = tokenize_corpus(texts)
    vocab = "\n".join(tokens.vocab).encode("utf-8")  # a token never holds a newline (whitespace splits words)
    memo.put("bm25-tokens", key, {"ids": tokens.ids, "indptr": tokens.indptr,
                                  "vocab": np.frombuffer(vocab, dtype=np.uint8)})
    return tokens


def _top(scores: np.ndarray, depth: int) -> np.ndarray:
    """The first ``depth`` positions of the stable descending sort of one row of scores >= 0.

    A lower bound of the ``depth``-th best score comes from a strided sample of the
    row (the sample's ``depth``-th best can only be lower); one comparison then leaves
    the few candidates, sorted by (score desc, position). When fewer than ``depth``
    chunks score above 0, the zeros follow in position order.

    >>> _top(np.array([0.0, 2.0, 0.0, 2.0, 1.0]), 4).tolist()
    [1, 3, 4, 0]
    """
    n = scores.size
    depth = min(depth, n)
    if depth == 0:
        return np.zeros(0, dtype=np.int64)
    sample = scores[:: max(1, n // (64 * depth))]
    bound = np.partition(sample, sample.size - depth)[sample.size - depth] if sample.size >= depth else 0.0
    cand = np.flatnonzero(scores >= bound) if bound > 0 else np.flatnonzero(scores)
    if cand.size > depth:
        s = scores[cand]
        kth = np.partition(s, cand.size - depth)[cand.size - depth]
        cand = cand[s >= kth]  # ties at the cut kept, then cut by position in the sort below
    order = cand[np.lexsort((cand, -scores[cand]))][:depth]
    if order.size < depth:  # fewer than depth chunks share a token: the zeros follow, lowest positions first
        zeros = np.flatnonzero(scores[:depth + order.size] == 0)[: depth - order.size]
        order = np.concatenate([order, zeros])
    return order


def _rank_of(scores: np.ndarray, targets: np.ndarray) -> tuple[int, float]:
    """1-based rank in the stable descending sort of the best of ``targets``, and its score."""
    s = scores[targets]
    best = targets[np.lexsort((targets, -s))[0]]
    v = scores[best]
    return int((scores > v).sum() + (scores[:best] == v).sum()) + 1, float(v)


def scorer_choice(n_docs: int, setting: str | None = None) -> str:
    """``"numba"`` or ``"numpy"``: the scorer a BM25 search of ``n_docs`` chunks runs with.

    ``setting`` is ``"auto"``, ``"numba"``/``"1"`` or ``"numpy"``/``"0"``; None reads
    :data:`NUMBA_ENV` (unset: ``auto``). ``auto`` compiles when numba is importable and the
    index has at least :data:`NUMBA_MIN_DOCS` chunks; ``numba`` whenever it is importable.
    Both scorers give the same scores bit for bit and the same top ``k``.

    >>> scorer_choice(10**6, "0"), scorer_choice(918, "auto")
    ('numpy', 'numpy')
    """
    raw = os.environ.get(NUMBA_ENV, "auto") if setting is None else setting
    value = {"1": "numba", "0": "numpy", "": "auto"}.get(raw.strip().lower(), raw.strip().lower())
    if value not in ("auto", "numba", "numpy"):
        where = f"{NUMBA_ENV}={raw!r}" if setting is None else f"scorer={raw!r}"
        raise ValueError(f"{where}: use 0 (numpy), 1 (numba) or auto")
    if value == "numpy" or (value == "auto" and n_docs < NUMBA_MIN_DOCS):
        return "numpy"
    return "numba" if _numba_importable() else "numpy"


@functools.cache
def _numba_importable() -> bool:
    """Whether numba is installed (looked up, not imported)."""
    return importlib.util.find_spec("numba") is not None


def _compiled():
    """The compiled search, or None when numba fails to import (then the numpy path runs)."""
    try:
        from . import bm25_compiled
    except ImportError:
        return None
    return bm25_compiled.search_batch


class BM25Index:
    """Sparse BM25 weights of a fixed set of texts (stateful: the index).

    ``texts`` may be given already tokenised (:class:`Tokens`, from :func:`tokenize_corpus`).
    """

    def __init__(self, texts: Sequence[str] | Tokens, *, k1: float = 1.2, b: float = 0.75):
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1, self.b = k1, b
        tokens = texts if isinstance(texts, Tokens) else tokenize_corpus(texts)
        vocab, n = tokens.vocab, len(tokens)
        # Term frequencies: one CSR row per text straight from the flat ids; sum_duplicates sorts
        # each row's terms and adds the repeats (compiled, no Python loop per document).
        # (copies: sum_duplicates works in place, and the tokens may index another time)
        tf = sp.csr_matrix((np.ones(len(tokens.ids)), tokens.ids.copy(), tokens.indptr.copy()), shape=(n, len(vocab)))
        tf.sum_duplicates()
        dl = np.diff(tokens.indptr).astype(np.float64)
        avgdl = dl.mean() if n and dl.mean() > 0 else 1.0
        df = np.bincount(tf.indices, minlength=len(vocab))
        self.vocab = vocab
        self.idf = lucene_idf(n, df)
        norm = k1 * (1 - b + b * dl / avgdl)
        # tf -> weights in place, a slice of documents at a time (the formula's order of operations kept).
        for start in range(0, n, _INDEX_BLOCK):
            stop = min(n, start + _INDEX_BLOCK)
            lo, hi = tf.indptr[start], tf.indptr[stop]
            row = np.repeat(np.arange(start, stop), np.diff(tf.indptr[start : stop + 1]))
            d = tf.data[lo:hi]
            tf.data[lo:hi] = self.idf[tf.indices[lo:hi]] * d * (k1 + 1) / (d + norm[row])
        # Terms x documents: a term's posting list (documents ascending) is one row.
        self.weights = tf.T.tocsr()
        del tf
        self.n_docs = n
        # Terms in a third of the documents or more also as dense rows: adding one is a contiguous vector
        # add (0 where the term is absent: x + 0.0 == x, so the sums stay bit for bit), at most twice the
        # memory of its posting list.
        self.scorer_used: str | None = None  # "numba" or "numpy": what the last search ran with
        frequent = np.flatnonzero(df * 3 >= n) if n >= _DENSE_MIN_DOCS else np.zeros(0, dtype=np.int64)
        self._dense_row = {int(t): i for i, t in enumerate(frequent)}
        self._dense = self.weights[frequent].toarray() if frequent.size else np.zeros((0, n))

    def query_terms(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """A query's known term ids (ascending) and their counts."""
        ids = [j for j in map(self.vocab.get, tokenize(query)) if j is not None]
        terms, counts = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
        return terms, counts.astype(np.float64)

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

    def query_scores(self, query: str) -> np.ndarray:
        """One query's BM25 score of every document, float64 ``(n_docs,)``.

        Each term's posting list, times its count in the query, is added into the
        row, terms in ascending id order: per document the same products added in
        the same order as the CSR product of :meth:`scorer`, so equal bit for bit.
        """
        terms, counts = self.query_terms(query)
        w, out = self.weights, np.zeros(self.n_docs)
        for t, c in zip(terms.tolist(), counts.tolist()):
            d = self._dense_row.get(t)
            if d is not None:
                out += self._dense[d] if c == 1 else self._dense[d] * c
            else:
                a, b = w.indptr[t], w.indptr[t + 1]
                out[w.indices[a:b]] += w.data[a:b] if c == 1 else w.data[a:b] * c
        return out

    def scorer(self, queries: Sequence[str]):
        """``cols -> (queries x len(cols))`` BM25 scores of a slice or array of document positions.

        Only the weight rows of terms that occur in the batch are touched: they
        are turned once into (documents x used terms), and a block of documents
        is a sparse-times-dense product of its rows with the queries' term counts
        (used terms x queries). Row by row this is the product over all
        documents, so the scores are bit for bit those of ``(weights.T @ counts).T``.
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
        if not len(queries):
            return np.zeros((0, self.n_docs))
        return np.stack([self.query_scores(q) for q in queries])

    def search(self, queries: Sequence[str], *, depth: int, targets: Sequence[np.ndarray] | None = None,
               scorer: str | None = None) -> Search:
        """Per query: the first ``depth`` of the stable descending sort, and the best target's rank.

        One query at a time: its scores (:meth:`query_scores`, one float64 row of
        the index's length), its top among the chunks it touched, and its target
        rank counted on that row. Exactly :func:`~ragdiag.retrieval.search.block_search`'s
        result on the same scores. ``scorer`` (``auto``, ``numba``, ``numpy``; None: the
        environment's, see :func:`scorer_choice`) may run the same search compiled, all
        queries in one call: the same result. :attr:`scorer_used` then says which ran.
        """
        nq, n = len(queries), self.n_docs
        depth = min(depth, n)
        targets = list(targets) if targets is not None else [np.zeros(0, dtype=np.int64)] * nq
        if len(targets) != nq:
            raise ValueError(f"targets: one array of chunk positions per query ({nq}), got {len(targets)}")
        targets = [np.asarray(t, dtype=np.int64).ravel() for t in targets]
        for t in targets:
            if t.size and (t.min() < 0 or t.max() >= n):
                raise ValueError(f"target positions must be in [0, {n})")
        compiled = _compiled() if depth > 0 and nq and scorer_choice(n, scorer) == "numba" else None
        self.scorer_used = "numba" if compiled is not None else "numpy"
        if compiled is not None:
            return self._search_compiled(compiled, queries, depth, targets)
        order = np.zeros((nq, depth), dtype=np.int64)
        top = np.zeros((nq, depth))
        rank = np.zeros(nq, dtype=np.int64)
        at = np.full(nq, np.nan)
        for i, q in enumerate(queries):
            s = self.query_scores(q)
            order[i] = _top(s, depth)
            top[i] = s[order[i]]
            if targets[i].size:
                rank[i], at[i] = _rank_of(s, targets[i])
        return Search(order, top, rank, at)

    def _search_compiled(self, compiled, queries: Sequence[str], depth: int, targets: list[np.ndarray]) -> Search:
        """:meth:`search` by :func:`ragdiag.retrieval.bm25_compiled.search_batch` (targets already checked)."""
        nq, get = len(queries), self.vocab.get
        ids = [[j for j in map(get, tokenize(q)) if j is not None] for q in queries]
        q_ptr = np.zeros(nq + 1, dtype=np.int64)
        np.cumsum([len(x) for x in ids], out=q_ptr[1:])
        q_ids = np.fromiter((j for x in ids for j in x), dtype=np.int64, count=int(q_ptr[-1]))
        t_ptr = np.zeros(nq + 1, dtype=np.int64)
        np.cumsum([t.size for t in targets], out=t_ptr[1:])
        t_pos = np.concatenate(targets) if nq else np.zeros(0, dtype=np.int64)
        order = np.zeros((nq, depth), dtype=np.int64)
        top = np.zeros((nq, depth))
        rank = np.zeros(nq, dtype=np.int64)
        at = np.full(nq, np.nan)
        w = self.weights
        dense_of = np.full(len(self.vocab), -1, dtype=np.int64)
        dense_of[list(self._dense_row)] = list(self._dense_row.values())
        compiled(w.indptr, w.indices, w.data, self._dense, dense_of, self.n_docs, q_ids, q_ptr, depth, t_pos, t_ptr,
                 order, top, rank, at)
        return Search(order, top, rank, at)


class BM25Retriever:
    """The ``bm25`` retriever: a :class:`BM25Index` over the chunk texts; a score of 0 is not retrieved."""

    name = "bm25"
    zero_is_unmatched = True  # a score of 0 means "shares no token": not retrieved

    def __init__(self, texts: Sequence[str] | Tokens, *, k1: float = 1.2, b: float = 0.75, scorer: str | None = None):
        if scorer is not None:
            scorer_choice(0, scorer)  # a wrong name fails here, not at the first search
        self.index = BM25Index(texts, k1=k1, b=b)
        self.scorer_setting = scorer  # auto, numba, numpy; None: the environment's (RAGDIAG_NUMBA)

    def stamp(self) -> dict:
        """What the run records: the BM25 parameters and the scorer its search ran with (or would run with)."""
        used = self.index.scorer_used or scorer_choice(self.index.n_docs, self.scorer_setting)
        return {"k1": self.index.k1, "b": self.index.b, "idf": "lucene", "scorer": used}

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

    def query_scores(self, batch: QueryBatch) -> Iterator[np.ndarray]:
        """Each query's score of every chunk, one row at a time (see :meth:`BM25Index.query_scores`)."""
        return (self.index.query_scores(q) for q in batch.texts)

    def bounded_search(self, batch: QueryBatch, *, depth: int, targets=None, block: int | None = None) -> Search:
        """Top ``depth`` and the targets' rank, a query at a time: one row of scores held, never (queries x chunks).

        ``block`` (chunks per block) selects the block search over :meth:`scorer` instead: the same result.
        """
        n = self.index.n_docs
        if block is not None:
            self.index.scorer_used = "numpy"
            return block_search(self.scorer(batch), n, len(batch), depth, targets, block=block)
        return self.index.search(batch.texts, depth=depth, targets=targets, scorer=self.scorer_setting)
