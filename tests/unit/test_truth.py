"""Tests for ragdiag.documents.truth: the bundled ground truth, and every validation rule on a tiny corpus."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from ragdiag.documents.corpus import DEFAULT_CORPUS, Corpus, make_document
from ragdiag.documents.truth import GroundTruth, TruthError, default_truth_path, load_truth, parse_truth

# ---------------------------------------------------------------------------
# The bundled ground truth
# ---------------------------------------------------------------------------


def test_bundled_truth_counts(truth):
    assert len(truth.questions) == 32
    in_domain = [q for q in truth.queries if q.in_domain]
    ood = [q for q in truth.queries if not q.in_domain]
    assert len(in_domain) == 64
    assert len(ood) == len(truth.ood) == 30
    assert [o.kind for o in truth.ood].count("near") == 21
    assert [o.kind for o in truth.ood].count("far") == 9
    assert truth.phrasings == ("course", "ticket")
    assert [q.id for q in in_domain[:4]] == ["q01:course", "q01:ticket", "q02:course", "q02:ticket"]
    assert all(q.phrasing == "ood" and q.kind in ("near", "far") and q.question_id is None for q in ood)
    assert truth.source == "sklearn-user-guide.truth.json"


def test_bundled_needles_are_located(corpus, truth):
    for q in truth.questions:
        doc = corpus.document(q.doc_id)
        assert doc.text[q.start : q.end] == q.needle, q.id
        assert sum(d.text.count(q.needle) for d in corpus.documents) == 1, q.id
        assert q.section == (doc.section_at(q.start).title or doc.title)
        assert 40 <= len(q.needle) <= 250
    assert truth.needles()[0] == ("q01", "svm", truth.questions[0].start, truth.questions[0].end)


def test_bundled_truth_is_found_by_convention(corpus):
    assert default_truth_path(DEFAULT_CORPUS) == DEFAULT_CORPUS.parent / "sklearn-user-guide.truth.json"


def test_question_lookup(truth):
    assert truth.question("q07").id == "q07"
    with pytest.raises(KeyError, match="q99"):
        truth.question("q99")


# ---------------------------------------------------------------------------
# Validation on a tiny corpus
# ---------------------------------------------------------------------------

GARDEN = """# Garden

Tomatoes need at least six hours of direct sunlight every day.

## Watering the tomato plants in the summer heat

Water deeply twice a week rather than a little every day.
Mulch keeps the soil moist.

## Pests

Aphids are repelled by companion planting with marigolds nearby.
"""
SHED = """# Shed

