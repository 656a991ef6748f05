"""all-MiniLM-L6-v2 run by ONNX Runtime, in fp32 or dynamically quantized int8 (optional).

The model is exported to ONNX from the packaged weights on this machine (no
network): the first encode traces the transformers model with torch's
exporter and, for ``int8``, quantizes the export with ONNX Runtime's dynamic
quantization (int8 weights per output channel, activations quantized per
batch: the 8-bit dot-product instructions of AVX-512 VNNI class CPUs). Both
files are cached in the store's folder (``<cache>/onnx/``, keyed by the
weights' sha256, the exporter's settings and the quantization recipe), so
later runs load them without torch.

Tokens, the token audit and the batching are the torch encoder's
(:class:`~ragdiag.index.encoder.model.Encoder`): only the forward pass
changes. The stamp names ONNX Runtime, its version and the precision, so
these vectors are stored apart from the torch encoder's and judged against
them by the variants' paired tests (``ragdiag variants --models
minilm,minilm-onnx,minilm-onnx-int8 --variants dense``).

Needs ``pip install -r requirements-onnx.txt`` (``onnx``, ``onnxruntime``);
without them loading raises :class:`~ragdiag.index.encoder.resolve.ModelUnavailable`
with that command.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

from .hardware import physical_cores
from .model import Encoder
from .protocols import EncoderStamp
from .resolve import DEFAULT_MODEL, ModelUnavailable

__all__ = ["OnnxEncoder", "ONNX_PRECISIONS", "ONNX_INSTALL", "EXPORT_RECIPE", "onnx_model_files"]

#: precision -> how the exported graph is run
ONNX_PRECISIONS = {
    "fp32": "ONNX Runtime fp32",
    "int8": "ONNX Runtime dynamic int8 (weights per channel, activations per batch)",
}
ONNX_INSTALL = "pip install -r requirements-onnx.txt"
#: what decides the exported file besides the weights (part of its cache key and of the stamp)
EXPORT_RECIPE = "torchscript-export opset17 eager-attention; int8: quantize_dynamic QInt8 per_channel"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _require_runtime():
    try:
        import onnxruntime
    except ImportError:
        raise ModelUnavailable(
            f"embedding model 'minilm-onnx' needs ONNX Runtime, which is not installed: run `{ONNX_INSTALL}`"
        ) from None
    return onnxruntime


def onnx_model_files(weights_sha256: str, root: str | os.PathLike | None = None) -> dict[str, Path]:
    """Where the exported (``fp32``) and quantized (``int8``) files of one set of weights are cached."""
    from ...core.cache_dir import resolve_root
    import hashlib

    key = hashlib.sha256(f"{weights_sha256}\0{EXPORT_RECIPE}".encode()).hexdigest()[:20]
    folder = resolve_root(root) / "onnx"
    return {"fp32": folder / f"minilm-{key}-fp32.onnx", "int8": folder / f"minilm-{key}-int8.onnx"}


def _write_atomically(target: Path, write: Callable[[Path], None]) -> None:
    """``write(tmp)`` a file beside ``target``, then rename it there (readers never see half a file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.stem + ".", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class OnnxEncoder(Encoder):
    """The default model's forward pass in ONNX Runtime (``precision``: ``"fp32"`` or ``"int8"``).

    ``cache``: the folder the export is cached in (default: the store's,
    :func:`ragdiag.index.store.keys.resolve_root`). ``threads``: ONNX Runtime's
    threads in all (default: the physical cores); ``passes``: batches run at once, each on its share of the
    threads (default: one per thread, as the torch encoder's CPU passes: a core taken by other work
    stalls one pass, not every thread at a barrier). Constructing one is cheap
    and needs neither torch nor ONNX Runtime; the first encode loads (and, once
    per cache folder, exports) the model.
    """

    def __init__(self, *, precision: str = "fp32", batch_size: int = 32, threads: int | None = None,
                 passes: int | None = None, cache: str | os.PathLike | None = None):
        if precision not in ONNX_PRECISIONS:
            raise ValueError(f"ONNX precision must be one of {', '.join(ONNX_PRECISIONS)}, got {precision!r}")
        super().__init__(None, precision="fp32", batch_size=batch_size, threads=threads, passes=passes, device="cpu")
        self.precision = precision
        self.name = f"{DEFAULT_MODEL} (ONNX {precision})"
        self.cache = cache
        self._session = None

    @property
    def files(self) -> dict[str, Path]:
        """The cached export's paths (see :func:`onnx_model_files`)."""
        return onnx_model_files(self.stamp_weights, self.cache)

    @property
    def stamp_weights(self) -> str:
        """The packaged weights' sha256 (what the export is made from)."""
        return super().stamp.weights_sha256

    @property
    def stamp(self) -> EncoderStamp:
        """The torch encoder's stamp with this runtime's model name and precision (stored apart from it)."""
        ort = _require_runtime()
        return self._runtime_stamp(f"ONNX Runtime {ort.__version__}; {EXPORT_RECIPE}", f"onnx-{self.precision}")

    #: the runtime's name in :attr:`layout`
    runtime = "onnxruntime"

    def _runtime_stamp(self, runtime: str, precision: str) -> EncoderStamp:
        """The packaged torch model's stamp under this runtime's name and precision (so stored apart from it)."""
        base = Encoder.stamp.fget(self)
        return EncoderStamp(model=f"{DEFAULT_MODEL} ({runtime})", weights_sha256=base.weights_sha256, dim=base.dim,
                            max_seq_length=base.max_seq_length, pooling=base.pooling, normalize=base.normalize,
                            precision=precision)

    @property
    def layout(self) -> str | None:
        """How the loaded model runs (``"onnxruntime cpu: 2 passes x 1 thread, int8"``); None before it loads."""
        if self._session is None:
            return None
        per = max(self._threads // self._passes, 1)
        return (f"{self.runtime} cpu: {self._passes} pass{'es' if self._passes > 1 else ''} x {per} "
                f"thread{'s' if per > 1 else ''}, {self.precision}")

    @property
    def loaded(self) -> bool:
        """True once the ONNX session exists."""
        return self._session is not None

    # ----- export and loading -------------------------------------------------
    def export(self) -> Path:
        """The cached file for this precision, exported (and quantized) first when it is not there yet."""
        _require_runtime()
        files = self.files
        if not files["fp32"].exists():
            _write_atomically(files["fp32"], self._export_fp32)
        if self.precision == "int8" and not files["int8"].exists():
            try:
                from onnxruntime.quantization import QuantType, quantize_dynamic
            except ImportError:
                raise ModelUnavailable(f"int8 quantization needs the `onnx` package: run `{ONNX_INSTALL}`") from None
            _write_atomically(files["int8"], lambda tmp: quantize_dynamic(
                str(files["fp32"]), str(tmp), weight_type=QuantType.QInt8, per_channel=True))
        return files[self.precision]

    def _export_fp32(self, target: Path) -> None:
        try:
            import onnx  # noqa: F401 - the exporter writes through it
        except ImportError:
            raise ModelUnavailable(f"exporting to ONNX needs the `onnx` package: run `{ONNX_INSTALL}`") from None
        from .hardware import import_torch

        torch = import_torch()
        from transformers import AutoModel, AutoTokenizer

        model = AutoModel.from_pretrained(self.folder, local_files_only=True, attn_implementation="eager").eval()
        tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True)

        class Hidden(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state

        sample = tokenizer(["an example sentence", "a second, longer example sentence"], padding=True,
                           return_tensors="pt")
        axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
        import warnings

        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # the tracer's notes on Python conditionals it records as constants
            torch.onnx.export(Hidden(model), tuple(sample[name] for name in _INPUTS), str(target),
                              input_names=list(_INPUTS), output_names=["last_hidden_state"], dynamic_axes=axes,
                              opset_version=17, dynamo=False)

    def _load_locked(self) -> None:
        ort = _require_runtime()
        path = self.export()
        self._prepare_cpu()
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(self._threads // self._passes, 1)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _prepare_cpu(self) -> None:
        """Before the session: the threads in all, the passes at once, and the batch tokenizer (padding and
        truncation as the torch encoder's)."""
        from tokenizers import Tokenizer

        self._threads = self.threads or physical_cores()
        self._passes = min(self.passes or self._threads, self._threads)
        tok = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        tok.enable_truncation(self.max_seq_length)
        tok.enable_padding(pad_id=tok.token_to_id("[PAD]") or 0, pad_token="[PAD]")
        self._batch_tokenizer = tok
        self.device = "cpu"

    # ----- embeddings ---------------------------------------------------------
    def _tokenize(self, batch_texts: list[str]) -> dict[str, np.ndarray]:
        """One batch's padded inputs as int64 arrays (the same ids as the torch encoder's tokenizer)."""
        self._load()
        with self._lock:
            encs = self._batch_tokenizer.encode_batch(batch_texts)
        return {"input_ids": np.array([e.ids for e in encs], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64)}

    def _hidden(self, enc) -> np.ndarray:
        """One forward pass's last hidden states, float32."""
        return self._session.run(None, enc)[0].astype(np.float32, copy=False)

    def _forward(self, enc):
        """One forward pass: (hidden states, attention mask, pooled unit vectors) as numpy arrays."""
        hidden = self._hidden(enc)
        mask = enc["attention_mask"]
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return hidden, mask, pooled.astype(np.float32)

    def _tokens_of(self, hidden, mask) -> list[np.ndarray]:
        unit = hidden / np.maximum(np.linalg.norm(hidden, axis=-1, keepdims=True), 1e-12)
        lengths = mask.sum(1)
        return [unit[row, 1 : max(int(lengths[row]) - 1, 1)].copy() for row in range(unit.shape[0])]

    def _pass_count(self) -> int:
        return self._passes

    def _pass_threads(self):
        """Threads for the passes of one encode (ONNX Runtime's run is thread-safe)."""
        from concurrent.futures import ThreadPoolExecutor

        return ThreadPoolExecutor(self._passes, thread_name_prefix="ragdiag-onnx")
