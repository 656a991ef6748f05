"""Retrievers by name: one registry, one build step per strategy.

A retriever is added by registering a :class:`RetrieverSpec` whose ``build``
makes it for one strategy's index from a :class:`BuildContext`. The CLI help,
the dashboard's defaults and the validation of names all read this registry,
so a new retriever is one module and one :func:`register_retriever` call::

    from ragdiag.retrieval.registry import RetrieverSpec, register_retriever

    register_retriever(RetrieverSpec(
        "dense-first-half", build=lambda ctx: MyRetriever(ctx.vectors[:, :192]),
        description="exact search on the first 192 dimensions"))

Modules named in the environment variable ``RAGDIAG_PLUGINS`` (comma-separated
import paths) are imported by :func:`load_plugins`, which the CLI and the
dashboard call at start, so a retriever defined outside the package shows up
everywhere without editing any file of ragdiag.

The built-ins (:mod:`ragdiag.retrieval.builtin`) are registered when the
package :mod:`ragdiag.retrieval` is first imported, so they come first
whatever module imports first.

A *parametric* spec accepts ``name@param`` (``dense@mpnet``): ``ctx.param``
holds the text after ``@``.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from .base import Retriever, Unavailable

__all__ = [
    "RetrieverSpec",
    "BuildContext",
    "RunContext",
    "register_retriever",
    "retriever_spec",
    "retriever_names",
    "parse_retrievers",
    "load_plugins",
    "build_retriever",
    "index_context",
    "PLUGINS_ENV",
    "pipeline_specs",
    "embeds",
    "builds",
    "variant_baseline",
]

PLUGINS_ENV = "RAGDIAG_PLUGINS"


@dataclass(frozen=True)
class RetrieverSpec:
    """How to build one kind of retriever for one strategy's index.

    Parameters
    ----------
    name : str
        What users type (``E/<name>``); lower case, no ``/`` or ``,``.
    build : callable
        ``build(ctx: BuildContext) -> Retriever``. May raise
        :class:`~ragdiag.retrieval.Unavailable` to report that it cannot run here.
    description : str
        One line for help texts.
    requires : tuple of str
        Retrievers built first for the same strategy (reach them with ``ctx.retriever(name)``).
    default : bool
        Part of "all retrievers" when none are named.
    parametric : bool
        Accepts ``name@param``.
    prepare : callable, optional
        ``prepare(run: RunContext)``, called once per run before any strategy is
        embedded: load a model (``run.shared``), ask for the wordpiece vectors of
        the embedding pass (``run.token_sinks``), register a per-strategy cleanup.
        May raise :class:`~ragdiag.retrieval.Unavailable`.

    What the analyses (funnel, cost, report) need to know, so that they never
    decide by a retriever's name:

    pool : str, optional
        The retriever whose ranking this one rescores (a reranker's candidate
        pool, e.g. ``"hybrid"``: it reorders that ranking's head); None: its
        own ranking is its pool. Listed in ``requires``.
    fuses : tuple of str
        The rankings it fuses (``hybrid``: ``("dense", "bm25")``); listed in ``requires``.
    embeds : bool
        Whether it ranks with the run encoder's embeddings itself (query and chunk
        vectors). A retriever that only reads text (BM25-like) says False: it is
        charged no embedding time, and its queries are not embedded when timed.
    builds : tuple of str
        The index structures it builds itself beyond the embeddings, by the
        names the cost measurement times (``"bm25"``: a BM25 index of the chunk texts).
    variant_of : str, optional
        The retriever it is a cheaper or quantised version of (``dense-int8``:
        ``"dense"``); the report compares it with that one.
    """

    name: str
    build: Callable[["BuildContext"], Retriever]
    description: str = ""
    requires: tuple[str, ...] = ()
    default: bool = True
    parametric: bool = False
    prepare: Callable[["RunContext"], None] | None = None
    pool: str | None = None
    fuses: tuple[str, ...] = ()
    embeds: bool = True
    builds: tuple[str, ...] = ()
    variant_of: str | None = None

    def __post_init__(self):
        if not self.name or self.name != self.name.strip().lower() or any(c in self.name for c in "/,@ "):
            raise ValueError(f"retriever name {self.name!r} must be lower case with no '/', ',', '@' or spaces")
        missing = [n for n in ((self.pool,) if self.pool else ()) + tuple(self.fuses) if n not in self.requires]
        if missing:
            raise ValueError(f"retriever {self.name!r}: {', '.join(missing)} (its pool or a ranking it fuses) "
                             "must be listed in requires, so it is built first")

    def stage_inputs(self) -> tuple[str, ...]:
        """The rankings before this one in its pipeline: its pool, then what the pool (or it) fuses.

        >>> RetrieverSpec("my-reranker", build=None, requires=("hybrid",), pool="hybrid").stage_inputs()
        ('hybrid', 'dense', 'bm25')
        """
        fused = retriever_spec(self.pool).fuses if self.pool else self.fuses
        return tuple(dict.fromkeys(((self.pool,) if self.pool else ()) + tuple(fused)))


@dataclass
class RunContext:
    """What one evaluation run shares across strategies: encoder, store, options, built models.

    ``shared(key, factory)`` builds an object once per run (a cross-encoder, a
    scorer) and remembers a factory's :class:`Unavailable` so it is raised
    again, not retried, for every strategy. ``token_sinks`` receive
    ``(text, wordpiece_vectors)`` for every chunk text embedded in this run.
    """

    encoder: Any
    store: Any = None
    options: Mapping[str, Any] = field(default_factory=dict)
    _shared: dict = field(default_factory=dict, repr=False)
    token_sinks: list[Callable[[str, np.ndarray], None]] = field(default_factory=list, repr=False)
    _cleanups: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def shared(self, key: str, factory: Callable[[], Any]) -> Any:
        """The object under ``key``, built by ``factory`` on first use (an Unavailable is remembered and re-raised)."""
        if key not in self._shared:
            try:
                self._shared[key] = factory()
            except Unavailable as exc:
                self._shared[key] = exc
        value = self._shared[key]
        if isinstance(value, Unavailable):
            raise value
        return value

    def after_strategy(self, cleanup: Callable[[], None]) -> None:
        """Run ``cleanup`` once the current strategy's configurations are ranked."""
        if cleanup not in self._cleanups:
            self._cleanups.append(cleanup)

    def strategy_done(self) -> None:
        """Run the per-strategy cleanups (called after a strategy's configurations are ranked)."""
        for cleanup in self._cleanups:
            cleanup()

    def keep_tokens(self, text: str, tokens: np.ndarray) -> None:
        """Hand one embedded text's wordpiece vectors to every sink."""
        for sink in self.token_sinks:
            sink(text, tokens)


