"""``truth draft``: question drafts by rules per language, never a bad one, each with its leakage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiag.authoring.drafts import document_language, draft_question, draft_suggestions
from ragdiag.authoring.leakage import leakage
from ragdiag.documents.corpus import load_corpus

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize("sentence, language, question, rule", [
    ("The `Lasso` is a linear model that estimates sparse coefficients.", "en", "What is the `Lasso`?", "definition"),
    ("Naive Bayes methods are a set of supervised learning algorithms.", "en", "What are Naive Bayes methods?",
     "definition"),
    ("Shrinkage is a form of regularization used to improve the estimation.", "en", "What is shrinkage?",
     "definition"),
    ("The default value of `max_features=1.0` is equivalent to bagged trees.", "en",
     "What is the default value of `max_features`?", "attribute"),
    ("Whether the model uses an intercept is controlled by the parameter `fit_intercept`.", "en",
     "What does the parameter `fit_intercept` control?", "controlled-by"),
    ("Note that **early-stopping is enabled by default if the number of samples is large**.", "en",
     "Is early-stopping enabled by default?", "by-default"),
    ("NNDSVD [4] is based on two SVD processes.", "en", "What is NNDSVD based on?", "based-on"),
    ("Huber (`'huber'`): Another robust loss function.", "en", "What is Huber (`'huber'`)?", "list-term"),
    ("`GradientBoostingRegressor` supports a number of different loss functions.", "en",
     "What does `GradientBoostingRegressor` support?", "verb-object"),
    ("Sauerteig ist eine Mischung aus Mehl und Wasser.", "de", "Was ist Sauerteig?", "definition"),
    ("Der Rahmen wird mit milder Seifenlauge gewaschen, niemals mit einem Hochdruckreiniger.", "de",
     "Wie wird der Rahmen gewaschen?", "passive"),
    ("Joghurtbecher müssen nicht ausgespült werden, es reicht, wenn sie löffelrein sind.", "de",
     "Müssen Joghurtbecher ausgespült werden?", "modal-passive"),
    ("Alle tausend Kilometer sollte die Längung der Kette mit einer Kettenlehre gemessen werden.", "de",
     "Wann sollte die Längung der Kette gemessen werden?", "modal-passive"),
    ("In die gelbe Tonne gehören Verpackungen aus Kunststoff.", "de", "Was gehört in die gelbe Tonne?", "belongs"),
])
def test_rules(sentence, language, question, rule):
    assert draft_question(sentence, language) == (question, rule)


@pytest.mark.parametrize("sentence, language", [
    ("It is a linear model that estimates sparse coefficients.", "en"),  # a pronoun: not self-contained
    ("For a worked-out comparison, see the example below.", "en"),  # no rule
    ("Kernel methods like support vector machines rely on a property of kernels.", "en"),  # 'like' is no verb
    ("Der Rahmen wird mit milder Seifenlauge gewaschen.", "fr"),  # a language without rules
    ("Ein sauberes Fahrrad hält länger und schaltet präziser.", "de"),  # no rule
])
def test_no_rule_no_draft(sentence, language):
    assert draft_question(sentence, language) is None


def test_a_generic_subject_gets_no_definition(corpus):
    from ragdiag.authoring.drafts import specificity

    specific = specificity(corpus)
    assert draft_question("The output is the class with the highest probability.", "en", specific) is None
    assert draft_question("Shrinkage is a form of regularization.", "en", specific) == ("What is shrinkage?",
                                                                                        "definition")


@pytest.mark.parametrize("name, language", [("sklearn-user-guide", "en"), ("de-haushalt", "de")])
def test_most_suggestions_get_a_draft_with_its_leakage(name, language):
    corpus = load_corpus(DATA / name)
    assert {document_language(d) for d in corpus.documents} == {language}
    res = draft_suggestions(corpus)
    total = len(res.drafts) + len(res.undrafted)
    assert total >= 15 and res.share >= 0.6, res.text()
    for d in res.drafts:
        assert d.language == language and d.question.endswith("?")
        assert d.leakage == leakage(d.question, d.needle)
    text = res.text()
    for d in res.drafts:  # every draft is shown with its leakage
        assert f"  draft:   {d.question}\n  needle:  {d.needle}\n  leakage: {d.leakage}" in text


def test_cli_json(capsys):
    from ragdiag.cli.parser import main

    assert main(["truth", "draft", "--corpus", str(DATA / "de-haushalt"), "-n", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["suggestions"] == out["drafted"] + len(out["undrafted"])
    assert all(d["source"] == "draft" and 0 <= d["leakage"]["share"] <= 1 for d in out["drafts"])


def test_cli_bad_n(capsys):
    from ragdiag.cli.parser import main

    assert main(["truth", "draft", "-n", "0"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: -n must be at least 1")


def test_truth_keeps_the_source_of_an_entry(corpus, truth):
    from ragdiag.documents.truth import TruthError, parse_truth

    q = truth.questions[0]
    data = {"questions": [{"id": "d1", "needle": q.needle, "queries": {"course": "Why?"}, "source": "draft"},
                          {"id": "d2", "needle": truth.questions[1].needle, "queries": {"course": "How?"}}],
            "ood": [{"id": "o1", "kind": "near", "query": "What is `pedal_torque`?", "source": "near-miss"}]}
    got = parse_truth(data, corpus)
    assert [x.source for x in got.questions] == ["draft", ""]
    assert got.ood[0].source == "near-miss"
    data["questions"][0]["source"] = "Draft!"
    with pytest.raises(TruthError, match="question d1: 'source' must be a lowercase word"):
        parse_truth(data, corpus)


def test_an_accepted_draft_meets_the_leakage_check(corpus):
    from ragdiag.authoring.checks import check_truth
    from ragdiag.authoring.review import accept

    res = draft_suggestions(corpus)
    high = next(d for d in res.drafts if d.leakage.warn)  # e.g. the default value of `max_features`: 4 of 4 words
    data, qid = accept({"questions": [], "ood": []}, high, high.question, "course")
    mine = [p for p in check_truth(data, corpus) if p.item == f"question {qid}"]
    assert any("leakage" in p.message and p.severity == "warning" for p in mine)
    assert any("still the suggested draft" in p.message for p in mine)  # accepted as drafted: rewrite it
    edited, qid2 = accept(data, res.drafts[1], "how do I pick this thing", "course")
    assert not [p for p in check_truth(edited, corpus) if p.item == f"question {qid2}"]
