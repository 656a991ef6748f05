"""Late chunking: each chunk's vector pooled from its own wordpieces, read by the encoder in their context.

Plain embedding reads a chunk alone. Late chunking reads a longer span of its
document in one forward pass and mean-pools each chunk's own wordpiece vectors
from that pass, so a chunk's vector carries its neighbours' context while its
text, offsets and citation stay the chunk's own.

The span is bounded by the encoder's window (all-MiniLM-L6-v2 reads 256
wordpieces, 254 after ``[CLS]`` and ``[SEP]``). A document's chunks, in order,
are packed into *windows* of whole chunks: a window takes the next chunk while
the chunks' wordpieces fit in the window, so a chunk is never split between
two windows and its context is cut at its window's edges (a chunk at a window's
start sees only what follows it, one at the end only what precedes it). A chunk
longer than the window is a window alone, truncated exactly as plain embedding
truncates it. On the bundled corpus strategy E's chunks average 119 wordpieces,
so a window holds one or two of them (918 chunks in 559 windows): late chunking
there adds the context of at most one neighbour, not of the whole section.

A window reads the chunks' embedded texts (for E and F the ``[Doc > Section]``
header line, then the chunk's text) joined by a newline; the wordpiece
tokenizer drops whitespace, so for a strategy without a header this reads the
same wordpieces as the document itself. Chunk ``i``'s vector is the mean over
its own wordpieces (those starting inside its embedded text) and the window's
``[CLS]`` and ``[SEP]``, then L2-normalised: the pooling and normalisation of
sentence-transformers' all-MiniLM-L6-v2 (mean over the attention-masked
tokens, then L2), restricted to the chunk. A chunk alone in its window thus
gets exactly its plain vector.

Vectors depend on the context, so the store cannot key them by the chunk's text
alone: they live in a space of their own (the encoder's stamp plus
:data:`METHOD`) keyed by the window's text and the chunk's span in it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .chunking import Chunk, Strategy

__all__ = ["METHOD", "Window", "pack_windows", "late_vectors", "late_embed", "with_late", "check_late_encoder"]

#: What a late-chunked vector is (stamped into the store's space and the strategy's parameters).
METHOD = ("late chunking v1: whole chunks packed into the encoder window, each pooled from its own wordpieces "
          "with the window's [CLS] and [SEP], mean then L2")
SEPARATOR = "\n"


def with_late(strategy: Strategy, *, name: str | None = None) -> Strategy:
    """``strategy`` with late-chunked vectors (named ``<strategy>+LATE`` unless ``name`` says otherwise).

    >>> from ragdiag.index.chunking import STRATEGIES
    >>> s = with_late(STRATEGIES["E"])
    >>> s.name, s.description
    ('E+LATE', 'boundaries + header + late chunking')
    """
    from dataclasses import replace

    if strategy.late:
        raise ValueError(f"strategy {strategy.name} is already late-chunked")
    return replace(strategy, name=name or f"{strategy.name}+LATE", late=True)


@dataclass(frozen=True)
class Window:
    """Consecutive chunks of one document read in one forward pass."""

    doc_id: str
    members: tuple[int, ...]  # indices into the chunks given to :func:`pack_windows`
    text: str  # the embedded texts of the members, joined by :data:`SEPARATOR`
    spans: tuple[tuple[int, int], ...]  # per member, its embedded text's characters in ``text``

    def key(self, j: int) -> str:
        """The store key of member ``j``'s vector: the window's text and the member's span in it."""
        s, e = self.spans[j]
        return hashlib.sha256(f"{s}:{e}\0{self.text}".encode("utf-8", "surrogateescape")).hexdigest()


def pack_windows(chunks: Sequence[Chunk], wordpieces: Sequence[int], room: int) -> list[Window]:
    """Each document's chunks, in order, packed into windows of whole chunks of at most ``room`` wordpieces.

    ``wordpieces[i]``: chunk ``i``'s embedded text in wordpieces, without special tokens.

    >>> from ragdiag.index.chunking import Chunk
    >>> cs = [Chunk(f"d:{i}", "d", "s", "", i, i + 1, "x", t) for i, t in enumerate(["a b", "c", "d e f"])]
    >>> [(w.members, w.text) for w in pack_windows(cs, [2, 1, 3], 3)]
    [((0, 1), 'a b\\nc'), ((2,), 'd e f')]
    """
    if room < 1:
        raise ValueError(f"room must be at least 1 wordpiece, got {room}")
    if len(wordpieces) != len(chunks):
        raise ValueError(f"{len(wordpieces)} wordpiece counts for {len(chunks)} chunks")
    windows: list[Window] = []
    members: list[int] = []
    used = 0

    def close() -> None:
        texts = [chunks[i].embed_text for i in members]
        spans, at = [], 0
        for t in texts:
            spans.append((at, at + len(t)))
            at += len(t) + len(SEPARATOR)
        windows.append(Window(chunks[members[0]].doc_id, tuple(members), SEPARATOR.join(texts), tuple(spans)))

    for i, c in enumerate(chunks):
        n = int(wordpieces[i])
        if members and (c.doc_id != chunks[members[-1]].doc_id or used + n > room):
            close()
            members, used = [], 0
        members.append(i)
        used += n
    if members:
        close()
    return windows


def check_late_encoder(encoder: Any) -> None:
    """ValueError unless ``encoder`` gives wordpiece vectors and mean-pools them (what late chunking needs)."""
    for name in ("_forward", "tokenizer", "max_seq_length"):
        if not hasattr(encoder, name):
            raise ValueError(f"late chunking needs the wordpiece vectors of a transformers encoder "
                             f"(ragdiag.index.encoder.Encoder); {type(encoder).__name__} gives only sentence vectors")
    if getattr(encoder, "pooling", "mean") != "mean":
        raise ValueError(f"late chunking mean-pools a chunk's wordpieces; model {encoder.name!r} pools "
                         f"{encoder.pooling!r}")