@dataclass(frozen=True)
class BuildContext:
    """Everything a :class:`RetrieverSpec` may use to build a retriever for one strategy."""

    name: str  # as asked for, with any @param
    strategy: Any  # ragdiag.index.chunking.Strategy
    chunks: tuple  # the strategy's chunks, in chunk-id order
    texts: tuple[str, ...]  # what was embedded for each chunk
    vectors: np.ndarray  # the default encoder's unit vectors of the chunks
    run: RunContext
    _built: dict = field(default_factory=dict, repr=False)

    @property
    def param(self) -> str | None:
        """The text after ``@`` in the asked-for name, or None."""
        return self.name.partition("@")[2] or None

    encoder = property(attrgetter("run.encoder"), doc="The run's encoder.")
    store = property(attrgetter("run.store"), doc="The run's store (None: nothing cached).")
    options = property(attrgetter("run.options"), doc="Run options: ``cross_encoder``, ``rerank_head``, ``progress``.")

    def shared(self, key: str, factory: Callable[[], Any]) -> Any:
        """Same as :meth:`RunContext.shared`."""
        return self.run.shared(key, factory)

    def retriever(self, name: str) -> Retriever:
        """The retriever ``name`` for this strategy (built now if it was not yet)."""
        return build_retriever(name, self)

    def keep(self, name: str, retriever: Retriever) -> None:
        """Use ``retriever``, built from ``name``'s spec elsewhere (the cost table times a build), as this
        strategy's ``name``: :func:`build_retriever` returns it instead of building it again."""
        self._built[name] = retriever


_REGISTRY: dict[str, RetrieverSpec] = {}


def register_retriever(spec: RetrieverSpec, *, replace: bool = False) -> RetrieverSpec:
    """Add ``spec`` to the registry (at import of the module that defines it)."""
    old = _REGISTRY.get(spec.name)
    if old is not None and old != spec and not replace:
        raise ValueError(f"retriever {spec.name!r} is already registered; pass replace=True to redefine it")
    _REGISTRY[spec.name] = spec
    return spec


