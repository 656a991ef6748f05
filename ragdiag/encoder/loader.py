"""Which encoder the CLI and the dashboard use: :class:`~ragdiag.encoder.Encoder` or the ``RAGDIAG_ENCODER`` seam."""

from __future__ import annotations

import os

from .model import Encoder
from .protocols import TextEncoder

__all__ = ["ENCODER_ENV", "load_encoder"]

ENCODER_ENV = "RAGDIAG_ENCODER"


def load_encoder(model: str | os.PathLike | None = None, **options) -> TextEncoder:
    """The encoder the CLI and the dashboard use: :class:`Encoder`, unless ``RAGDIAG_ENCODER`` names another.

    ``RAGDIAG_ENCODER=package.module:factory`` calls ``factory(model, **options)``.
    It is the seam that lets the test suite drive the CLI and the dashboard
    without model weights; the factory's ``stamp`` names its model, so its
    numbers are stamped as its own and never mistaken for MiniLM's.
    """
    spec = os.environ.get(ENCODER_ENV, "").strip()
    if not spec:
        return Encoder(model, **options)
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ValueError(f"{ENCODER_ENV} must be 'package.module:factory', got {spec!r}")
    import importlib

    try:
        factory = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{ENCODER_ENV}={spec!r} cannot be loaded: {exc}") from None
    return factory(model, **options)
