"""Example collections made from the bundled corpus, one per format, to try ``--collection`` without data.

``python -m ragdiag.documents.collections.examples OUT`` writes:

- ``OUT/beir-sklearn/``: a BEIR folder. Each ``## `` section of the bundled
  scikit-learn user guide is one document (``<page>-<nn>``, titled
  ``Page > Section``); the queries are the ground truth's ``course``
  phrasings, each with ``metadata.tags`` = where its answer sits in the page
  (``early``, ``mid``, ``late``); ``qrels/test.tsv`` has three grades: 2 for the
  section holding the answer, 1 for the sections just before and after it,
  0 (judged not relevant) for the page's first section.
- ``OUT/trec-sklearn/``: the same documents and judgments as TREC files
  (``documents.jsonl``, ``qrels.txt``, ``topics.txt`` in ``<top>`` SGML with the
  ``ticket`` phrasings).
- ``OUT/squad-sklearn.json``: SQuAD 2.0 JSON: each question's context is the
  section holding its needle, its answer the needle at its offset; six
  off-topic queries are unanswerable questions.

The same inputs always give the same files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["make_examples", "beir_records"]


def _sections(corpus):
    """``[(doc, section, id, title, text, start)]`` of every section with text: the text after its heading line
    (the page's ``# `` title line too), ``doc.text[start:start + len(text)]``."""
    out = []
    for doc in corpus.documents:
        n = 0
        for s in doc.sections:
            start = s.heading_end
            if not s.title and doc.text.startswith("# ", start):  # the page title line: the title says it
                start = doc.text.find("\n", start) + 1 or s.end
            raw = doc.text[start:s.end]
            start += len(raw) - len(raw.lstrip("\n"))
            text = doc.text[start:s.end].rstrip()
            if not text.strip():
                continue
            n += 1
            out.append((doc, s, f"{doc.id}-{n:02d}", doc.header(s), text, start))
    return out


def beir_records(corpus, truth, positions: dict[str, str]):
    """``(corpus rows, query rows, qrels {qid: {doc: grade}})`` of the BEIR example.

    ``positions``: question id -> where its answer sits in the page (its tag).
    """
    sections = _sections(corpus)
    rows = [{"_id": sid, "title": title, "text": text} for _, _, sid, title, text, _ in sections]
    by_doc: dict[str, list] = {}
    for doc, _, sid, _, text, start in sections:
        by_doc.setdefault(doc.id, []).append(((start, start + len(text)), sid))
    queries, qrels = [], {}
    for q in truth.questions:
        secs = by_doc[q.doc_id]
        at = next(i for i, ((a, b), _) in enumerate(secs) if a <= q.start < b)
        judged = {secs[at][1]: 2}
        for j in (at - 1, at + 1):
            if 0 <= j < len(secs):
                judged.setdefault(secs[j][1], 1)
        judged.setdefault(secs[0][1], 0)
        qrels[q.id] = judged
        tags = [positions[q.id]] if positions.get(q.id) else []
        queries.append({"_id": q.id, "text": dict(q.queries)["course"], "metadata": {"tags": tags}})
    return rows, queries, qrels


def _jsonl(path: Path, rows) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def make_examples(out: str | Path, corpus=None, truth=None) -> list[Path]:
    """Write the three example collections under ``out`` (default inputs: the bundled corpus and truth)."""
    from ..corpus import DEFAULT_CORPUS, load_corpus
    from ..truth import default_truth_path, load_truth

    corpus = corpus or load_corpus(DEFAULT_CORPUS)
    truth_path = default_truth_path(corpus.root)
    truth = truth or load_truth(truth_path, corpus)
    raw = json.loads(truth_path.read_text(encoding="utf-8")) if truth_path.is_file() else {}
    positions = {q.get("id"): q.get("section_position") for q in raw.get("questions", []) if isinstance(q, dict)}
    out = Path(out)
    rows, queries, qrels = beir_records(corpus, truth, positions)
    beir = out / "beir-sklearn"
    (beir / "qrels").mkdir(parents=True, exist_ok=True)
    _jsonl(beir / "corpus.jsonl", rows)
    _jsonl(beir / "queries.jsonl", queries)
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, j in qrels.items() for d, g in j.items()),
        encoding="utf-8")

    trec = out / "trec-sklearn"
    trec.mkdir(parents=True, exist_ok=True)
    _jsonl(trec / "documents.jsonl", [{"id": r["_id"], "title": r["title"], "text": r["text"]} for r in rows])
    (trec / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, j in qrels.items() for d, g in j.items()),
                                    encoding="utf-8")
    (trec / "topics.txt").write_text("".join(
        f"<top>\n<num> Number: {q.id}\n<title> {dict(q.queries)['ticket']}\n</top>\n\n" for q in truth.questions),
        encoding="utf-8")

    articles: dict[str, dict] = {}
    sections = _sections(corpus)
    for q in truth.questions:
        doc, _, sid, _, text, start = next(x for x in sections
                                           if x[0].id == q.doc_id and x[5] <= q.start and q.end <= x[5] + len(x[4]))
        offset = q.start - start
        article = articles.setdefault(doc.title, {"title": doc.title, "paragraphs": {}})
        paragraph = article["paragraphs"].setdefault(sid, {"context": text, "qas": []})
        paragraph["qas"].append({"id": q.id, "question": dict(q.queries)["course"],
                                 "answers": [{"text": q.needle, "answer_start": offset}], "is_impossible": False})
    first = next(iter(articles.values()))
    first_paragraph = next(iter(first["paragraphs"].values()))
    for o in truth.ood[:6]:
        first_paragraph["qas"].append({"id": o.id, "question": o.query, "answers": [], "is_impossible": True})
    data = {"version": "v2.0", "data": [{"title": a["title"], "paragraphs": list(a["paragraphs"].values())}
                                         for a in articles.values()]}
    squad = out / "squad-sklearn.json"
    squad.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return [beir, trec, squad]


if __name__ == "__main__":  # pragma: no cover - a command, run by tests through make_examples
    if len(sys.argv) != 2:
        sys.exit("usage: python -m ragdiag.documents.collections.examples OUT_FOLDER")
    for path in make_examples(sys.argv[1]):
        print(f"wrote {path}")
