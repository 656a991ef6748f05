"""One BLAS thread where the products are small: the thread layout of a search on a small corpus.

A product of 94 queries by 918 chunk vectors, or of one query's 16 wordpiece
vectors by a chunk's 150 (MaxSim), takes well under a millisecond; OpenBLAS's
threads cost more to wake than they save. Measured side by side on the 2-core
reference machine under load: 30 products of 94 x 918 took 1.64 s with the
default threads and 0.15 s with one; a MaxSim pair 14.9 ms against 0.42 ms.
Large corpora keep every thread (their products are large).
"""

from __future__ import annotations

from contextlib import nullcontext

__all__ = ["ONE_THREAD_BELOW_CHARS", "blas_threads_for"]

#: Corpus characters (about 30,000 chunks) below which searches and rerankers run on one BLAS thread.
ONE_THREAD_BELOW_CHARS = 1 << 24


def blas_threads_for(n_chars: int):
    """A context manager: one BLAS thread for a corpus of fewer than :data:`ONE_THREAD_BELOW_CHARS` characters.

    A no-op for larger corpora, and where threadpoolctl is not installed (the BLAS default then).

    >>> with blas_threads_for(10**9):  # a large corpus: every thread
    ...     pass
    """
    if n_chars >= ONE_THREAD_BELOW_CHARS:
        return nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: without it, the BLAS default
        return nullcontext()
    return threadpool_limits(1, user_api="blas")