def pipeline_specs(name: str) -> tuple[RetrieverSpec, ...]:
    """The spec of ``name`` and of everything it requires, transitively, dependencies first, each once."""
    out: dict[str, RetrieverSpec] = {}

    def visit(n: str) -> None:
        spec = retriever_spec(n)
        if spec.name in out:
            return
        for dep in spec.requires:
            visit(dep)
        out[spec.name] = spec

    visit(name)
    return tuple(out.values())


def embeds(name: str) -> bool:
    """Does building and running ``name`` embed with the run's encoder (itself or through what it requires)?"""
    return any(s.embeds for s in pipeline_specs(name))


def builds(name: str) -> tuple[str, ...]:
    """The index structures built for ``name`` beyond the embeddings (its own and its requirements')."""
    return tuple(dict.fromkeys(b for s in pipeline_specs(name) for b in s.builds))


def variant_baseline(name: str) -> str | None:
    """The retriever ``name`` is compared with as a variant: its spec's ``variant_of``; for ``base@MODEL``
    of a spec without one, ``base`` (the same search with the default model); else None."""
    spec = retriever_spec(name)
    if spec.variant_of:
        return spec.variant_of
    return spec.name if "@" in name else None


def retriever_spec(name: str) -> RetrieverSpec:
    """The spec for ``name`` (``dense@mpnet`` resolves to the parametric ``dense``)."""
    base, at, param = name.partition("@")
    spec = _REGISTRY.get(base)
    if spec is None or (at and not (spec.parametric and param)):
        hint = f"{base!r} takes no @parameter" if spec is not None else f"choose from {', '.join(retriever_names())}"
        raise ValueError(f"unknown retriever {name!r}: {hint}")
    return spec


def retriever_names(*, default_only: bool = False) -> tuple[str, ...]:
    """Registered names in registration order (built-ins first)."""
    return tuple(n for n, s in _REGISTRY.items() if s.default or not default_only)


def parse_retrievers(spec: str | Iterable[str] | None) -> list[str]:
    """``"dense,hybrid"`` -> names, checked against the registry; None -> every default retriever."""
    if spec is None:
        return list(retriever_names(default_only=True))
    names = [_lower_base(s) for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise ValueError(f"no retriever named (none given); choose from {','.join(retriever_names())}")
    for name in names:
        retriever_spec(name)
    return list(dict.fromkeys(names))


def _lower_base(name: str) -> str:
    """Lower-case the retriever name, not its @parameter (a model folder's path keeps its case)."""
    base, at, param = name.strip().partition("@")
    return base.lower() + at + param


def build_retriever(name: str, ctx: BuildContext) -> Retriever:
    """Build ``name`` for ``ctx``'s strategy once (dependencies first); Unavailable propagates."""
    if name in ctx._built:
        value = ctx._built[name]
        if isinstance(value, Unavailable):
            raise value
        return value
    spec = retriever_spec(name)
    sub = BuildContext(name, ctx.strategy, ctx.chunks, ctx.texts, ctx.vectors, ctx.run, ctx._built)
    try:
        for dep in spec.requires:
            build_retriever(dep, ctx)
        retriever = spec.build(sub)
    except Unavailable as exc:
        ctx._built[name] = exc
        raise
    ctx._built[name] = retriever
    return retriever


def index_context(index: Any, run: RunContext) -> BuildContext:
    """A build context for one evaluated strategy's index (``ragdiag.evaluation.evaluate.StrategyIndex``).

    Evaluation, cost measurement and the funnel build retrievers through it,
    so a retriever is always built the same way, from its registry entry.
    """
    return BuildContext("", index.strategy, index.chunks, tuple(c.embed_text for c in index.chunks), index.vectors,
                        run)


def load_plugins(env: Mapping[str, str] | None = None) -> list[str]:
    """Import the modules named in ``RAGDIAG_PLUGINS``; returns their names.

    A module that fails to import raises ImportError naming the variable, so a
    typo is not silently ignored.
    """
    value = (os.environ if env is None else env).get(PLUGINS_ENV, "")
    names = [n.strip() for n in value.split(",") if n.strip()]
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ImportError(f"{PLUGINS_ENV}: cannot import plugin module {name!r}: {exc}") from exc
    return names
