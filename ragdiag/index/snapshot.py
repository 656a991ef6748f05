"""The shipped index of the bundled corpus: a stamped snapshot that seeds an empty store.

``data/sklearn-user-guide.index.npz`` holds the float32 vectors of every chunk
of the six strategies and of every ground-truth query, the MaxSim scores of
the truth's rerank candidates, and a stamp: encoder stamp (model, weights
sha256, dim, window, pooling, precision), tokenizer sha256, pipeline version,
corpus sha256, each strategy's chunking parameters and text hashes, and the
queries' text hashes.

:func:`seed_from_snapshot` copies it into a store only when

1. the corpus is the bundled one (a user's own corpus is never pre-filled),
2. every stamp matches what this installation computes now, and
3. the vectors are this installation's: either the libraries that compute
   them (torch, transformers, tokenizers, the CPU architecture: the
   encoder's ``runtime``) are the ones the snapshot was made and checked
   with, or a random sample of chunks, re-embedded now, agrees with the
   shipped vectors (cosine at least :data:`MIN_COSINE`). The first way loads
   no model, so a fresh installation of the pinned requirements reaches its
   first table without torch.

Otherwise it says why and does nothing. It also does nothing (and loads no
model) when the store already holds every vector. ``RAGDIAG_NO_SNAPSHOT=1``
(or ``--no-snapshot``) turns it off. ``scripts/make_snapshot.py`` regenerates
the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .. import PIPELINE_VERSION
from .chunking import chunk_corpus, parse_strategies
from ..documents.corpus import DEFAULT_CORPUS
from .encoder.protocols import loaded_device
from .store.keys import text_sha256

__all__ = [
    "SNAPSHOT_ENV",
    "SNAPSHOT_PATH",
    "MIN_COSINE",
    "SAMPLE",
    "Snapshot",
    "SeedResult",
    "snapshot_disabled",
    "load_snapshot",
    "snapshot_problems",
    "seed_from_snapshot",
    "write_snapshot",
    "verify_sample",
    "same_runtime",
    "restamp_snapshot",
]

SNAPSHOT_ENV = "RAGDIAG_NO_SNAPSHOT"
FORMAT = 1
#: Cosine every re-embedded sample vector must reach against its shipped vector.
MIN_COSINE = 0.99999
#: Chunks re-embedded before a snapshot is trusted on libraries other than those it was made with.
SAMPLE = 8
#: Chunks re-embedded when a snapshot is written, to stamp the libraries that computed its vectors.
WRITE_SAMPLE = 64


def _default_path() -> Path:
    return DEFAULT_CORPUS.with_name(DEFAULT_CORPUS.name + ".index.npz")


SNAPSHOT_PATH = _default_path()

Log = Callable[[str], None]


def snapshot_disabled() -> bool:
    """True when ``$RAGDIAG_NO_SNAPSHOT`` is set to anything but ``""``/``0``/``false``/``no``."""
    return os.environ.get(SNAPSHOT_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _list_sha(texts: Sequence[str]) -> str:
    """sha256 over the texts' sha256s, in order: one hash for a strategy's chunks."""
    return hashlib.sha256("\n".join(text_sha256(t) for t in texts).encode()).hexdigest()


def maxsim_identity(encoder_stamp: dict) -> str:
    """The scorer identity MaxSim reranking stores its pair scores under (see ``MaxSimScorer``)."""
    return f"maxsim:{encoder_stamp['model']}:{encoder_stamp['weights_sha256'][:16]}:{encoder_stamp['precision']}"


def _current_texts(corpus, truth, strategies=None) -> tuple[dict[str, tuple[dict, list[str]]], list[str]]:
    out = {}
    for s in parse_strategies(strategies):
        out[s.name] = (s.params(), [c.embed_text for c in chunk_corpus(corpus, s)])
    return out, [q.text for q in truth.queries]


def _stamp(corpus, truth, encoder, strategies=None) -> dict:
    """What a snapshot made now for this corpus, truth and encoder would be stamped with (no model load)."""
    per_strategy, queries = _current_texts(corpus, truth, strategies)
    return {
        "format": FORMAT,
        "encoder": encoder.stamp.as_dict(),
        "tokenizer_sha256": encoder.tokenizer_sha256,
        "pipeline_version": PIPELINE_VERSION,
        "corpus_sha256": corpus.sha256,
        "strategies": {name: {"params": params, "n_chunks": len(texts), "texts_sha256": _list_sha(texts)}
                       for name, (params, texts) in per_strategy.items()},
        "queries": {"n": len(queries), "texts_sha256": _list_sha(queries)},
    }


@dataclass(frozen=True, eq=False)
class Snapshot:
    """A loaded snapshot: its stamp, unique texts' sha256s and vectors, and MaxSim scores by index."""

    meta: dict
    shas: tuple[str, ...]
    vectors: np.ndarray  # float32 (len(shas), dim), unit rows
    score_query: np.ndarray  # int32 indices into shas (the query text)
    score_text: np.ndarray  # int32 indices into shas (the chunk text)
    score_value: np.ndarray  # float64
    chunk_rows: np.ndarray  # int indices into shas of chunk texts (the sample is drawn from these)


