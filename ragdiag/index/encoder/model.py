"""The bi-encoder itself: lazy model loading, the token audit's tokenizer pass, the encode loop.

Embeddings are mean-pooled (or CLS-pooled, as the model folder says) and
L2-normalised (cosine distance = 1 - dot). The fast path sorts inputs by
token count and runs small padded batches, so fixed-size chunks waste no
compute on padding; its output equals
``SentenceTransformer.encode(normalize_embeddings=True)`` to float tolerance
(checked in the tests).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import deque
from typing import Callable, Sequence

import numpy as np

from .hardware import bf16_supported, import_torch, physical_cores, runtime_versions, select_device
from .protocols import EncoderStamp, ProgressFn
from .resolve import DEFAULT_MODEL, ModelUnavailable, _weights_hash, read_pipeline, resolve_model_dir

__all__ = ["Encoder", "MAX_CPU_PASSES"]

#: Default ceiling on forward passes run at once on the CPU (beyond it, passes get more threads each).
MAX_CPU_PASSES = 4


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
    passes : on the CPU, batches run at once, each on ``threads // passes`` torch threads (default: one
        per physical core, at most :data:`MAX_CPU_PASSES`; never more than ``threads``). Small batches
        leave one multi-threaded pass waiting at every parallel region's barrier, and a core taken by
        other work (the dashboard's page, a browser) stalls all its threads; separate passes keep every
        core busy and a busy core slows one pass only. The batches are the same either way; a CPU may
        sum in another order with fewer threads, so vectors can differ in their last bits (on the
        reference machine they are identical). On a GPU there is one pass.
    device : ``"cpu"``, ``"cuda"``, ``"cuda:N"``; None: :func:`select_device` when the model loads.
    """


    def __init__(self, model: str | os.PathLike | None = None, *, precision: str = "fp32", batch_size: int = 16,
                 threads: int | None = None, passes: int | None = None, device: str | None = None):
        if precision not in ("fp32", "bf16"):
            raise ValueError(f"precision must be 'fp32' or 'bf16', got {precision!r}")
        if precision == "bf16" and not bf16_supported():
            raise ValueError("precision 'bf16' needs a CPU with native bfloat16 (AVX512-BF16 or AMX); use 'fp32'")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        for name, value in (("threads", threads), ("passes", passes)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a whole number >= 1 (or None: from the machine), got {value!r}")
        if device is not None and device != "cpu" and not str(device).startswith("cuda"):
            raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N' (or None: CUDA when torch sees it), got {device!r}")
        self.name = str(model) if model is not None else DEFAULT_MODEL
        self.folder = resolve_model_dir(model)
        self.precision = precision
        self.batch_size = batch_size
        self.threads = threads
        self.passes = passes
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
        self._layout = (1, 1)  # (passes at once, torch threads per pass), set when the model loads
        self._pool = None  # the CPU passes' threads, started on the first encode that has several batches
        self._lock = threading.Lock()  # loading, starting the pool, and the tokenizer (not thread-safe)

    # ----- lazy loading -------------------------------------------------------
    @property
    def loaded(self) -> bool:
        """True once the model has been loaded (the first encode that needed it)."""
        return self._model is not None

    def _load(self) -> None:
        if self.loaded:
            return
        with self._lock:
            if not self.loaded:
                self._load_locked()

    def _load_locked(self) -> None:
        torch = import_torch()  # before transformers, which imports it too
        from transformers import AutoModel, AutoTokenizer

        device = self.requested_device or select_device()
        if device == "cpu":
            cores = self.threads or physical_cores()
            passes = min(self.passes or MAX_CPU_PASSES, cores)
            self._layout = (passes, max(cores // passes, 1))
            torch.set_num_threads(cores)  # this thread's own torch work (one batch, the cross-encoder) uses them all
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
    def layout(self) -> str | None:
        """How the loaded model runs, for the stamps (``"cpu: 2 passes x 1 thread"``); None before it loads."""
        if self._model is None:
            return None
        if self.device != "cpu":
            return str(self.device)
        passes, threads = self._layout
        return f"cpu: {passes} pass{'es' if passes > 1 else ''} x {threads} thread{'s' if threads > 1 else ''}"

    def _pass_count(self) -> int:
        """How many batches run at once (1 off the CPU), once loaded."""
        return self._layout[0]

    def _pass_threads(self):
        """The threads that run :meth:`_pass_count` passes at once, as a context manager: this encoder's own pool,
        kept for the next encode."""
        from contextlib import nullcontext

        return nullcontext(self._passes_pool())

    def _passes_pool(self):
        """The threads that run CPU passes at once, each set to its share of the cores (started once)."""
        with self._lock:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                torch = self._torch
                passes, per = self._layout
                started = threading.Barrier(passes)  # every pass thread exists and is set before any batch runs

                def setup() -> None:
                    # torch sets a thread's OpenMP team from its global count when the thread first asks for
                    # it: ask first, then set this thread's own, so restoring the global below cannot undo it.
                    torch.get_num_threads()
                    torch.set_num_threads(per)
                    started.wait()

                pool = ThreadPoolExecutor(passes, thread_name_prefix="ragdiag-encode")
                for f in [pool.submit(setup) for _ in range(passes)]:
                    f.result()
                # set_num_threads also sets the default of threads started later: give them all the cores again
                torch.set_num_threads(passes * per)
                self._pool = pool
            return self._pool

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
    def runtime(self) -> dict[str, str]:
        """The libraries (and CPU architecture) that compute this encoder's vectors: part of a snapshot's stamp."""
        return runtime_versions(("torch", "transformers", "tokenizers"))

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
    def _tokenize(self, batch_texts: list[str]):
        """One batch's padded input tensors, on the model's device."""
        tokenizer = self.tokenizer  # loads the model on first use
        with self._lock:  # a fast tokenizer used by two threads at once can fail ("Already borrowed")
            enc = tokenizer(batch_texts, padding=True, truncation=True, max_length=self.max_seq_length,
                            return_tensors="pt")
        if self.device != "cpu":
            enc = {k: v.to(self.device) for k, v in enc.items()}
        return enc

    def _forward(self, enc):
        """One forward pass of a tokenized batch: (hidden states, attention mask, pooled unit vectors)."""
        model = self.model
        torch = self._torch
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
        batches = [order[b : b + self.batch_size] for b in range(0, len(texts), self.batch_size)]
        done = 0

        def finish(idx, hidden, mask, pooled) -> None:
            nonlocal done
            out[idx] = np.asarray(pooled)
            if token_sink is not None:
                for i, tokens in zip(idx, self._tokens_of(hidden, mask)):
                    token_sink(int(i), tokens)
            done += len(idx)
            if progress is not None:
                progress(done, len(texts))

        self._load()
        passes = self._pass_count()
        if passes < 2 or len(batches) < 2:
            for idx in batches:
                finish(idx, *self._forward(self._tokenize([texts[i] for i in idx])))
            return out
        # Several passes at once; results are taken in batch order, so progress and sinks run here, in order,
        # and at most two batches per pass are held in memory.
        running: deque = deque()
        with self._pass_threads() as pool:
            for idx in batches:
                running.append((idx, pool.submit(self._forward, self._tokenize([texts[i] for i in idx]))))
                if len(running) >= 2 * passes:
                    head, future = running.popleft()
                    finish(head, *future.result())
            while running:
                head, future = running.popleft()
                finish(head, *future.result())
        return out

    def token_embeddings(self, texts: Sequence[str], *, progress: ProgressFn | None = None) -> list[np.ndarray]:
        """Per text, its L2-normalised wordpiece embeddings (special tokens and padding dropped)."""
        result: list[np.ndarray | None] = [None] * len(texts)

        def sink(i: int, tokens: np.ndarray) -> None:
            result[i] = tokens

        self.encode(texts, progress=progress, token_sink=sink)
        return result  # type: ignore[return-value]
