"""Search on Ray: ``eval --engine ray`` keeps each shard of the index in a Ray actor.

:class:`RayShards` gives :class:`~ragdiag.retrieval.sharded.ShardedSearch` one
actor per shard: a shard's rows (vectors, BM25 postings) are
shipped to it once per index, each query batch once per search, and each
actor answers with its top pool and counts. The merge and the fusion run in
the driver (:mod:`ragdiag.retrieval.sharded` says why the result is the single
process's, bit for bit, on one machine). On a cluster of unlike machines the
dense scores can differ in the last bit (another BLAS kernel), and with them a
rank between chunks whose scores are that close.
"""

from __future__ import annotations

from typing import Sequence

from ..index.ray_engine import RayUnavailable, _ray, start_ray
from .sharded import Shard, ShardedSearch

__all__ = ["RayShards", "ray_search"]


class RayShards:
    """One Ray actor per shard, each holding a :class:`~ragdiag.retrieval.sharded.Shard`."""

    where = "ray"

    def __init__(self, shards: int = 2, *, cpus_per_shard: float | None = None):
        if shards < 1:
            raise ValueError(f"shards must be at least 1, got {shards}")
        ray = _ray()
        # None: Ray's default for actors, a CPU to be placed and none held while alive, so the encoder's actors
        # of the next strategy still find the CPUs (actors holding them would leave that pool waiting forever).
        actor = ray.remote(Shard) if cpus_per_shard is None else ray.remote(num_cpus=cpus_per_shard)(Shard)
        self.handles = [actor.remote() for _ in range(shards)]

    def __len__(self) -> int:
        return len(self.handles)

    def put(self, value):
        """The value in Ray's object store (shipped to each actor that reads it, once)."""
        return _ray().put(value)

    def map(self, method: str, args: Sequence[tuple]) -> list:
        """``method(*args[i])`` on actor ``i``, all at once; the results in shard order."""
        ray = _ray()
        return ray.get([getattr(h, method).remote(*a) for h, a in zip(self.handles, args)])

    def call(self, i: int, method: str, args: tuple):
        """``method(*args)`` on actor ``i`` alone."""
        return _ray().get(getattr(self.handles[i], method).remote(*args))

    def close(self) -> None:
        """End the actors (their shards' memory is freed)."""
        ray = _ray()
        for h in self.handles:
            ray.kill(h)
        self.handles = []


def ray_search(shards: int | None = None, *, address: str | None = None,
               runtime_env: dict | None = None) -> ShardedSearch:
    """A :class:`~ragdiag.retrieval.sharded.ShardedSearch` on ``shards`` Ray actors (Ray started or reached first).

    ``shards`` None: one per CPU of the cluster. Raises :class:`~ragdiag.index.ray_engine.RayUnavailable`
    when Ray is missing or unreachable.
    """
    start_ray(address, runtime_env=runtime_env)
    if shards is None:
        shards = max(1, int(_ray().cluster_resources().get("CPU", 1)))
    try:
        return ShardedSearch(RayShards(shards))
    except RayUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - an actor that cannot start is reported as Ray's failure
        raise RayUnavailable(f"cannot start {shards} search actors on Ray: {exc}") from None