Aphids are repelled by companion planting with marigolds nearby.
"""

SUN = "Tomatoes need at least six hours of direct sunlight every day."  # garden @10, 62 chars
WATER = "Water deeply twice a week rather than a little every day."  # garden @124, 57 chars
APHIDS = "Aphids are repelled by companion planting with marigolds nearby."  # garden @221 and shed @8
HEADING = "Watering the tomato plants in the summer heat"  # 45 chars, only in the heading line
ACROSS = "every day.\n\n## Watering the tomato plants"  # 41 chars, runs into the heading line
SHORT = "Mulch keeps the soil moist."  # 27 chars


@pytest.fixture(scope="module")
def garden() -> Corpus:
    return Corpus("mem", (make_document("garden", GARDEN), make_document("shed", SHED)))


def valid() -> dict:
    return {
        "questions": [
            {"id": "q1", "needle": SUN, "queries": {"course": "How much sun?", "ticket": " My tomatoes are pale. "}},
            {"id": "q2", "needle": WATER, "queries": {"course": "How often to water?"}},
        ],
        "ood": [{"id": "o1", "kind": "near", "query": "Best soil for roses?"}, {"id": "o2", "kind": "far", "query": "Visa?"}],
    }


def test_valid_truth_loads(garden):
    truth = parse_truth(valid(), garden)
    assert [(q.id, q.doc_id, q.start, q.end, q.section) for q in truth.questions] == [
        ("q1", "garden", 10, 72, "Garden"),  # before the first "## ": the document title
        ("q2", "garden", 124, 181, "Watering the tomato plants in the summer heat"),
    ]
    assert [(q.id, q.text, q.phrasing, q.question_id, q.kind) for q in truth.queries] == [
        ("q1:course", "How much sun?", "course", "q1", None),
        ("q1:ticket", "My tomatoes are pale.", "ticket", "q1", None),  # stripped
        ("q2:course", "How often to water?", "course", "q2", None),
        ("o1", "Best soil for roses?", "ood", None, "near"),
        ("o2", "Visa?", "ood", None, "far"),
    ]
    assert truth.phrasings == ("course", "ticket")


def test_ood_may_be_missing(garden):
    data = valid()
    del data["ood"]
    assert parse_truth(data, garden).ood == ()


def test_extra_keys_are_ignored(garden):
    data = valid()
    data["corpus"] = "garden"
    data["notes"] = {"anything": [1, 2]}
    data["questions"][0].update(doc="not-even-a-doc", section_position="early", doc_offset=0.1)
    data["ood"][0]["comment"] = "near miss"
    assert parse_truth(data, garden) == parse_truth(valid(), garden)


def _q(needle, qid="q9", **queries):
    return {"id": qid, "needle": needle, "queries": queries or {"course": "a question"}}


# Each case: what to do to a valid file -> the exact problem(s) reported.
PROBLEMS = {
    "needle twice": (
        lambda d: d["questions"].append(_q(APHIDS)),
        ["question q9: needle occurs 2 times, it must occur exactly once: garden @221 (Pests), shed @8 (Shed)"],
    ),
    "needle missing": (
        lambda d: d["questions"].append(_q("This sentence is nowhere in the corpus at all, not even close.")),
        ["question q9: needle not found verbatim in the corpus: "
         "'This sentence is nowhere in the corpus at all, not even close.'"],
    ),
    "needle is a heading's text": (
        lambda d: d["questions"].append(_q(HEADING)),
        ["question q9: needle is the text of the heading '## Watering the tomato plants in the summer heat'; "
         "a needle must not be a heading"],
    ),
    "needle overlaps a heading line": (
        lambda d: d["questions"].append(_q(ACROSS)),
        ["question q9: needle overlaps the heading line '## Watering the tomato plants in the summer heat'; "
         "a needle must not be a heading"],
    ),
    "needle too short": (
        lambda d: d["questions"].append(_q(SHORT)),
        ["question q9: needle is 27 characters; it must be 40 to 250 "
         "(a short verbatim sentence that answers the question)"],
    ),
    "needle too long": (
        lambda d: d["questions"].append(_q(SUN + " " + "x" * 188)),  # 62 + 1 + 188 = 251
        ["question q9: needle is 251 characters; it must be 40 to 250 "
         "(a short verbatim sentence that answers the question)",
         "question q9: needle not found verbatim in the corpus: " + repr((SUN + " " + "x" * 188)[:80])],
    ),
    "needle not a string": (
        lambda d: d["questions"].append(_q(42)),
        ["question q9: 'needle' must be a string"],
    ),
    "duplicate question id": (
        lambda d: d["questions"].append(_q(WATER, qid="q1")),
        ["question q1: duplicate id"],
    ),
    "ood id repeats a question id": (
        lambda d: d["ood"].append({"id": "q2", "kind": "far", "query": "x"}),
        ["ood q2: duplicate id"],
    ),
    "ood id with a colon": (
        lambda d: d["ood"].append({"id": "o:3", "kind": "far", "query": "x"}),
        ["ood o:3: ids must not contain ':'"],
    ),
    "empty query": (
        lambda d: d["questions"][0]["queries"].update(ticket="   "),
        ["question q1: query 'ticket' is empty"],
    ),
    "no queries": (
        lambda d: d["questions"][0].update(queries={}),
        ['question q1: \'queries\' must be an object like {"course": "...", "ticket": "..."}'],
    ),
    "bad phrasing name": (
        lambda d: d["questions"][0]["queries"].update(Ticket2="x", ood="y"),
        ["question q1: phrasing name 'Ticket2' must be lowercase letters (not 'ood')",
         "question q1: phrasing name 'ood' must be lowercase letters (not 'ood')"],
    ),
    "missing question id": (
        lambda d: d["questions"][1].pop("id"),
        ["question #2: 'id' must be a non-empty string"],
    ),
    "question not an object": (
        lambda d: d["questions"].append("q3"),
        ["question #3: must be an object with id, needle and queries"],
    ),
    "bad ood kind": (
        lambda d: d["ood"][0].update(kind="medium"),
        ["ood o1: kind must be 'near' or 'far', got 'medium'"],
    ),
    "empty ood query": (
        lambda d: d["ood"][1].update(query=""),
        ["ood o2: query is empty"],
    ),
    "ood without id": (
        lambda d: d["ood"][1].pop("id"),
        ["ood #2: 'id' must be a non-empty string"],
    ),
}


@pytest.mark.parametrize(("mutate", "problems"), PROBLEMS.values(), ids=PROBLEMS.keys())
def test_each_rule_names_the_question_and_the_rule(garden, mutate, problems):
    data = copy.deepcopy(valid())
    mutate(data)
    with pytest.raises(TruthError) as info:
        parse_truth(data, garden, source="garden.truth.json")
    assert info.value.problems == problems
    assert str(info.value).startswith(f"ground truth garden.truth.json has {len(problems)} problem(s):\n  - ")


def test_every_problem_is_reported_at_once(garden):
    data = valid()
    data["questions"] += [_q(APHIDS, "q3"), _q(HEADING, "q4"), _q(SHORT, "q5")]
    data["questions"][0]["queries"]["course"] = ""
    data["ood"][0]["kind"] = "close"
    with pytest.raises(TruthError) as info:
        parse_truth(data, garden)
    assert [p.split(":")[0] for p in info.value.problems] == [
        "question q1",
        "question q3",
        "question q4",
        "question q5",
        "ood o1",
    ]
    assert "has 5 problem(s)" in str(info.value)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([], "top level must be an object with 'questions' and 'ood' lists"),
        ({"ood": []}, "'questions' must be a non-empty list"),
        ({"questions": []}, "'questions' must be a non-empty list"),
        ({"questions": [_q(SUN)], "ood": {}}, "'ood' must be a list (it may be empty)"),
    ],
)
def test_shape_errors(garden, data, problem):
    with pytest.raises(TruthError) as info:
        parse_truth(data, garden)
    assert info.value.problems == [problem]


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------


def test_json_file_loads(tmp_path, garden):
    path = tmp_path / "garden.truth.json"
    path.write_text(json.dumps(valid()), encoding="utf-8")
    truth = load_truth(path, garden)
    assert isinstance(truth, GroundTruth)
    assert truth.source == "garden.truth.json"
    assert truth == parse_truth(valid(), garden, source="garden.truth.json")


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_yaml_with_the_same_shape_loads(tmp_path, garden, suffix):
    path = tmp_path / f"garden.truth{suffix}"
    path.write_text(yaml.safe_dump(valid(), allow_unicode=True), encoding="utf-8")
    truth = load_truth(path, garden)
    assert truth.questions == parse_truth(valid(), garden).questions
    assert truth.ood == parse_truth(valid(), garden).ood


def test_invalid_json_names_the_line(tmp_path, garden):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "questions": [\n    oops\n  ]\n}\n', encoding="utf-8")
    with pytest.raises(TruthError) as info:
        load_truth(path, garden)
    assert info.value.problems == ["invalid JSON at line 3, column 5: Expecting value"]


def test_invalid_yaml(tmp_path, garden):
    path = tmp_path / "bad.yaml"
    path.write_text("questions: [\n  - oops\n", encoding="utf-8")
    with pytest.raises(TruthError) as info:
        load_truth(path, garden)
    assert info.value.problems[0].startswith("invalid YAML at line 2")
    assert "oops" not in info.value.problems[0]  # the file's lines are not echoed


def test_missing_file(tmp_path, garden):
    with pytest.raises(TruthError, match="file not found"):
        load_truth(tmp_path / "nope.json", garden)


def test_not_utf8_file(tmp_path, garden):
    path = tmp_path / "latin.json"
    path.write_bytes('{"questions": "café"}'.encode("latin-1"))
    with pytest.raises(TruthError, match="cannot read it as UTF-8 text"):
        load_truth(path, garden)


def test_validation_errors_come_through_load(tmp_path, garden):
    data = valid()
    data["questions"].append(_q(APHIDS))
    path = tmp_path / "garden.truth.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TruthError, match=r"(?s)garden\.truth\.json has 1 problem.*q9: needle occurs 2 times"):
        load_truth(path, garden)


@pytest.mark.parametrize(
    ("present", "expected"),
    [
        ([], "docs.truth.json"),
        (["docs.truth.yaml"], "docs.truth.yaml"),
        (["docs.truth.yml"], "docs.truth.yml"),
        (["docs.truth.json", "docs.truth.yaml"], "docs.truth.json"),
    ],
)
def test_default_truth_path(tmp_path, present, expected):
    (tmp_path / "docs").mkdir()
    for name in present:
        (tmp_path / name).write_text("{}")
    assert default_truth_path(tmp_path / "docs") == tmp_path / expected
