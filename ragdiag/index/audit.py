"""What a chunking strategy costs and destroys, counted with the encoder's own tokenizer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from .chunking import Chunk, Destroyed, Strategy, destroyed_needles

__all__ = ["TokenAudit", "audit_tokens", "ChunkReport", "chunk_report", "Tokenizing"]


class Tokenizing(Protocol):
    """What the audit needs of an encoder (the real one, or a fake in plumbing tests)."""

    max_seq_length: int

    def count_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """Wordpieces per text, special tokens included."""

    def window_ends(self, texts: Sequence[str]) -> np.ndarray:
        """Per text, the character offset where the encoder window stops reading."""


@dataclass(frozen=True)
class TokenAudit:
    """Wordpieces per chunk and what the encoder window silently drops.

    ``tokens[i]`` counts special tokens; ``header_tokens[i]`` is what the
    ``[header]`` line adds; ``window_end[i]`` is the document offset where
    the encoder stops reading chunk ``i`` (== ``chunk.end`` when it fits);
    ``chars_lost[i]`` the characters of its content past the window.
    """

    tokens: np.ndarray
    header_tokens: np.ndarray
    window_end: np.ndarray
    chars_lost: np.ndarray
    max_seq_length: int

    @property
    def n_chunks(self) -> int:
        """Chunks audited."""
        return int(self.tokens.size)

    @property
    def total_tokens(self) -> int:
        """Wordpieces embedded over all chunks, headers included."""
        return int(self.tokens.sum())

    @property
    def total_header_tokens(self) -> int:
        """Wordpieces spent on contextual headers."""
        return int(self.header_tokens.sum())

    @property
    def header_share(self) -> float:
        """Share of embedded wordpieces that are header (0 when nothing was embedded)."""
        return self.total_header_tokens / self.total_tokens if self.total_tokens else 0.0

    @property
    def truncated(self) -> int:
        """Chunks longer than the encoder window (the model silently drops the rest)."""
        if self.max_seq_length <= 0:  # a model without a window (0) truncates nothing
            return 0
        return int((self.tokens > self.max_seq_length).sum())

    @property
    def total_chars_lost(self) -> int:
        """Characters past the encoder window, summed over truncated chunks."""
        return int(self.chars_lost.sum())


def _layout(encoder, embed: list[str], prefix: np.ndarray, memo):
    """``encoder.token_layout``, read from ``memo`` when it holds it (keyed by the encoder's stamp and the texts)."""
    if memo is None:
        return encoder.token_layout(embed, prefix)
    import json

    from .store.memo import content_key

    stamp = getattr(encoder, "stamp", None)
    stamp = json.dumps(stamp.as_dict() if hasattr(stamp, "as_dict") else repr(stamp), sort_keys=True)
    key = content_key("token-layout-1", stamp, [str(p) for p in prefix.tolist()], embed)
    got = memo.get("token-layout", key)
    if got is not None and got["layout"].shape == (3, len(embed)):
        return tuple(got["layout"])
    tokens, header, seen = encoder.token_layout(embed, prefix)
    memo.put("token-layout", key, {"layout": np.stack([tokens, header, seen]).astype(np.int64)})
    return tokens, header, seen


def audit_tokens(chunks: Sequence[Chunk], encoder: Tokenizing, *, memo=None) -> TokenAudit:
    """Count embedded wordpieces and find where the encoder window cuts each chunk.

    ``memo`` (a :class:`~ragdiag.index.store.memo.Memo`) keeps the tokenizer's counts, so a warm run reads them.
    """
    embed = [c.embed_text for c in chunks]
    prefix = np.array([c.header_prefix_len for c in chunks], dtype=np.int64)
    if hasattr(encoder, "token_layout"):
        # One tokenizer pass: header wordpieces are those that start inside the header line.
        tokens, header_tokens, seen = _layout(encoder, embed, prefix, memo)
    else:
        tokens = encoder.count_tokens(embed)
        header_tokens = np.zeros_like(tokens)
        idx = np.flatnonzero(prefix > 0)
        if idx.size:
            header_tokens[idx] = tokens[idx] - encoder.count_tokens([chunks[i].content for i in idx])
        seen = encoder.window_ends(embed)  # offset in embed_text
    starts = np.array([c.start for c in chunks], dtype=np.int64)
    ends = np.array([c.end for c in chunks], dtype=np.int64)
    window_end = np.clip(starts + seen - prefix, starts, ends)
    return TokenAudit(
        tokens=tokens,
        header_tokens=header_tokens,
        window_end=window_end,
        chars_lost=ends - window_end,
        max_seq_length=encoder.max_seq_length,
    )


@dataclass(frozen=True)
class ChunkReport:
    """One strategy's chunks, destroyed needles and token audit."""

    strategy: Strategy
    chunks: tuple[Chunk, ...]
    destroyed: tuple[Destroyed, ...]
    audit: TokenAudit

    def row(self) -> dict:
        """The strategy's line of the chunking table (sizes, tokens, header share, truncation, destroyed)."""
        sizes = np.array([c.end - c.start for c in self.chunks])
        return {
            "strategy": self.strategy.name,
            "description": self.strategy.description,
            "chunks": len(self.chunks),
            "mean_chars": round(float(sizes.mean()), 1) if sizes.size else 0.0,
            "destroyed": len(self.destroyed),
            "embedded_tokens": self.audit.total_tokens,
            "tokens_per_chunk": round(self.audit.total_tokens / max(len(self.chunks), 1), 1),
            "header_tokens": self.audit.total_header_tokens,
            "header_share": round(self.audit.header_share, 4),
            "truncated": self.audit.truncated,
            "chars_lost": self.audit.total_chars_lost,
        }


def chunk_report(
    strategy: Strategy,
    chunks: Sequence[Chunk],
    needles: Sequence[tuple[str, str, int, int]],
    encoder: Tokenizing,
    *,
    memo=None,
) -> ChunkReport:
    """Audit one strategy's chunks: token costs, truncation by the encoder window, destroyed needles."""
    return ChunkReport(
        strategy=strategy,
        chunks=tuple(chunks),
        destroyed=tuple(destroyed_needles(chunks, needles)),
        audit=audit_tokens(chunks, encoder, memo=memo),
    )
