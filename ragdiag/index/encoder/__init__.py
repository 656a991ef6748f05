"""The bi-encoder: loading offline, tokenizing, embedding, token audits.

One job per module; every name is re-exported here, so ``from ragdiag.index.encoder import X`` works:

- :mod:`~ragdiag.index.encoder.protocols`: :class:`EncoderStamp`, the :class:`TextEncoder` Protocol and the
  optional capabilities (:class:`SupportsTokenSink`, :class:`ReportsDevice`).
- :mod:`~ragdiag.index.encoder.resolve`: finding a model folder offline (:func:`resolve_model_dir`), its
  weights hash and pooling pipeline (:func:`read_pipeline`); :class:`ModelUnavailable`.
- :mod:`~ragdiag.index.encoder.hardware`: :func:`select_device`, :func:`physical_cores`, :func:`bf16_supported`.
- :mod:`~ragdiag.index.encoder.model`: :class:`Encoder` (lazy load, token layout, the encode loop).

Loading one by name (and the ``RAGDIAG_ENCODER`` seam) is :func:`ragdiag.index.models.load_encoder`.
Nothing here imports torch or transformers until a model is loaded, and nothing ever reaches the network.
"""

from .hardware import DEVICE_ENV, bf16_supported, physical_cores, select_device
from .model import Encoder
from .protocols import (ENCODER_FIELDS, EncoderStamp, ProgressFn, ReportsDevice, SupportsTokenSink, TextEncoder,
                        loaded_device)
from .resolve import DEFAULT_MODEL, ModelUnavailable, offline, read_pipeline, resolve_model_dir

__all__ = ["Encoder", "TextEncoder", "SupportsTokenSink", "ModelUnavailable",
           "DEFAULT_MODEL", "resolve_model_dir", "offline", "select_device", "physical_cores", "DEVICE_ENV",
           "EncoderStamp", "ENCODER_FIELDS", "ReportsDevice", "loaded_device", "read_pipeline", "bf16_supported",
           "ProgressFn"]
