"""ragdiag's own form of a collection, read and written: a documents folder and its ground truth beside it.

``convert`` writes any collection this way (:func:`write_collection`), so a team
can keep and edit it:

- span level: an ordinary ground truth whose needles carry ``doc`` and ``start``
  (it opens everywhere, the Ground truth page included);
- document level: ``{"level": "document", "questions": [{"id", "queries": {"query": …},
  "judgments": {doc id: grade}, "tags"?}], "ood": [...]}``, opened with
  ``--collection ragdiag:DIR``.

Documents are written as Markdown files ``<doc id>.md`` holding the document's
canonical text exactly, so every offset stays valid when the folder is read back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..corpus import Corpus, load_corpus
from ..truth import GroundTruth, TruthError, decode_truth, default_truth_path, parse_truth
from ..walk import CorpusError
from .beir import topics_from
from .records import Collection, CollectionError, parse_ood, read_text, tags_of

__all__ = ["load_native", "write_collection", "truth_data", "safe_doc_ids"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_doc_ids(ids) -> dict[str, str]:
    """A file-safe id for every document id (runs of other characters become ``_``); a clash is an error.

    >>> safe_doc_ids(["a/b c", "d-1"])
    {'a/b c': 'a_b_c', 'd-1': 'd-1'}
    """
    out, back = {}, {}
    for doc_id in ids:
        safe = _UNSAFE.sub("_", doc_id).strip(".") or "doc"
        if safe in back:
            raise CollectionError(f"documents {back[safe]!r} and {doc_id!r} would both be written as {safe}.md; "
                                  "rename one")
        out[doc_id], back[safe] = safe, doc_id
    return out


def truth_data(collection: Collection, ids: dict[str, str]) -> dict:
    """The ground truth of ``collection`` as ragdiag's JSON (document ids renamed by ``ids``)."""
    ood = [{"id": o.id, "kind": o.kind, "query": o.query, **({"tags": list(o.tags)} if o.tags else {})}
           for o in collection.ood]
    if collection.document_level:
        questions = [{"id": t.id, "queries": {"query": t.text},
                      "judgments": {ids[d]: g for d, g in t.judgments.items()},
                      **({"tags": list(t.tags)} if t.tags else {})} for t in collection.topics]
        return {"level": "document", "questions": questions, "ood": ood}
    questions = [{"id": q.id, "needle": q.needle, "queries": dict(q.queries), "doc": ids[q.doc_id], "start": q.start,
                  **({"tags": list(q.tags)} if q.tags else {})} for q in collection.truth.questions]
    return {"questions": questions, "ood": ood}


def write_collection(collection: Collection, out: str | Path) -> tuple[Path, Path]:
    """Write the documents to folder ``out`` and the ground truth beside it (``<out>.truth.json``).

    Refuses a folder that exists and is not empty (nothing is overwritten).
    Returns ``(folder, truth file)``.
    """
    folder = Path(out)
    truth_path = default_truth_path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise CollectionError(f"{str(folder)!r} exists and is not an empty folder; name a new folder")
    if truth_path.exists():
        raise CollectionError(f"{truth_path.name} already exists beside {folder.name}; name a new folder")
    import os
    import secrets
    import shutil

    from ...core.files import OutputError, atomic_write

    ids = safe_doc_ids(d.id for d in collection.corpus.documents)
    truth_text = json.dumps(truth_data(collection, ids), ensure_ascii=False, indent=1) + "\n"
    folder.parent.mkdir(parents=True, exist_ok=True)
    # all or nothing: the documents go to a hidden folder beside, renamed into place once all are on disk; the
    # truth file is written atomically after; a full disk on the way leaves neither (and names what failed)
    staging = folder.parent / f".{folder.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    moved = False
    try:
        staging.mkdir()
        for doc in collection.corpus.documents:
            with open(staging / f"{ids[doc.id]}.md", "wb") as fh:
                fh.write(doc.text.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(staging, folder)  # onto an empty folder too (POSIX)
        moved = True
        atomic_write(truth_path, truth_text)
    except (OSError, OutputError) as exc:
        shutil.rmtree(folder if moved else staging, ignore_errors=True)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CollectionError(f"{str(folder)!r} cannot be written ({reason}); nothing was left") from None
    return folder, truth_path


def _document_topics(data: dict, corpus: Corpus, source: str) -> tuple:
    rows = data.get("questions")
    if not isinstance(rows, list) or not rows:
        raise CollectionError(f"{source}: 'questions' must be a non-empty list")
    queries, qrels = {}, {}
    for n, row in enumerate(rows, 1):
        qid = row.get("id") if isinstance(row, dict) else None
        if not isinstance(qid, str) or not qid.strip():
            raise CollectionError(f"{source}: question #{n} needs an 'id'")
        texts = row.get("queries")
        judged = row.get("judgments")
        if not isinstance(texts, dict) or len(texts) != 1 or not all(isinstance(t, str) for t in texts.values()):
            raise CollectionError(f"{source}: question {qid}: 'queries' must hold one query, like {{\"query\": \"...\"}}")
        if not isinstance(judged, dict) or not all(isinstance(g, int) and not isinstance(g, bool)
                                                   for g in judged.values()):
            raise CollectionError(f"{source}: question {qid}: 'judgments' must map document ids to integer grades")
        queries[qid] = (next(iter(texts.values())).strip(), tags_of(row.get("tags"), f"question {qid}"))
        qrels[qid] = dict(judged)
    notes: list[str] = []
    return topics_from(queries, qrels, corpus, notes), notes


def load_native(folder: str | Path, truth: str | Path | None = None) -> Collection:
    """A documents folder and its ground truth (``<folder>.truth.json`` unless ``truth`` names one)."""
    try:
        corpus = load_corpus(folder)
    except CorpusError as exc:
        raise CollectionError(str(exc)) from None
    path = Path(truth) if truth else default_truth_path(corpus.root)
    try:
        data = decode_truth(read_text(path, "ground truth").encode("utf-8"), path)
    except TruthError as exc:
        raise CollectionError(str(exc)) from None
    ood = parse_ood(data.get("ood") or [], path.name) if isinstance(data, dict) and data.get("ood") else ()
    if isinstance(data, dict) and data.get("level") == "document":
        topics, notes = _document_topics(data, corpus, path.name)
        return Collection(name=f"ragdiag:{corpus.name}", format="ragdiag", level="document", corpus=corpus,
                          topics=topics, ood=ood, notes=tuple(notes))
    try:
        parsed: GroundTruth = parse_truth(data, corpus, source=path.name)
    except TruthError as exc:
        raise CollectionError(str(exc)) from None
    return Collection(name=f"ragdiag:{corpus.name}", format="ragdiag", level="span", corpus=corpus, truth=parsed,
                      ood=parsed.ood)