@dataclass(frozen=True)
class SeedResult:
    """What :func:`seed_from_snapshot` did: ``seeded`` or not, and ``reason`` in words."""

    seeded: bool
    reason: str
    vectors: int = 0
    scores: int = 0
    sample: int = 0
    min_cosine: float = float("nan")


def load_snapshot(path: str | os.PathLike | None = None) -> Snapshot:
    """Read a snapshot file (raises ``OSError``/``ValueError`` when it is missing or unreadable)."""
    path = Path(path) if path is not None else SNAPSHOT_PATH
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(bytes(z["meta"]).decode("utf-8"))
        shas = tuple(bytes(row).hex() for row in z["shas"])
        snap = Snapshot(meta, shas, z["vectors"].astype(np.float32), z["score_query"].astype(np.int64),
                        z["score_text"].astype(np.int64), z["score_value"].astype(np.float64),
                        z["chunk_rows"].astype(np.int64))
    if meta.get("format") != FORMAT:
        raise ValueError(f"snapshot format {meta.get('format')!r}, this ragdiag reads {FORMAT}")
    if snap.vectors.shape[0] != len(shas):
        raise ValueError(f"snapshot holds {snap.vectors.shape[0]} vectors for {len(shas)} texts")
    return snap


def snapshot_problems(snap: Snapshot, corpus, truth, encoder) -> list[str]:
    """Every stamp of ``snap`` that differs from what this corpus, truth and encoder give now (empty: all match).

    Needs no model: the encoder stamp and tokenizer hash come from the model folder's files.
    """
    now = _stamp(corpus, truth, encoder, list(snap.meta.get("strategies", {})) or None)
    old = snap.meta
    problems = []
    if old.get("encoder") != now["encoder"]:
        diff = [k for k in sorted(set(old.get("encoder", {})) | set(now["encoder"]))
                if old.get("encoder", {}).get(k) != now["encoder"].get(k)]
        problems.append(f"encoder stamp differs ({', '.join(diff)})")
    for key, label in (("tokenizer_sha256", "tokenizer"), ("pipeline_version", "pipeline version"),
                       ("corpus_sha256", "corpus")):
        if old.get(key) != now[key]:
            problems.append(f"{label} differs")
    for name, want in now["strategies"].items():
        got = old.get("strategies", {}).get(name)
        if got is None:
            problems.append(f"strategy {name} missing")
        elif got.get("params") != want["params"]:
            problems.append(f"chunking parameters of {name} differ")
        elif got.get("texts_sha256") != want["texts_sha256"]:
            problems.append(f"chunk texts of {name} differ")
    if old.get("queries") != now["queries"]:
        problems.append("ground-truth queries differ")
    return problems


def verify_sample(snap: Snapshot, texts_by_sha: dict[str, str], encoder, *, sample: int = SAMPLE,
                  rng: np.random.Generator | None = None) -> float:
    """Re-embed ``sample`` random chunks and return the lowest cosine to their shipped vectors (loads the model)."""
    rng = rng if rng is not None else np.random.default_rng()
    rows = rng.choice(snap.chunk_rows, size=min(sample, len(snap.chunk_rows)), replace=False)
    return _lowest_cosine(encoder.encode([texts_by_sha[snap.shas[r]] for r in rows]), snap.vectors[rows])


