"""TREC collections: documents, a qrels file (``qid 0 docid rel``) and topics (TSV or the classic ``<top>`` SGML).

A TREC folder holds:

- the documents: a ``documents/`` folder (any format ragdiag reads; a file's id
  is its path without suffix) or ``documents.jsonl`` (``{"id"|"docno"|"_id",
  "title"?, "text"}`` per line);
- ``qrels.txt``: ``qid iter docid rel`` per line, whitespace-separated (``iter`` is ignored);
- ``topics.tsv`` (``qid<TAB>text``) or ``topics.txt`` (``<top><num> … <title> …</top>``).

This module also writes a run and qrels in TREC format (:func:`write_trec_run`,
:func:`write_trec_qrels`), so ``trec_eval``, ``pytrec_eval`` and ``ranx`` can
check ragdiag's numbers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping, Sequence

from ..corpus import Corpus
from .beir import topics_from
from .records import Collection, CollectionError, jsonl_documents, read_jsonl, read_text

__all__ = ["load_trec", "read_trec_qrels", "read_topics", "write_trec_run", "write_trec_qrels", "run_scores"]

_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_TITLE = re.compile(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<\w+>|</top>|$)", re.S | re.I)


def read_trec_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{qid: {docid: grade}}`` from a TREC qrels file (``qid iter docid rel``)."""
    qrels: dict[str, dict[str, int]] = {}
    for n, line in enumerate(read_text(Path(path), "qrels file").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise CollectionError(f"qrels {Path(path).name} line {n}: expected 'qid iter docid rel' (4 fields), "
                                  f"got {len(parts)}")
        try:
            grade = int(parts[3])
        except ValueError:
            raise CollectionError(f"qrels {Path(path).name} line {n}: relevance {parts[3]!r} is not an integer") from None
        qrels.setdefault(parts[0], {})[parts[2]] = grade
    return qrels


def read_topics(path: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    """``{qid: (text, tags)}`` from ``qid<TAB>text`` lines or classic ``<top>`` SGML (the ``<title>`` is the query).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> _ = p.write_text("<top>\\n<num> Number: 301\\n<title> Foreign minorities\\n<desc> Description:\\nx\\n</top>")
    >>> read_topics(p)
    {'301': ('Foreign minorities', ())}
    """
    text = read_text(Path(path), "topics file")
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    if "<top>" in text.lower():
        for block in _TOP.findall(text):
            num, title = _NUM.search(block), _TITLE.search(block)
            if not num or not title or not title.group(1).strip():
                raise CollectionError(f"topics {Path(path).name}: a <top> block lacks <num> or <title>")
            out[num.group(1)] = (" ".join(title.group(1).split()), ())
        return out
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        qid, tab, query = line.partition("\t")
        if not tab or not query.strip():
            raise CollectionError(f"topics {Path(path).name} line {n}: expected 'qid<TAB>query text'")
        out[qid.strip()] = (query.strip(), ())
    return out


def _documents(root: Path, notes: list[str]) -> Corpus:
    folder, jsonl = root / "documents", root / "documents.jsonl"
    if folder.is_dir():
        from ..corpus import load_corpus
        from ..walk import CorpusError

        try:
            return load_corpus(folder)
        except CorpusError as exc:
            raise CollectionError(str(exc)) from None
    if not jsonl.is_file():
        raise CollectionError(f"no documents in {root.name}: add a documents/ folder or documents.jsonl")
    docs = jsonl_documents(
        read_jsonl(jsonl, "TREC documents"),
        lambda row: str(next((row[k] for k in ("id", "docno", "_id") if k in row), "")).strip(),
        lambda n, _: f"documents.jsonl line {n}: every document needs a unique 'id' (or 'docno')", notes)
    return Corpus(root=str(jsonl), documents=tuple(docs), name=root.name)


def _one(root: Path, names: Sequence[str], what: str) -> Path:
    for name in names:
        if (root / name).is_file():
            return root / name
    raise CollectionError(f"no {what} in {root.name}: add one of {', '.join(names)}")


def load_trec(folder: str | Path) -> Collection:
    """Read a TREC folder (documents, ``qrels.txt``, ``topics.tsv`` or ``topics.txt``) as a document-level collection."""
    root = Path(folder)
    if not root.is_dir():
        raise CollectionError(f"TREC folder {str(root)!r} does not exist; pass a folder with documents, qrels.txt "
                              "and topics.tsv")
    notes: list[str] = []
    corpus = _documents(root, notes)
    qrels = read_trec_qrels(_one(root, ("qrels.txt", "qrels"), "qrels file"))
    topics = read_topics(_one(root, ("topics.tsv", "topics.txt"), "topics file"))
    return Collection(name=f"trec:{root.name}", format="trec", level="document", corpus=corpus,
                      topics=topics_from(topics, qrels, corpus, notes), notes=tuple(notes))


def run_scores(n: int) -> list[float]:
    """The score column of an exported run: ``n, n-1, …, 1``, strictly decreasing with rank.

    ``trec_eval`` orders a run by score (ties by document id), not by the rank
    column; distinct scores make every tool read ragdiag's order.

    >>> run_scores(3)
    [3.0, 2.0, 1.0]
    """
    return [float(n - r) for r in range(n)]


def _plain(ids, what: str) -> None:
    bad = next((i for i in ids if not i or any(ch.isspace() for ch in i)), None)
    if bad is not None:
        raise ValueError(f"{what} {bad!r} is empty or holds whitespace, which TREC files cannot carry; rename it")


def trec_run_text(run: Mapping[str, Sequence[str]], *, tag: str = "ragdiag") -> str:
    """``{qid: [docid, …] best first}`` as the text of a TREC run (``qid Q0 docid rank score tag``)."""
    _plain(run, "query id")
    _plain((d for docs in run.values() for d in docs), "document id")
    return "".join(f"{qid} Q0 {doc} {rank} {score:g} {tag}\n" for qid, docs in run.items()
                   for rank, (doc, score) in enumerate(zip(docs, run_scores(len(docs))), 1))


def trec_qrels_text(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """``{qid: {docid: grade}}`` as the text of TREC qrels (``qid 0 docid grade``)."""
    _plain(qrels, "query id")
    _plain((d for judged in qrels.values() for d in judged), "document id")
    return "".join(f"{qid} 0 {doc} {grade}\n" for qid, judged in qrels.items() for doc, grade in judged.items())


def write_trec_run(path: str | Path, run: Mapping[str, Sequence[str]], *, tag: str = "ragdiag") -> Path:
    """Write ``{qid: [docid, …] best first}`` as a TREC run (``qid Q0 docid rank score tag``), atomically."""
    from ...core.files import atomic_write

    return Path(atomic_write(path, trec_run_text(run, tag=tag)))


def write_trec_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> Path:
    """Write ``{qid: {docid: grade}}`` as TREC qrels (``qid 0 docid grade``), atomically."""
    from ...core.files import atomic_write

    return Path(atomic_write(path, trec_qrels_text(qrels)))