def _pool(hidden: np.ndarray, length: int, offsets: Sequence[tuple[int, int]], span: tuple[int, int]) -> np.ndarray:
    """Mean of the wordpieces starting inside ``span`` and the row's first and last ([CLS], [SEP]) tokens, L2 unit."""
    s, e = span
    rows = [0, *(t for t in range(1, length - 1) if s <= offsets[t][0] < e), length - 1]
    v = hidden[rows].mean(axis=0)
    return v / max(float(np.linalg.norm(v)), 1e-12)


def late_vectors(encoder: Any, windows: Sequence[Window], *, progress=None) -> list[np.ndarray]:
    """Per window, its members' unit vectors ``(len(members), dim)`` from one forward pass of the window.

    ``encoder``: an :class:`~ragdiag.index.encoder.Encoder` (its tokenizer's
    offsets map characters to wordpieces; its forward pass gives their vectors).
    Windows run in batches of the encoder's ``batch_size``, longest first, on
    the encoder's CPU passes at once as :meth:`~ragdiag.index.encoder.Encoder.encode` does.
    """
    check_late_encoder(encoder)
    out: list[np.ndarray | None] = [None] * len(windows)
    if not windows:
        return []
    tokenizer = encoder.tokenizer  # loads the model
    order = np.argsort([-len(w.text) for w in windows], kind="stable")
    size = max(int(getattr(encoder, "batch_size", 16)), 1)
    batches = [order[b:b + size] for b in range(0, len(windows), size)]

    def tokenize(idx):
        with encoder._lock:  # the fast tokenizer is not thread-safe
            enc = tokenizer([windows[i].text for i in idx], padding=True, truncation=True,
                            max_length=encoder.max_seq_length, return_offsets_mapping=True, return_tensors="pt")
        offsets = enc.pop("offset_mapping").tolist()
        if encoder.device != "cpu":
            enc = {k: v.to(encoder.device) for k, v in enc.items()}
        return dict(enc), offsets

    done = 0

    def finish(idx, offsets, hidden, mask, _pooled) -> None:
        nonlocal done
        hidden, lengths = hidden.numpy(), mask.sum(1).numpy()
        for r, i in enumerate(idx):
            w = windows[i]
            out[i] = np.stack([_pool(hidden[r], int(lengths[r]), offsets[r], span) for span in w.spans]
                              ).astype(np.float32)
        done += len(idx)
        if progress is not None:
            progress(done, len(windows))

    passes = getattr(encoder, "_layout", (1, 1))[0]
    if passes < 2 or len(batches) < 2:
        for idx in batches:
            enc, offsets = tokenize(idx)
            finish(idx, offsets, *encoder._forward(enc))
        return out  # type: ignore[return-value]
    from collections import deque

    pool, running = encoder._passes_pool(), deque()
    for idx in batches:
        enc, offsets = tokenize(idx)
        running.append((idx, offsets, pool.submit(encoder._forward, enc)))
        if len(running) >= 2 * passes:
            head, offs, future = running.popleft()
            finish(head, offs, *future.result())
    while running:
        head, offs, future = running.popleft()
        finish(head, offs, *future.result())
    return out  # type: ignore[return-value]


def late_embed(encoder: Any, chunks: Sequence[Chunk], *, store=None, progress=None) -> tuple[np.ndarray, int]:
    """Late-chunked unit vectors of ``chunks`` (in order), float32, and how many were computed now.

    ``chunks``: one strategy's chunks in document order (as
    :func:`~ragdiag.index.chunking.chunk_corpus` gives them). With a ``store``,
    vectors are read from and written to its late-chunking space (the encoder's
    stamp plus :data:`METHOD`), keyed by the window's text and the chunk's span in it;
    a window with any vector missing is computed again whole.
    """
    check_late_encoder(encoder)
    chunks = list(chunks)
    dim = int(encoder.dim)
    out = np.zeros((len(chunks), dim), dtype=np.float32)
    if not chunks:
        return out, 0
    specials = int(encoder.count_tokens([""])[0])
    wordpieces = np.asarray(encoder.count_tokens([c.embed_text for c in chunks])) - specials
    windows = pack_windows(chunks, wordpieces, encoder.max_seq_length - specials)
    cache = space = stamp = None
    found: dict[str, np.ndarray] = {}
    if store is not None:
        from .store.keys import _canonical, payload_space
        from .store.stamps import _stamp_dict

        cache = store.vector_cache()
        stamp = {**_stamp_dict(encoder.stamp), "method": METHOD}
        space = payload_space("embedding", _canonical(stamp))
        found, _ = cache.fetch(space, dim, [w.key(j) for w in windows for j in range(len(w.members))])
    todo = [w for w in windows if any(w.key(j) not in found for j in range(len(w.members)))]
    computed = 0
    if todo:
        vectors = late_vectors(encoder, todo, progress=progress)
        keys = [w.key(j) for w in todo for j in range(len(w.members))]
        flat = np.concatenate(vectors).astype(np.float32)
        if not np.isfinite(flat).all():
            raise ValueError("late chunking gave non-finite vectors; nothing was stored")
        found.update(zip(keys, flat))
        computed = len(keys)
        if cache is not None:
            cache.write(space, stamp, keys, flat)
    for w in windows:
        for j, i in enumerate(w.members):
            out[i] = found[w.key(j)]
    return out, computed