def _lowest_cosine(fresh, kept) -> float:
    """The lowest cosine between the rows of ``fresh`` and ``kept`` (NaN when there are none)."""
    fresh, kept = np.asarray(fresh, dtype=np.float64), np.asarray(kept, dtype=np.float64)
    cos = (fresh * kept).sum(1) / (np.linalg.norm(fresh, axis=1) * np.linalg.norm(kept, axis=1))
    return float(cos.min()) if cos.size else float("nan")


def same_runtime(snap: Snapshot, encoder) -> str:
    """The libraries ``snap`` was made and checked with, in words, when ``encoder`` runs on exactly those; else "".

    An encoder that does not say what computes its vectors (no ``runtime``), or a snapshot without the stamp,
    never matches: its sample is re-embedded.

    >>> class Enc:
    ...     runtime = {"torch": "2.13.0", "machine": "x86_64"}
    >>> snap = Snapshot({"runtime": {"torch": "2.13.0", "machine": "x86_64", "checked": 64, "min_cosine": 1.0}},
    ...                 (), np.zeros((0, 1)), *[np.zeros(0)] * 4)
    >>> same_runtime(snap, Enc())
    'torch 2.13.0 on x86_64'
    >>> Enc.runtime = {"torch": "2.14.0", "machine": "x86_64"}
    >>> same_runtime(snap, Enc())
    ''
    """
    now = getattr(encoder, "runtime", None)
    made = snap.meta.get("runtime") or {}
    if not now or any(made.get(k) != v for k, v in now.items()):
        return ""
    libraries = ", ".join(f"{k} {v}" for k, v in now.items() if k != "machine")
    return f"{libraries} on {now.get('machine', 'unknown')}"


def _checked_runtime(vectors: np.ndarray, chunk_texts: Sequence[str], encoder, *, log: Log) -> dict | None:
    """The encoder's runtime stamp once :data:`WRITE_SAMPLE` chunks re-embedded now agree with ``vectors``.

    None when the encoder does not say what computes it; raises ``ValueError`` when they disagree (the store
    holds vectors another installation computed: clear it and write again).
    """
    runtime = getattr(encoder, "runtime", None)
    if not runtime or not len(chunk_texts):
        return None
    rows = np.random.default_rng(0).choice(len(chunk_texts), size=min(WRITE_SAMPLE, len(chunk_texts)),
                                           replace=False)
    low = _lowest_cosine(encoder.encode([chunk_texts[r] for r in rows]), np.asarray(vectors)[rows])
    if not low >= MIN_COSINE:
        raise ValueError(f"the store's vectors agree with this installation's model only to cosine {low:.6f} "
                         f"(< {MIN_COSINE}): they were computed elsewhere; write the snapshot from an empty store")
    log(f"{len(rows)} chunks re-embedded agree to cosine {low:.7f}: stamped "
        + ", ".join(f"{k} {v}" for k, v in runtime.items()))
    return {**runtime, "checked": int(len(rows)), "min_cosine": round(low, 7)}


def _is_bundled(corpus) -> bool:
    try:
        return Path(corpus.root).resolve() == DEFAULT_CORPUS.resolve()
    except OSError:
        return False


