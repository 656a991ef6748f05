"""The compiled BM25 search (numba): scores and top ``k`` of a batch of queries in one call, bit for bit the numpy path's.

Imported only when a BM25 search runs with the compiled scorer (:func:`ragdiag.retrieval.bm25.scorer_choice`):
``import ragdiag`` and every run that never searches a large BM25 index stay without numba.

Per query the loop does what :meth:`~ragdiag.retrieval.bm25.BM25Index.query_scores` does, in the same
order: each known term (ascending id, a repeated term once with its count) adds its posting list, times the
count when above 1, into one float64 row. Every document receives the same float64 products added in the
same order, so its score has the same bits (no ``fastmath``: LLVM neither reorders nor fuses the
multiply-add). The loop adds the same dense rows as numpy (a contiguous add; 0.0 where the term is absent,
which leaves a score ``>= +0.0`` unchanged) and scatters the other terms' posting lists. Until a dense row
is added or a quarter of the documents are touched, the documents a query touches are listed as it first
adds into them, and its top ``depth`` is a heap over them ordered like the stable descending sort (score
descending, then position ascending), the untouched documents (score 0) following by position when fewer
than ``depth`` were touched; otherwise every document is a candidate, scanned in position order. The best target's rank is
counted on the same row first (:func:`~ragdiag.retrieval.bm25._rank_of`). The row is reset through the
touched list, or by the full scan as it reads it.

``cache=True``: the machine code is written beside this module (or to numba's user cache when that
folder is read-only), so only the first process on a machine compiles.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["search_batch"]


@numba.njit(cache=True, nogil=True, inline="always")
def _worse(s_a, p_a, s_b, p_b) -> bool:
    """(s_a, p_a) comes after (s_b, p_b) in the stable descending sort: lower score, or the same at a later position."""
    return s_a < s_b or (s_a == s_b and p_a > p_b)


@numba.njit(cache=True, nogil=True, inline="always")
def _swap(hs, hp, a, b):
    """Swap heap entries ``a`` and ``b``: score and position together."""
    hs[a], hs[b] = hs[b], hs[a]
    hp[a], hp[b] = hp[b], hp[a]


@numba.njit(cache=True, nogil=True)
def _sift_down(hs, hp, size, i):
    """Restore the heap (worst at the root) below ``i``."""
    while True:
        left = 2 * i + 1
        if left >= size:
            return
        w = left
        right = left + 1
        if right < size and _worse(hs[right], hp[right], hs[left], hp[left]):
            w = right
        if _worse(hs[w], hp[w], hs[i], hp[i]):
            _swap(hs, hp, i, w)
            i = w
        else:
            return


@numba.njit(cache=True, nogil=True)
def search_batch(indptr, indices, data, dense, dense_of, n_docs, q_ids, q_ptr, depth, t_pos, t_ptr,
                 order, top, rank, at):
    """Score, select and rank every query of a batch (see the module docstring); fills the four outputs.

    ``indptr, indices, data``: the terms x documents CSR weights; ``dense`` the frequent terms' weights as
    dense rows and ``dense_of[t]`` term ``t``'s row there (-1: none). Query ``i``'s known term ids (any order,
    repeats kept) are ``q_ids[q_ptr[i]:q_ptr[i + 1]]``, its target positions ``t_pos[t_ptr[i]:t_ptr[i + 1]]``.
    ``order`` (queries x depth, int64) and ``top`` (float64) receive the top ``depth``; ``rank`` (int64) the
    best target's 1-based rank (0 without targets) and ``at`` its score (left as given without targets).
    ``0 < depth <= n_docs``.
    """
    n_queries = q_ptr.size - 1
    row = np.zeros(n_docs)
    touched = np.empty(n_docs + 1, np.int64)
    hs = np.empty(depth)
    hp = np.empty(depth, np.int64)
    for qi in range(n_queries):
        ids = np.sort(q_ids[q_ptr[qi]:q_ptr[qi + 1]])
        nt = 0
        full = False  # a dense row was added, or most documents touched: every document is a candidate
        j = 0
        while j < ids.size:
            term = ids[j]
            k = j + 1
            while k < ids.size and ids[k] == term:
                k += 1
            c = float(k - j)
            r = dense_of[term]
            if r >= 0:  # a frequent term: its dense row, as numpy adds it (0.0 where absent)
                full = True
                w = dense[r]
                if k - j == 1:
                    for d in range(n_docs):
                        row[d] += w[d]
                else:
                    for d in range(n_docs):
                        row[d] += w[d] * c
            else:
                a, b = indptr[term], indptr[term + 1]
                if full:
                    if k - j == 1:
                        for p in range(a, b):
                            row[indices[p]] += data[p]
                    else:
                        for p in range(a, b):
                            row[indices[p]] += data[p] * c
                else:  # list a document the first time it is added into (no branch: written, kept or not)
                    for p in range(a, b):
                        d = indices[p]
                        first = row[d] == 0.0
                        touched[nt] = d
                        nt += first
                        row[d] += data[p] if k - j == 1 else data[p] * c
                    full = nt > n_docs // 4  # most documents touched: scan them all instead of the list
            j = k
        n_cand = n_docs if full else nt
        # The best target (highest score, then lowest position) and its rank on this row.
        ta, tb = t_ptr[qi], t_ptr[qi + 1]
        if tb > ta:
            best = t_pos[ta]
            bv = row[best]
            for i in range(ta + 1, tb):
                t = t_pos[i]
                if _worse(bv, best, row[t], t):
                    best = t
                    bv = row[t]
            rk = 1
            if full or bv > 0.0:
                for i in range(n_cand):
                    d = i if full else touched[i]
                    if row[d] > bv or (row[d] == bv and d < best):
                        rk += 1
            else:  # every touched document is above it, and every untouched one before it ties
                before = 0
                for i in range(nt):
                    if touched[i] < best:
                        before += 1
                rk += nt + best - before
            rank[qi] = rk
            at[qi] = bv
        # Top depth: a heap whose root is the worst kept.
        size = 0
        i = 0
        while size < depth and i < n_cand:  # the first depth candidates fill the heap
            d = i if full else touched[i]
            hs[size] = row[d]
            hp[size] = d
            if full:
                row[d] = 0.0  # the scan resets the row as it reads it
            c_i = size
            size += 1
            while c_i > 0:  # sift up
                parent = (c_i - 1) // 2
                if _worse(hs[c_i], hp[c_i], hs[parent], hp[parent]):
                    _swap(hs, hp, c_i, parent)
                    c_i = parent
                else:
                    break
            i += 1
        if full:  # positions ascending: a later document enters only with a higher score than the root's
            bar = hs[0] if size else 0.0
            for d in range(i, n_docs):
                s = row[d]
                row[d] = 0.0
                if s > bar:
                    hs[0] = s
                    hp[0] = d
                    _sift_down(hs, hp, size, 0)
                    bar = hs[0]
        else:
            for i in range(i, nt):
                d = touched[i]
                s = row[d]
                if _worse(hs[0], hp[0], s, d):
                    hs[0] = s
                    hp[0] = d
                    _sift_down(hs, hp, size, 0)
        kept = size
        while size > 0:  # pop the worst to the back: best first
            size -= 1
            order[qi, size] = hp[0]
            top[qi, size] = hs[0]
            hs[0] = hs[size]
            hp[0] = hp[size]
            _sift_down(hs, hp, size, 0)
        if kept < depth:  # fewer touched than depth: the zeros follow, lowest positions first
            fill = kept
            p = 0
            while fill < depth:
                if row[p] == 0.0:
                    order[qi, fill] = p
                    top[qi, fill] = 0.0
                    fill += 1
                p += 1
        if not full:  # (a full scan reset the row as it went)
            for i in range(nt):
                row[touched[i]] = 0.0
