"""``ir_datasets`` collections already in the local cache (nothing is downloaded at run time)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..corpus import Corpus
from .beir import topics_from
from .records import Collection, CollectionError, collection_document

__all__ = ["load_irds"]


def _home() -> Path:
    return Path(os.environ.get("IR_DATASETS_HOME") or Path.home() / ".ir_datasets")


class _NotCached(Exception):
    """A file ir_datasets would download (its path is the message)."""


@contextlib.contextmanager
def _no_download():
    """While inside: any file ir_datasets lacks raises :class:`_NotCached` instead of being downloaded."""
    from ir_datasets.util.download import Download

    original = Download.path

    def cached_only(self, force=True):
        if self._path is None and force:
            where = self._cache_path
            if where is None or not os.path.exists(where):
                raise _NotCached(where or "a file fetched at each use")
        return original(self, force)

    Download.path = cached_only
    try:
        yield
    finally:
        Download.path = original


def load_irds(name: str) -> Collection:
    """Read the ``ir_datasets`` collection ``name`` (documents, queries, qrels) from its local cache.

    Raises :class:`CollectionError` with what to do when ``ir_datasets`` is not
    installed, the name is unknown, or the collection is not downloaded yet.
    """
    try:
        import ir_datasets
    except ImportError:
        raise CollectionError("--collection irds:NAME needs the ir_datasets package: pip install ir_datasets") from None
    try:
        ds = ir_datasets.load(name)
    except KeyError:
        raise CollectionError(f"ir_datasets knows no collection {name!r} (see https://ir-datasets.com)") from None
    for part in ("docs", "queries", "qrels"):
        if not getattr(ds, f"has_{part}")():
            raise CollectionError(f"ir_datasets collection {name!r} has no {part}; pick one with documents, "
                                  "queries and qrels (e.g. beir/scifact/test)")
    try:
        with _no_download():
            docs = [collection_document(str(d.doc_id), getattr(d, "text", "") or getattr(d, "body", ""),
                                        getattr(d, "title", "") or "")[0] for d in ds.docs_iter()]
            queries = {str(q.query_id): (str(getattr(q, "text", "") or getattr(q, "title", "")).strip(), ())
                       for q in ds.queries_iter()}
            qrels: dict[str, dict[str, int]] = {}
            for r in ds.qrels_iter():
                qrels.setdefault(str(r.query_id), {})[str(r.doc_id)] = int(r.relevance)
    except _NotCached as exc:
        raise CollectionError(
            f"ir_datasets collection {name!r} is not in the local cache (missing {exc}). ragdiag never downloads: "
            f"on a machine with network run `python -c \"import ir_datasets; d = ir_datasets.load('{name}'); "
            f"[list(x) for x in (d.docs_iter(), d.queries_iter(), d.qrels_iter())]\"`, then copy its "
            f"{_home().name} folder to {_home()} here (or set IR_DATASETS_HOME to where you put it)") from None
    corpus = Corpus(root=f"irds:{name}", documents=tuple(docs), name=name.replace("/", "-"))
    notes: list[str] = []
    return Collection(name=f"irds:{name}", format="irds", level="document", corpus=corpus,
                      topics=topics_from(queries, qrels, corpus, notes), notes=tuple(notes))