def seed_from_snapshot(store, corpus, truth, encoder, *, strategies=None, path: str | os.PathLike | None = None,
                       sample: int = SAMPLE, rng: np.random.Generator | None = None,
                       log: Log | None = None) -> SeedResult:
    """Seed ``store`` from the shipped index when it is safe (see the module docstring); never raises.

    ``strategies``: the ones this run needs; nothing happens (and no model
    loads) when the store already holds their vectors and the queries'.
    ``log`` receives one line whenever a snapshot exists but is not used, or is used.
    """
    say = log or (lambda _msg: None)
    if snapshot_disabled():
        return SeedResult(False, f"disabled by {SNAPSHOT_ENV}")
    if not _is_bundled(corpus):
        return SeedResult(False, "not the bundled corpus: a user's own corpus is never pre-filled")
    path = Path(path) if path is not None else SNAPSHOT_PATH
    if not path.exists():
        return SeedResult(False, f"no snapshot file {path.name}")

    needed = [c.embed_text for s in parse_strategies(strategies) for c in chunk_corpus(corpus, s)]
    needed += [q.text for q in truth.queries]
    stamp = encoder.stamp
    missing = set(map(text_sha256, needed)) - store.stored_vectors(stamp, [text_sha256(t) for t in needed])
    if not missing:
        return SeedResult(False, "the store already holds every vector this run needs")
    try:
        snap = load_snapshot(path)
    except (OSError, ValueError, KeyError) as exc:
        say(f"shipped index {path.name} ignored: unreadable ({exc})")
        return SeedResult(False, f"unreadable: {exc}")
    problems = snapshot_problems(snap, corpus, truth, encoder)
    if problems:
        reason = "; ".join(problems)
        say(f"shipped index {path.name} ignored: {reason}; computing the vectors instead")
        return SeedResult(False, reason)
    texts_by_sha = _texts_by_sha(corpus, truth, snap)
    if set(snap.shas) != set(texts_by_sha):
        say(f"shipped index {path.name} ignored: its texts are not this corpus's chunks and queries")
        return SeedResult(False, "texts differ")
    same = same_runtime(snap, encoder)
    if same:
        checked, low = 0, float("nan")
        how = f"made and checked with {same}, as installed here: no chunk re-embedded"
    else:
        try:
            low = verify_sample(snap, texts_by_sha, encoder, sample=sample, rng=rng)
        except Exception as exc:  # noqa: BLE001 - the model cannot check it: compute as usual
            say(f"shipped index {path.name} ignored: the sample could not be re-embedded ({exc})")
            return SeedResult(False, f"sample not checked: {exc}")
        if not low >= MIN_COSINE:
            say(f"shipped index {path.name} ignored: re-embedded sample agrees only to cosine {low:.6f} "
                f"(< {MIN_COSINE}); computing the vectors instead")
            return SeedResult(False, f"sample cosine {low:.6f} < {MIN_COSINE}", sample=sample, min_cosine=low)
        checked = min(sample, len(snap.chunk_rows))
        how = f"a sample of {checked} chunks re-embedded agrees to cosine {low:.7f}"
    stored = store.stored_vectors(stamp, snap.shas)
    rows = [i for i, s in enumerate(snap.shas) if s not in stored]
    if rows:
        store.put_vectors(stamp, [snap.shas[i] for i in rows], snap.vectors[rows])
    n_scores = _seed_scores(store, snap, texts_by_sha, maxsim_identity(stamp.as_dict()))
    say(f"seeded the store from the shipped index {path.name}: {len(rows)} vectors, {n_scores} MaxSim scores "
        f"({how})")
    return SeedResult(True, "seeded", len(rows), n_scores, checked, low)


def _texts_by_sha(corpus, truth, snap: Snapshot) -> dict[str, str]:
    """This corpus's chunk texts (of the snapshot's strategies) and the truth's queries, by their sha256."""
    per_strategy, queries = _current_texts(corpus, truth, list(snap.meta["strategies"]))
    texts_by_sha = {text_sha256(t): t for _, texts in per_strategy.values() for t in texts}
    texts_by_sha.update((text_sha256(q), q) for q in queries)
    return texts_by_sha


def _seed_scores(store, snap: Snapshot, texts_by_sha: dict[str, str], identity: str) -> int:
    if snap.meta.get("scores", {}).get("identity") != identity or not snap.score_value.size:
        return 0
    cache = store.score_cache()
    n = 0
    for q in np.unique(snap.score_query):
        sel = snap.score_query == q
        texts = [texts_by_sha[snap.shas[t]] for t in snap.score_text[sel]]
        cache.put(identity, texts_by_sha[snap.shas[q]], texts, snap.score_value[sel])
        n += int(sel.sum())
    return n


