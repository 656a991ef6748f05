"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

``corpus.jsonl`` holds ``{"_id", "title", "text"}`` per line; ``queries.jsonl``
``{"_id", "text", "metadata"?}``; ``qrels/<split>.tsv`` a header line then
``query-id<TAB>corpus-id<TAB>score`` with graded scores (0 = judged not
relevant). Each BEIR document becomes one document of the corpus, its title as
the ``# `` heading, so every chunking strategy applies to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..corpus import Corpus
from .records import Collection, CollectionError, Topic, jsonl_documents, read_jsonl, read_text, tags_of

__all__ = ["load_beir", "read_beir_qrels"]


def read_beir_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: grade}}`` from a BEIR qrels TSV (header line optional)."""
    qrels: dict[str, dict[str, int]] = {}
    for n, line in enumerate(read_text(path, "qrels file").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t") if "\t" in line else line.split()
        if n == 1 and parts[0].strip().lower() in ("query-id", "query_id", "qid"):
            continue
        if len(parts) != 3:
            raise CollectionError(f"qrels {path.name} line {n}: expected query-id, corpus-id, score "
                                  f"(3 tab-separated fields), got {len(parts)}")
        qid, doc, score = (p.strip() for p in parts)
        try:
            grade = int(float(score))
        except (ValueError, OverflowError):  # nan, inf and words alike
            raise CollectionError(f"qrels {path.name} line {n}: score {score[:40]!r} is not a finite number "
                                  "(a grade: 0 not relevant, 1 or more relevant)") from None
        if qid and doc:
            qrels.setdefault(qid, {})[doc] = grade
    return qrels


def load_beir(folder: str | Path, *, split: str = "test", tag_fields: Sequence[str] = ("tags",)) -> Collection:
    """Read a BEIR folder's corpus, queries and ``qrels/<split>.tsv`` as a document-level :class:`Collection`.

    Only queries with at least one relevant document (grade >= 1) become topics;
    the others are counted in ``notes``. ``tag_fields``: keys of a query (or of its
    ``metadata``) whose values become its tags.
    """
    root = Path(folder)
    if not root.is_dir():
        raise CollectionError(f"BEIR folder {str(root)!r} does not exist; pass a folder holding corpus.jsonl, "
                              "queries.jsonl and qrels/")
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        found = sorted(p.stem for p in (root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
        raise CollectionError(f"no qrels/{split}.tsv in {root.name}; splits there: {', '.join(found) or 'none'}")
    notes: list[str] = []
    docs = jsonl_documents(
        read_jsonl(root / "corpus.jsonl", "BEIR corpus"), lambda row: str(row.get("_id", "")).strip(),
        lambda n, doc_id: f"BEIR corpus {root.name}: every line needs a unique '_id' (got {doc_id!r})", notes)
    queries = {}
    for row in read_jsonl(root / "queries.jsonl", "BEIR queries"):
        qid = str(row.get("_id", "")).strip()
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        tags: tuple[str, ...] = ()
        for f in tag_fields:
            tags += tags_of(row.get(f, meta.get(f)), f"query {qid}, field {f!r}")
        queries[qid] = (str(row.get("text", "")).strip(), tuple(dict.fromkeys(tags)))
    corpus = Corpus(root=str(root), documents=tuple(docs), name=root.name or root.resolve().name)
    return Collection(name=f"beir:{corpus.name}", format="beir", level="document", corpus=corpus,
                      topics=topics_from(queries, read_beir_qrels(qrels_path), corpus, notes), notes=tuple(notes))


def topics_from(queries: dict[str, tuple[str, tuple[str, ...]]], qrels: dict[str, dict[str, int]], corpus: Corpus,
                notes: list[str]) -> tuple[Topic, ...]:
    """Topics of the judged queries (query order); queries without a relevant document are counted in ``notes``."""
    missing = sorted(q for q in qrels if q not in queries)
    if missing:
        raise CollectionError(f"the qrels judge queries that are not in the queries file: {', '.join(missing[:5])}")
    unknown = sorted({d for j in qrels.values() for d in j if d not in corpus})
    if unknown:
        raise CollectionError(f"the qrels name {len(unknown)} document(s) not in the corpus (e.g. "
                              f"{', '.join(unknown[:5])}); use the corpus the judgments were made on")
    topics, unjudged, empty = [], 0, 0
    for qid, (text, tags) in queries.items():
        judged = qrels.get(qid)
        if not judged or not any(g >= 1 for g in judged.values()):
            unjudged += 1
            continue
        if not text:
            empty += 1
            continue
        topics.append(Topic(qid, text, dict(judged), tags))
    if unjudged:
        notes.append(f"{unjudged} queries have no relevant document in these judgments and are left out")
    if empty:
        notes.append(f"{empty} judged queries have no text and are left out")
    if not topics:
        raise CollectionError("no query has a relevant document (grade >= 1) in these judgments")
    return tuple(topics)
