"""Collections in the formats people have: BEIR, TREC, ``ir_datasets``, SQuAD-style spans, and ragdiag's own.

:func:`open_collection` reads one from a spec: ``beir:DIR``, ``trec:DIR``,
``squad:FILE``, ``irds:NAME`` or ``ragdiag:DIR`` (a folder ``convert`` wrote).
"""

from __future__ import annotations

from pathlib import Path

from .beir import load_beir
from .irds import load_irds
from .native import load_native, write_collection
from .records import (DOCUMENT_LEVEL_NOTE, NO_OOD_NOTE, Collection, CollectionError, Topic, load_ood)
from .squad import load_squad
from .trec import load_trec, read_trec_qrels, write_trec_qrels, write_trec_run

__all__ = ["Collection", "CollectionError", "Topic", "DOCUMENT_LEVEL_NOTE", "NO_OOD_NOTE", "FORMATS",
           "open_collection", "load_beir", "load_trec", "load_squad", "load_irds", "load_native", "load_ood",
           "write_collection", "read_trec_qrels", "write_trec_qrels", "write_trec_run"]

#: Spec prefixes and what follows them.
FORMATS = {"beir": "DIR", "trec": "DIR", "squad": "FILE", "irds": "NAME", "ragdiag": "DIR"}


def open_collection(spec: str, *, split: str = "test", ood: str | Path | None = None,
                    tag_fields: tuple[str, ...] = ("tags",)) -> Collection:
    """The collection ``spec`` names (``beir:DIR``, ``trec:DIR``, ``squad:FILE``, ``irds:NAME``, ``ragdiag:DIR``).

    ``split``: the BEIR qrels split; ``ood``: a JSON file of out-of-domain
    queries to add; ``tag_fields``: BEIR query fields read as tags.

    >>> open_collection("nope")
    Traceback (most recent call last):
    ...
    ragdiag.documents.collections.records.CollectionError: bad collection 'nope': write FORMAT:WHERE with FORMAT one of beir:DIR, trec:DIR, squad:FILE, irds:NAME, ragdiag:DIR (e.g. beir:./scifact)
    """
    kind, sep, where = str(spec).partition(":")
    if not sep or kind not in FORMATS or not where.strip():
        raise CollectionError(f"bad collection {spec!r}: write FORMAT:WHERE with FORMAT one of "
                              f"{', '.join(f'{k}:{v}' for k, v in FORMATS.items())} (e.g. beir:./scifact)")
    where = where.strip()
    if kind == "beir":
        collection = load_beir(where, split=split, tag_fields=tag_fields)
    elif kind == "trec":
        collection = load_trec(where)
    elif kind == "squad":
        collection = load_squad(where)
    elif kind == "irds":
        collection = load_irds(where)
    else:
        collection = load_native(where)
    if ood is not None:
        collection = collection.with_ood(load_ood(ood))
    return collection
