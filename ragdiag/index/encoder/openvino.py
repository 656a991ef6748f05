"""all-MiniLM-L6-v2 run by OpenVINO on the CPU, from the same ONNX export as ONNX Runtime (optional).

OpenVINO reads the file :class:`~ragdiag.index.encoder.onnx.OnnxEncoder` exports from the packaged weights
(cached in the store's folder; nothing is downloaded): ``fp32`` runs the fp32 graph with OpenVINO's inference
precision held at f32 (on a CPU with bf16 or AMX units OpenVINO would otherwise pick bf16), ``int8`` runs ONNX
Runtime's dynamically quantized graph. Tokens, the token audit, the batching and the pooling are the ONNX
encoder's; only the forward pass changes. The stamp names OpenVINO, its version and the precision, so these
vectors are stored apart and judged by the variants' paired tests (``ragdiag variants --models
minilm,minilm-openvino --variants dense``).

Needs ``pip install -r requirements-onnx.txt -r requirements-openvino.txt`` (the export needs ``onnx`` and ONNX
Runtime's quantizer); without OpenVINO loading raises :class:`~ragdiag.index.encoder.resolve.ModelUnavailable`
with that command.
"""

from __future__ import annotations

import threading

import numpy as np

from .onnx import EXPORT_RECIPE, OnnxEncoder, _require_runtime
from .protocols import EncoderStamp
from .resolve import DEFAULT_MODEL, ModelUnavailable

__all__ = ["OpenVinoEncoder", "OPENVINO_INSTALL"]

OPENVINO_INSTALL = "pip install -r requirements-onnx.txt -r requirements-openvino.txt"


def _require_openvino():
    try:
        import openvino
    except ImportError:
        raise ModelUnavailable(
            f"embedding model 'minilm-openvino' needs OpenVINO, which is not installed: run `{OPENVINO_INSTALL}`"
        ) from None
    return openvino


class OpenVinoEncoder(OnnxEncoder):
    """The default model's forward pass in OpenVINO on the CPU (``precision``: ``"fp32"`` or ``"int8"``).

    ``threads``, ``passes``, ``batch_size`` and ``cache`` as :class:`~ragdiag.index.encoder.onnx.OnnxEncoder`'s:
    each pass runs on its own infer request with its share of the threads.
    """

    def __init__(self, **options):
        super().__init__(**options)
        self.name = f"{DEFAULT_MODEL} (OpenVINO {self.precision})"
        self._local = threading.local()

    @property
    def stamp(self) -> EncoderStamp:
        """The ONNX stamp with OpenVINO's name, version and precision (stored apart from both)."""
        ov = _require_openvino()
        return self._runtime_stamp(f"OpenVINO {ov.get_version()}; {EXPORT_RECIPE}; f32 inference",
                                   f"openvino-{self.precision}")

    runtime = "openvino"

    def _load_locked(self) -> None:
        ov = _require_openvino()
        _require_runtime()  # the export and the int8 quantization are ONNX Runtime's
        path = self.export()
        self._prepare_cpu()
        core = ov.Core()
        config = {"INFERENCE_NUM_THREADS": self._threads, "NUM_STREAMS": self._passes,
                  "INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "THROUGHPUT"}
        self._session = core.compile_model(core.read_model(str(path)), "CPU", config)

    def _request(self):
        """This thread's infer request (one per pass: a request runs one batch at a time)."""
        request = getattr(self._local, "request", None)
        if request is None:
            request = self._local.request = self._session.create_infer_request()
        return request

    def _hidden(self, enc) -> np.ndarray:
        """One forward pass's last hidden states, float32, on this thread's infer request (copied: the request
        reuses its output buffer)."""
        return np.asarray(self._request().infer(enc)[0], dtype=np.float32).copy()