def write_snapshot(path: str | os.PathLike, store, corpus, truth, encoder, *, scores: bool = True,
                   log: Log | None = None) -> dict:
    """Write the snapshot of ``corpus`` (all six strategies) and ``truth``'s queries; returns its stamp.

    Vectors come through ``store`` (computed when missing). With ``scores``,
    the MaxSim pair scores the store holds for (query, chunk) pairs are kept
    too (run ``eval --retrievers rerank-maxsim`` into the store first).
    """
    say = log or (lambda _msg: None)
    meta = _stamp(corpus, truth, encoder)
    per_strategy, queries = _current_texts(corpus, truth)
    chunk_texts = list(dict.fromkeys(t for _, texts in per_strategy.values() for t in texts))
    texts = list(dict.fromkeys(chunk_texts + queries))
    res = store.embed(encoder, texts)
    say(f"{len(texts)} texts: {res.computed} vectors computed, {res.reused} from the store")
    shas = [text_sha256(t) for t in texts]
    position = {s: i for i, s in enumerate(shas)}
    sq, st, sv = [], [], []
    identity = maxsim_identity(encoder.stamp.as_dict())
    if scores:
        cache = store.score_cache()
        for q in dict.fromkeys(queries):
            got = cache.get(identity, q, chunk_texts)
            for t, v in zip(chunk_texts, got):
                if not np.isnan(v):
                    sq.append(position[text_sha256(q)])
                    st.append(position[text_sha256(t)])
                    sv.append(v)
        say(f"{len(sv)} MaxSim scores from the store")
    meta["scores"] = {"identity": identity, "n": len(sv)}
    # Vectors are embedded in order of first appearance, chunks first: the first len(chunk_texts) rows.
    runtime = _checked_runtime(np.asarray(res.vectors)[:len(chunk_texts)], chunk_texts, encoder, log=say)
    if runtime is not None:
        meta["runtime"] = runtime
    meta["device"] = loaded_device(encoder)
    meta["created"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    chunk_shas = {text_sha256(t) for t in chunk_texts}
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        meta=np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8),
        shas=np.array([bytes.fromhex(s) for s in shas], dtype="S32").view(np.uint8).reshape(len(shas), 32),
        vectors=np.asarray(res.vectors, dtype=np.float32),
        score_query=np.asarray(sq, dtype=np.int32),
        score_text=np.asarray(st, dtype=np.int32),
        score_value=np.asarray(sv, dtype=np.float64),
        chunk_rows=np.array([i for i, s in enumerate(shas) if s in chunk_shas], dtype=np.int32),
    )
    Path(path).write_bytes(buf.getvalue())
    return meta


def restamp_snapshot(path: str | os.PathLike, corpus, truth, encoder, *, log: Log | None = None) -> dict:
    """Stamp an existing snapshot with the libraries that compute ``encoder``'s vectors here; returns its stamp.

    Its other stamps must match (``ValueError`` naming them otherwise) and :data:`WRITE_SAMPLE` of its chunks,
    re-embedded now, must agree with its vectors; the arrays are written back unchanged.
    """
    say = log or (lambda _msg: None)
    snap = load_snapshot(path)
    problems = snapshot_problems(snap, corpus, truth, encoder)
    if problems:
        raise ValueError(f"snapshot {Path(path).name} is not this corpus's and model's ({'; '.join(problems)}): "
                         "regenerate it instead")
    texts_by_sha = _texts_by_sha(corpus, truth, snap)
    chunk_texts = [texts_by_sha[snap.shas[r]] for r in snap.chunk_rows]
    runtime = _checked_runtime(snap.vectors[snap.chunk_rows], chunk_texts, encoder, log=say)
    if runtime is None:
        raise ValueError("this encoder does not say which libraries compute its vectors: nothing to stamp")
    meta = {**snap.meta, "runtime": runtime}
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    Path(path).write_bytes(buf.getvalue())
    return meta


def describe(meta: dict[str, Any]) -> str:
    """One line about a snapshot's stamp (for the regeneration script)."""
    enc = meta["encoder"]
    n = sum(s["n_chunks"] for s in meta["strategies"].values())
    return (f"{enc['model']} ({enc['precision']}, weights {enc['weights_sha256'][:12]}), pipeline "
            f"{meta['pipeline_version']}, corpus {meta['corpus_sha256'][:12]}, {n} chunks in "
            f"{len(meta['strategies'])} strategies, {meta['queries']['n']} queries, {meta['scores']['n']} scores"
            + ("; made with " + ", ".join(f"{k} {v}" for k, v in meta["runtime"].items()
                                          if k not in ("checked", "min_cosine")) if "runtime" in meta else ""))
