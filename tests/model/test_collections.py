"""Collections in the formats people have (BEIR, TREC, SQuAD-style, ragdiag's own) and their measures.

The measures of every format are checked against pytrec_eval (and ranx, slow) on the exported run and qrels,
for a dense and a BM25 configuration. The encoder here is the FAKE bag-of-words one (plumbing: the
agreement holds for any ranking); ``test_beir_agrees_with_the_real_model`` repeats it with all-MiniLM-L6-v2.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdiag.documents.collections import (CollectionError, load_native, open_collection, read_trec_qrels,
                                           write_collection, write_trec_qrels, write_trec_run)
from ragdiag.documents.collections.examples import make_examples
from ragdiag.documents.truth import TruthError, parse_truth
from ragdiag.evaluation.collection import DESTROYED_ITEM, evaluate_collection

from fakes import FakeEncoder
from ranx_plain import ranx_evaluate

SPECS = {"beir": "beir:{}/beir-sklearn", "trec": "trec:{}/trec-sklearn", "squad": "squad:{}/squad-sklearn.json"}


@pytest.fixture(scope="module")
def examples(tmp_path_factory, corpus, truth):
    out = tmp_path_factory.mktemp("collections")
    make_examples(out, corpus, truth)
    return out


@pytest.fixture(scope="module")
def runs(examples):
    """Every example collection evaluated with strategies A and E, dense and BM25 (FAKE encoder)."""
    enc = FakeEncoder()
    return {name: evaluate_collection(open_collection(spec.format(examples)), encoder=enc, strategies="A,E",
                                      retrievers="dense,bm25") for name, spec in SPECS.items()}


# --------------------------------------------------------------------------- loading


def test_beir_folder_reads_documents_graded_qrels_and_tags(examples):
    c = open_collection(f"beir:{examples}/beir-sklearn")
    assert (c.level, c.format, c.n_questions) == ("document", "beir", 32)
    q01 = c.topics[0]
    # q01's needle sits in the svm page's first section (grade 2), the next section is its neighbour (grade 1)
    assert q01.judgments == {"svm-01": 2, "svm-02": 1}
    assert {g for t in c.topics for g in t.judgments.values()} == {0, 1, 2}
    assert q01.tags == ("early",)
    doc = c.corpus.document("svm-02")
    assert doc.title == "Support Vector Machines > Classification" and doc.text.startswith("# Support Vector")


def test_trec_folder_reads_sgml_topics_and_the_same_judgments(examples):
    beir, trec = open_collection(f"beir:{examples}/beir-sklearn"), open_collection(f"trec:{examples}/trec-sklearn")
    assert [t.judgments for t in trec.topics] == [t.judgments for t in beir.topics]
    assert trec.topics[0].text.startswith("Turning on probability output")  # the ticket phrasing, from <title>
    assert [d.text for d in trec.corpus.documents] == [d.text for d in beir.corpus.documents]


def test_trec_tsv_topics_and_a_documents_folder(tmp_path):
    (tmp_path / "documents").mkdir()
    (tmp_path / "documents" / "d1.md").write_text("# Bees\n\nBees make honey from nectar.\n")
    (tmp_path / "documents" / "d2.md").write_text("# Ants\n\nAnts farm aphids for honeydew.\n")
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d2 3\n3 0 d1 0\n")
    (tmp_path / "topics.tsv").write_text("1\twho makes honey\n2\twhat do ants farm\n3\tnothing relevant\n")
    c = open_collection(f"trec:{tmp_path}")
    assert [(t.id, dict(t.judgments)) for t in c.topics] == [("1", {"d1": 1, "d2": 0}), ("2", {"d2": 3})]
    assert c.notes == ("1 queries have no relevant document in these judgments and are left out",)


def test_squad_answers_become_needles_at_their_offsets(examples):
    c = open_collection(f"squad:{examples}/squad-sklearn.json")
    assert c.level == "span" and len(c.truth.questions) == 32
    for q in c.truth.questions:
        assert c.corpus.document(q.doc_id).text[q.start:q.end] == q.needle
    assert [o.kind for o in c.truth.ood] == ["near"] * 6  # SQuAD 2.0's unanswerable questions


def test_squad_short_answer_repeated_in_its_context_is_found_at_its_offset(tmp_path):
    context = "The cat sat. The cat ran away from the dog."
    rows = [{"id": "a", "title": "Cats", "context": context, "question": "what ran?",
             "answers": {"text": ["cat"], "answer_start": [17]}}]
    (tmp_path / "s.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    q = open_collection(f"squad:{tmp_path}/s.jsonl").truth.questions[0]
    assert (q.needle, q.start) == ("cat", len("# Cats\n\n") + 17)  # the second "cat", not the first


@pytest.mark.parametrize("spec, message", [
    ("beir", "bad collection"),
    ("beir:/no/such/folder", "does not exist"),
    ("squad:/no/such.json", "does not exist"),
    ("trec:{tmp}", "no documents"),
])
def test_bad_specs_say_what_to_do(tmp_path, spec, message):
    with pytest.raises(CollectionError, match=message):
        open_collection(spec.format(tmp=tmp_path))


def test_beir_unknown_split_and_unknown_documents(examples, tmp_path):
    with pytest.raises(CollectionError, match="no qrels/dev.tsv.*splits there: test"):
        open_collection(f"beir:{examples}/beir-sklearn", split="dev")
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(examples / "beir-sklearn", copy)
    with open(copy / "qrels" / "test.tsv", "a") as f:
        f.write("q01\tno-such-doc\t1\n")
    with pytest.raises(CollectionError, match="not in the corpus.*no-such-doc"):
        open_collection(f"beir:{copy}")


def test_ood_file_adds_off_topic_queries(examples, tmp_path):
    (tmp_path / "ood.json").write_text(json.dumps([{"id": "o1", "kind": "far", "query": "best pizza in town",
                                                    "tags": ["food"]}]))
    c = open_collection(f"beir:{examples}/beir-sklearn", ood=tmp_path / "ood.json")
    assert [(o.id, o.tags) for o in c.ood] == [("o1", ("food",))]
    (tmp_path / "clash.json").write_text(json.dumps([{"id": "q01", "kind": "far", "query": "x"}]))
    with pytest.raises(CollectionError, match="already used.*q01"):
        open_collection(f"beir:{examples}/beir-sklearn", ood=tmp_path / "clash.json")


# --------------------------------------------------------------------------- the truth's new keys


def test_truth_tags_are_read_and_checked(tiny_corpus):
    from tiny import TINY_TRUTH

    data = json.loads(json.dumps(TINY_TRUTH))
    data["questions"][0]["tags"] = ["multi-hop", "multi-hop", " billing "]
    data["ood"][0]["tags"] = ["zoo"]
    t = parse_truth(data, tiny_corpus)
    assert t.questions[0].tags == ("multi-hop", "billing")
    assert t.queries[0].tags == ("multi-hop", "billing") and t.ood[0].tags == ("zoo",)
    data["questions"][1]["tags"] = "multi-hop"
    with pytest.raises(TruthError, match="'tags' must be a list"):
        parse_truth(data, tiny_corpus)


def test_existing_truth_files_read_as_before(corpus, truth):
    # the bundled file carries a "doc" note on every question: it stays a note, not a location
    assert len(truth.questions) == 32 and all(q.tags == () for q in truth.questions)


def test_a_located_needle_must_be_at_its_offset(tiny_corpus):
    doc = tiny_corpus.documents[0]
    word = doc.text.split()[-1]  # a word of the last paragraph (not a heading)
    at = doc.text.rindex(word)
    data = {"questions": [{"id": "q1", "needle": word, "queries": {"course": "x"}, "doc": doc.id, "start": at}]}
    assert parse_truth(data, tiny_corpus).questions[0].start == at
    data["questions"][0]["start"] = at + 1
    with pytest.raises(TruthError, match="not at"):
        parse_truth(data, tiny_corpus)


def test_a_document_level_truth_names_the_way_to_open_it(tiny_corpus):
    with pytest.raises(TruthError, match="--collection ragdiag:"):
        parse_truth({"level": "document", "questions": []}, tiny_corpus)


# --------------------------------------------------------------------------- convert: ragdiag's own form


@pytest.mark.parametrize("name", ["beir", "trec", "squad"])
def test_convert_round_trips(examples, tmp_path, name):
    c = open_collection(SPECS[name].format(examples))
    folder, truth_path = write_collection(c, tmp_path / "out")
    back = load_native(folder)
    assert back.level == c.level
    assert {d.id: d.text for d in back.corpus.documents} == {d.id: d.text for d in c.corpus.documents}
    if c.document_level:
        assert [(t.id, t.text, dict(t.judgments), t.tags) for t in back.topics] == \
               [(t.id, t.text, dict(t.judgments), t.tags) for t in c.topics]
    else:
        assert [(q.id, q.needle, q.start, q.end) for q in back.truth.questions] == \
               [(q.id, q.needle, q.start, q.end) for q in c.truth.questions]
    with pytest.raises(CollectionError, match="not an empty folder"):
        write_collection(c, folder)


def test_trec_files_round_trip(tmp_path):
    qrels = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    assert read_trec_qrels(write_trec_qrels(tmp_path / "qrels.txt", qrels)) == qrels
    lines = write_trec_run(tmp_path / "run.txt", {"q1": ["d2", "d1"]}).read_text().splitlines()
    assert lines == ["q1 Q0 d2 1 2 ragdiag", "q1 Q0 d1 2 1 ragdiag"]
    with pytest.raises(ValueError, match="whitespace"):
        write_trec_run(tmp_path / "bad.run", {"q1": ["my doc"]})


# --------------------------------------------------------------------------- agreement with trec tools


def _pytrec(jr, cfg, k=10):
    import pytrec_eval

    run, qrels = jr.trec(cfg)
    got = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}", f"map_cut.{k}", f"recall.{k}"}).evaluate(run)
    return {m: np.array([got[q][f"{name}_{k}"] for q in jr.questions])
            for m, name in (("ndcg", "ndcg_cut"), ("map", "map_cut"), ("recall", "recall"))}


@pytest.mark.parametrize("name", list(SPECS))
def test_every_format_agrees_with_pytrec_eval(runs, name):
    jr = runs[name]
    assert {c.label for c in jr.configs} == {"A/dense", "A/bm25", "E/dense", "E/bm25"}
    for cfg in jr.configs:
        expected = _pytrec(jr, cfg)
        for measure, values in expected.items():
            np.testing.assert_allclose(jr.values(cfg, measure, k=10), values, rtol=0, atol=1e-9)
        assert 0 < jr.values(cfg, "ndcg", k=10).mean() < 1  # not a degenerate ranking


def test_document_rankings_rank_each_document_once_at_its_best_chunk(runs):
    jr = runs["beir"]
    for cfg in jr.configs:
        for ranked in jr.ranked[cfg]:
            assert len(ranked) == len(set(ranked))


@pytest.fixture(scope="module")
def ranx_scored(runs):
    """ranx's ndcg, map and recall at 10 of every format's every configuration, ``{format: [one per config]}``:
    one child process for the three formats (each child imports ranx and numba anew)."""
    pytest.importorskip("ranx")
    pairs, names = [], []
    for name in SPECS:
        jr = runs[name]
        for cfg in jr.configs:
            run, qrels = jr.trec(cfg)
            pairs.append((qrels, {q: d or {"nothing-retrieved": 0.0} for q, d in run.items()}))
            names.append(name)
    scored = ranx_evaluate(pairs, ["ndcg@10", "map@10", "recall@10"], mean=False)
    return {name: [got for n, got in zip(names, scored) if n == name] for name in SPECS}


@pytest.mark.slow  # ranx in a child process (its JIT off, one for the three formats): about two seconds
@pytest.mark.parametrize("name", list(SPECS))
def test_every_format_agrees_with_ranx(runs, ranx_scored, name):
    pytest.importorskip("ranx")
    jr = runs[name]
    scored = ranx_scored[name]
    assert len(scored) == len(jr.configs)
    for cfg, got in zip(jr.configs, scored):
        order = sorted(range(len(jr.questions)), key=lambda i: jr.questions[i])  # ranx sorts query ids
        for measure, name_ in (("ndcg", "ndcg@10"), ("map", "map@10"), ("recall", "recall@10")):
            np.testing.assert_allclose(jr.values(cfg, measure, k=10)[order], got[name_], rtol=0, atol=1e-9)


def test_squad_destroyed_needles_match_a_brute_force_count(runs):
    jr = runs["squad"]
    ev = jr.evaluation
    for name, index in ev.indexes.items():
        brute = sorted(q.id for q in ev.truth.questions
                       if not any(c.doc_id == q.doc_id and c.start <= q.start and q.end <= c.end for c in index.chunks))
        assert sorted(d.question_id for d in index.report.destroyed) == brute
        assert sorted(q for q, j in zip(jr.groups, jr.judgments[next(c for c in jr.configs if c.strategy == name)])
                      if list(j) == [q + DESTROYED_ITEM]) == brute
    # blind 512-character cuts (A) destroy more of these sentence-long answers than paragraph cuts (E)
    assert len(ev.indexes["A"].report.destroyed) > len(ev.indexes["E"].report.destroyed)


@pytest.mark.model
def test_beir_agrees_with_the_real_model(examples, encoder):
    jr = evaluate_collection(open_collection(f"beir:{examples}/beir-sklearn"), encoder=encoder, strategies="E",
                             retrievers="dense,bm25")
    for cfg in jr.configs:
        for measure, values in _pytrec(jr, cfg).items():
            np.testing.assert_allclose(jr.values(cfg, measure, k=10), values, rtol=0, atol=1e-9)


def test_irds_never_downloads_and_says_how_to_fetch(tmp_path, monkeypatch):
    pytest.importorskip("ir_datasets")
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds"))
    with pytest.raises(CollectionError, match="not in the local cache.*never downloads.*IR_DATASETS_HOME"):
        open_collection("irds:beir/scifact/test")
    with pytest.raises(CollectionError, match="knows no collection"):
        open_collection("irds:no-such-collection")


def test_the_best_at_ndcg_against_the_others_one_family(runs):
    from ragdiag.analyses.measures import compare_with_best, measure_rows

    jr = runs["beir"]
    comps = compare_with_best(jr, k=10)
    rows = measure_rows(jr, k=10)
    assert {c.best for c in comps} == {rows[0].config} and [c.other for c in comps] == [r.config for r in rows[1:]]
    for c in comps:
        assert c.family == len(rows) - 1
        mean = dict((r.config, r.cell("ndcg").interval.estimate) for r in rows)
        assert c.estimate == pytest.approx(mean[c.best] - mean[c.other], abs=1e-8)  # max_t works in integer units
        assert c.tied == (c.low <= 0 <= c.high)
        assert ("statistically tied" in c.sentence()) == c.tied


def test_descriptive_differences_are_other_minus_best(runs):
    from ragdiag.analyses.measures import descriptive_differences

    jr = runs["beir"]
    words = descriptive_differences(jr, "E/bm25", "E/dense", k=10, measures=("map",))
    d = jr.values("E/dense", "map", k=10).mean() - jr.values("E/bm25", "map", k=10).mean()
    assert words.startswith(f"MAP@10 {d:+.2f}".replace("-", "−"))
