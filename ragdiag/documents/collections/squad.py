"""SQuAD-style span datasets: ``context``, ``question``, ``answers[{text, answer_start}]``.

Two shapes read:

- the official JSON (v1.1 and v2.0): ``{"data": [{"title", "paragraphs": [{"context",
  "qas": [{"id", "question", "answers": [...], "is_impossible"?}]}]}]}``;
- JSON Lines (or a JSON list) of flat rows ``{"id", "title"?, "context", "question",
  "answers"}`` where ``answers`` is a list of ``{text, answer_start}`` or the
  Hugging Face form ``{"text": [...], "answer_start": [...]}``.

Each distinct context becomes one document (its article title as the ``# ``
heading); each answerable question becomes a question whose needle is its
first answer at its exact offset (``doc`` and ``start`` in the ground truth), so
the destroyed-needle counts and the whole chunk analysis work. SQuAD 2.0's
unanswerable questions become out-of-domain queries of kind ``near`` (they were
written against that paragraph but it does not answer them).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..corpus import Corpus
from ..truth import NEEDLE_MAX, TruthError, parse_truth
from .records import Collection, CollectionError, collection_document, read_text

__all__ = ["load_squad", "squad_rows"]

_SLUG = re.compile(r"[^A-Za-z0-9]+")


def _answers(raw, where: str) -> list[tuple[str, int]]:
    if isinstance(raw, dict):  # Hugging Face: {"text": [...], "answer_start": [...]}
        texts, starts = raw.get("text") or [], raw.get("answer_start") or []
        raw = [{"text": t, "answer_start": s} for t, s in zip(texts, starts)]
    if not isinstance(raw, list):
        raise CollectionError(f"{where}: 'answers' must be a list of {{text, answer_start}}")
    out = []
    for a in raw:
        start = a.get("answer_start") if isinstance(a, dict) else None
        if not isinstance(a.get("text") if isinstance(a, dict) else None, str) or type(start) is not int or start < 0:
            raise CollectionError(f"{where}: each answer needs 'text' (a string) and 'answer_start' (an integer)")
        out.append((a["text"], a["answer_start"]))
    return out


def squad_rows(data) -> list[dict]:
    """Flat rows ``{id, title, context, question, answers: [(text, start)], impossible}`` of either shape."""
    rows = []
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        for a, article in enumerate(data["data"], 1):
            if not isinstance(article, dict):
                raise CollectionError(f"data[{a}]: must be an object with title and paragraphs")
            title = str(article.get("title") or "")[:1000]
            paragraphs = article.get("paragraphs") or []
            if not isinstance(paragraphs, list):
                raise CollectionError(f"data[{a}].paragraphs: must be a list")
            for p, paragraph in enumerate(paragraphs, 1):
                qas = paragraph.get("qas") or [] if isinstance(paragraph, dict) else None
                if not isinstance(qas, list):
                    raise CollectionError(f"data[{a}].paragraphs[{p}]: must be an object with context and a list qas")
                for q, qa in enumerate(qas, 1):
                    if not isinstance(qa, dict):
                        raise CollectionError(f"data[{a}].paragraphs[{p}].qas[{q}]: must be an object with id, "
                                              "question and answers")
                    where = f"question {str(qa.get('id'))[:80]}"
                    rows.append({"id": str(qa.get("id", "")), "title": title, "context": paragraph.get("context"),
                                 "question": qa.get("question"), "answers": _answers(qa.get("answers", []), where),
                                 "impossible": bool(qa.get("is_impossible"))})
        return rows
    if not isinstance(data, list):
        raise CollectionError("a SQuAD file is the official JSON ({\"data\": [...]}) or a list of rows with "
                              "context, question and answers")
    for n, row in enumerate(data, 1):
        if not isinstance(row, dict):
            raise CollectionError(f"row {n}: must be an object with context, question and answers")
        answers = _answers(row.get("answers", []), f"row {n}")
        rows.append({"id": str(row.get("id", n)), "title": str(row.get("title") or ""), "context": row.get("context"),
                     "question": row.get("question"), "answers": answers,
                     "impossible": bool(row.get("is_impossible")) or not answers})
    return rows


def _read(path: Path):
    text = read_text(path, "SQuAD file")
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        if path.suffix.lower() == ".jsonl" or (len(lines) > 1 and lines[0].lstrip().startswith("{")
                                               and lines[0].rstrip().endswith("}")):
            return [json.loads(line) for line in lines]
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CollectionError(f"{path.name} is neither JSON nor JSON Lines (line {exc.lineno}: {exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # a number with too many digits, nesting too deep
        raise CollectionError(f"{path.name} cannot be read as JSON ({type(exc).__name__})") from None


def load_squad(path: str | Path) -> Collection:
    """Read a SQuAD-style file as a span-level :class:`Collection` (needles at exact offsets)."""
    path = Path(path)
    if not path.is_file():
        raise CollectionError(f"SQuAD file {str(path)!r} does not exist; pass a .json or .jsonl file")
    rows = squad_rows(_read(path))
    notes: list[str] = []
    docs, doc_of, shift_of, titles = [], {}, {}, {}
    for row in rows:
        context = row["context"]
        if not isinstance(context, str) or not context.strip():
            raise CollectionError(f"question {row['id']}: 'context' must be non-empty text")
        if context in doc_of:
            continue
        base = _SLUG.sub("-", row["title"]).strip("-").lower() or "context"
        titles[base] = titles.get(base, 0) + 1
        doc_id = f"{base}-{titles[base]:03d}"
        doc, shift = collection_document(doc_id, context, row["title"])
        docs.append(doc)
        doc_of[context], shift_of[context] = doc_id, shift
    corpus = Corpus(root=str(path), documents=tuple(docs), name=path.stem)
    questions, ood, seen = [], [], set()
    skipped_long = 0
    for row in rows:
        qid = _SLUG.sub("-", row["id"]).strip("-") or "q"
        if qid in seen:
            raise CollectionError(f"question id {row['id']!r} occurs twice (after making it safe: {qid!r})")
        seen.add(qid)
        if not isinstance(row["question"], str) or not row["question"].strip():
            raise CollectionError(f"question {row['id']}: 'question' must be non-empty text")
        if row["impossible"] or not row["answers"]:
            ood.append({"id": qid, "kind": "near", "query": row["question"]})
            continue
        text, start = row["answers"][0]
        if len(text) > NEEDLE_MAX:
            skipped_long += 1
            continue
        questions.append({"id": qid, "needle": text, "queries": {"question": row["question"]},
                          "doc": doc_of[row["context"]], "start": start + shift_of[row["context"]]})
    if skipped_long:
        notes.append(f"{skipped_long} answers over {NEEDLE_MAX} characters are left out")
    if ood:
        notes.append(f"{len(ood)} unanswerable questions are out-of-domain queries (kind near)")
    try:
        truth = parse_truth({"questions": questions, "ood": ood}, corpus, source=path.name)
    except TruthError as exc:
        raise CollectionError(str(exc)) from None
    return Collection(name=f"squad:{path.stem}", format="squad", level="span", corpus=corpus, truth=truth,
                      ood=truth.ood, notes=tuple(notes))
