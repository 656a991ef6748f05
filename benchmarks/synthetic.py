"""A synthetic knowledge base of any size, for scale measurements (never for quality claims).

Chunk texts are sentences of pseudo-words drawn from a Zipf distribution over a
30,000-word vocabulary (plus English stop words at the head), about 75 tokens
and 500 characters per chunk, so BM25's tokeniser, document frequencies and
posting lists behave like a real corpus's. Each question plants a needle
sentence (made of rare words of its own) into one chunk; its two queries are a
"course" phrasing (three needle words and stop words) and a "ticket" phrasing
(one needle word and common words). Vectors are random unit vectors (embedding
is not what is measured); a query's vector is its needle chunk's vector plus
noise, so dense retrieval finds some needles and misses others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["SyntheticKB", "make_kb", "write_vectors"]

STOP = ("the of and to a in is that for it as with be on by this are or an which can from at not "
        "when if how what do does use we you").split()
SYLLABLES = ("ka lo mi ne ru sa te vi zo ba de fi gu ho ja ko lu ma no pe qui ra si to un ve wa xe yo "
             "zen tor lin mar pol ser dan fer gil hap").split()


@dataclass(frozen=True)
class SyntheticKB:
    texts: list[str]
    holders: dict[str, np.ndarray]  # question id -> the chunk position holding its needle
    queries: list[tuple[str, str, str]]  # (query id, text, question id)
    seed: int


def _vocabulary(rng: np.random.Generator, size: int) -> np.ndarray:
    words: dict[str, None] = dict.fromkeys(STOP)
    syl = np.array(SYLLABLES)
    while len(words) < size:
        picks = syl[rng.integers(0, len(syl), size=(size, 4))]
        lengths = rng.integers(2, 5, size=size)
        for row, n in zip(picks.tolist(), lengths.tolist()):
            words.setdefault("".join(row[:n]), None)
    return np.array(list(words)[:size])


def make_kb(n_chunks: int, n_queries: int = 100, *, seed: int = 0, vocab_size: int = 30_000) -> SyntheticKB:
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng, vocab_size)
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / (ranks + 2.7)
    p /= p.sum()
    cdf = np.cumsum(p)
    n_q = max(1, n_queries // 2)
    positions = np.sort(rng.choice(n_chunks, size=min(n_q, n_chunks), replace=False))
    rare = vocab[len(vocab) // 2 :]
    needles = {int(pos): list(rng.choice(rare, size=8, replace=False)) for pos in positions}
    texts: list[str] = []
    for start in range(0, n_chunks, 8192):
        stop = min(n_chunks, start + 8192)
        lengths = rng.integers(55, 95, size=stop - start)
        ids = np.searchsorted(cdf, rng.random(int(lengths.sum())))
        ids = np.minimum(ids, len(vocab) - 1)
        words = vocab[ids]
        at = 0
        for i, n in enumerate(lengths):
            w = words[at : at + n].tolist()
            at += n
            sentences = [" ".join(w[j : j + 12]).capitalize() + "." for j in range(0, len(w), 12)]
            needle = needles.get(start + i)
            if needle is not None:
                sentences.insert(len(sentences) // 2, " ".join(needle).capitalize() + ".")
            texts.append(" ".join(sentences))
    holders, queries = {}, []
    common = vocab[len(STOP) : len(STOP) + 200]
    for qi, pos in enumerate(positions):
        qid = f"s{qi:03d}"
        holders[qid] = np.array([pos], dtype=np.int64)
        needle = needles[int(pos)]
        course = f"how does {needle[0]} {needle[3]} {needle[5]} work with the {rng.choice(common)}"
        ticket = f"{rng.choice(common)} {needle[int(rng.integers(0, 8))]} {rng.choice(common)} not working"
        queries += [(f"{qid}:course", course, qid), (f"{qid}:ticket", ticket, qid)]
    return SyntheticKB(texts, holders, queries[:n_queries], seed)


def write_vectors(path: str | Path, kb: SyntheticKB, *, dim: int = 384, block: int = 65536) -> np.ndarray:
    """Random unit chunk vectors to ``path`` (.npy, by blocks); returns the queries' vectors.

    A query vector is its needle chunk's vector plus Gaussian noise of a
    strength that varies by query (some needles close, some far), normalised.
    """
    n = len(kb.texts)
    holder_of = {int(h[0]): qid for qid, h in kb.holders.items()}
    kept: dict[str, np.ndarray] = {}
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (n, dim)})
        for start in range(0, n, block):
            rng = np.random.default_rng([kb.seed, start])
            v = rng.standard_normal((min(block, n - start), dim), dtype=np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            for pos in [p for p in holder_of if start <= p < start + len(v)]:
                kept[holder_of[pos]] = v[pos - start].copy()
            f.write(v.tobytes())
    rng = np.random.default_rng([kb.seed, 2**31])
    out = np.empty((len(kb.queries), dim), dtype=np.float32)
    for i, (_, _, qid) in enumerate(kb.queries):
        noise = rng.standard_normal(dim).astype(np.float32)
        noise /= np.linalg.norm(noise)
        w = float(rng.uniform(0.05, 0.6))
        q = w * kept[qid] + (1 - w) * noise
        out[i] = q / np.linalg.norm(q)
    return out
