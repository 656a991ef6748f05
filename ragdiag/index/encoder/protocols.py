"""What an encoder is to the rest of ragdiag: its stamp and the Protocols of its capabilities.

:class:`EncoderStamp` names what determines an embedding; :data:`ENCODER_FIELDS`
is its field list, the one place those names are spelled (index stamps hold
an ``EncoderStamp`` and the store checks stamps against these fields).
:class:`TextEncoder` is what every encoder offers; :class:`SupportsTokenSink`
and :class:`ReportsDevice` are optional capabilities, tested with
``isinstance``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, ContextManager, Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["ENCODER_FIELDS", "EncodesInSessions", "EncoderStamp", "ProgressFn", "ReportsDevice", "SupportsTokenSink",
           "TextEncoder", "loaded_device"]

ProgressFn = Callable[[int, int], None]


@runtime_checkable
class TextEncoder(Protocol):
    """What the evaluation needs of an encoder (``Encoder`` or a test's fake).

    ``stamp`` identifies the vectors (the store keys them by it); ``encode``
    returns unit vectors; ``count_tokens`` and ``window_ends`` feed the token audit.
    """

    @property
    def stamp(self) -> Any:
        """What identifies the vectors (model, weights, dims, pooling, precision)."""

    def encode(self, texts: Sequence[str], *, progress: ProgressFn | None = None) -> np.ndarray:
        """Unit vectors, one row per text."""

    def count_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """Wordpieces per text, special tokens included."""

    def window_ends(self, texts: Sequence[str]) -> np.ndarray:
        """Per text, the character offset where the model stops reading."""


@runtime_checkable
class SupportsTokenSink(Protocol):
    """An optional capability: wordpiece vectors, alone or from the embedding pass itself."""

    def encode(self, texts: Sequence[str], *, progress: ProgressFn | None = None,
               token_sink: Callable[[int, np.ndarray], None] | None = None) -> np.ndarray:
        """Unit vectors; ``token_sink(i, vectors)`` also receives text i's wordpiece vectors."""

    def token_embeddings(self, texts: Sequence[str], *, progress: ProgressFn | None = None) -> list[np.ndarray]:
        """Per text, its unit wordpiece vectors (specials and padding dropped)."""


@runtime_checkable
class EncodesInSessions(Protocol):
    """An optional capability: workers kept up across the ``encode`` calls of one embed (Ray's pool of actors).

    ``Store.embed`` runs all its committed parts inside one ``encoding_session()``, each part
    ``texts_per_commit`` texts long (enough to keep every worker busy between two commits).
    """

    @property
    def texts_per_commit(self) -> int:
        """How many texts one committed part should hold."""

    def encoding_session(self) -> ContextManager[Any]:
        """A context in which every ``encode`` call uses the same workers; they stop when it ends."""


@runtime_checkable
class ReportsDevice(Protocol):
    """An optional capability: a model that loads lazily and says where it runs once loaded."""

    @property
    def loaded(self) -> bool:
        """True once the model has been loaded."""

    @property
    def device(self) -> str | None:
        """Where the loaded model runs (``"cpu"``, ``"cuda"``, ``"cuda:1"``...)."""


def loaded_device(encoder: Any) -> str | None:
    """The device that computed ``encoder``'s vectors; None when its model never loaded (or it does not say).

    >>> class Lazy:
    ...     loaded, device = False, None
    >>> loaded_device(Lazy()) is None, loaded_device(object()) is None
    (True, True)
    """
    if isinstance(encoder, ReportsDevice) and encoder.loaded:
        return encoder.device
    return None


@dataclass(frozen=True)
class EncoderStamp:
    """What determines an embedding: written beside every index."""

    model: str
    weights_sha256: str
    dim: int
    max_seq_length: int
    pooling: str
    normalize: bool
    precision: str

    def as_dict(self) -> dict:
        """The stamp as a plain dict (stored beside vectors and indexes)."""
        return dict(self.__dict__)


#: The fields of an encoder stamp, in order: the one list of them.
ENCODER_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(EncoderStamp))
