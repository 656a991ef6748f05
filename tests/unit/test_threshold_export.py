"""``thresholds.yaml``: the cut in each consumer's units and direction, built by a pure function."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from ragdiag.analyses.threshold.choice import Goal, cut_choice
from ragdiag.analyses.gate_table import GateTable
from ragdiag.analyses.threshold.export import is_thresholds_export, thresholds_document, thresholds_yaml

MODEL = {"model": "sentence-transformers/all-MiniLM-L6-v2", "weights_sha256": "7e54b3bc" + "0" * 56, "dim": 384}

# Two questions (one phrasing each) and four out-of-domain queries; distances chosen by hand.
INPUTS = GateTable(("a", "b", "o1", "o2", "o3", "o4"), np.array([True, True, False, False, False, False]),
                    closest=np.array([0.20, 0.30, 0.45, 0.55, 0.65, 0.75]),
                    closest_holder=np.array([0.20, 0.35, np.inf, np.inf, np.inf, np.inf]), window=4)


def test_the_export_carries_the_proposed_cut_and_the_in_sample_one_only_by_name():
    # max_bluff 0.25 of 4 ood: conformal j = floor(0.25 * 5) = 1 -> the smallest ood distance, 0.45 (0 bluffs);
    # in sample 1 bluff is allowed -> the 2nd smallest, 0.55 (optimistic: a new one bluffs with chance 2/5)
    choice = cut_choice(INPUTS, Goal(max_bluff=0.25), folds=2)
    doc = yaml.safe_load(thresholds_yaml(INPUTS, choice, config="E/dense", model=MODEL))
    assert doc["cut"]["cosine_distance"] == choice.proposal.cut == choice.as_json()["proposed"]["cut"] == 0.45
    assert doc["cut"]["method"] == "conformal" and "1/5" in doc["cut"]["guarantee"]
    assert doc["rates"]["at_this_cut"]["bluffs"]["count"] == 0
    optimistic = yaml.safe_load(thresholds_yaml(INPUTS, choice, config="E/dense", model=MODEL, rule="in-sample"))
    assert optimistic["cut"]["cosine_distance"] == 0.55 and "optimistic" in optimistic["cut"]["label"]
    assert optimistic["rates"]["at_this_cut"]["bluffs"]["count"] == 1
    on_screen = yaml.safe_load(thresholds_yaml(INPUTS, choice, config="E/dense", model=MODEL, cut=0.3))
    assert on_screen["cut"]["cosine_distance"] == 0.3 and "not the proposal" in on_screen["cut"]["method"]
    # each file's rule names the method that chose its cut; the in-sample rule stays, by name, under rates
    assert doc["rule"].startswith("conformal: the 1st smallest of 4 out-of-domain distances")
    assert optimistic["rule"] == choice.rule and optimistic["rule"].startswith("the largest cut")
    assert on_screen["rule"] == "chosen by a person on screen, not by a rule"
    assert doc["rates"]["in_sample_rule"] == choice.rule and doc["rates"]["in_sample_cut"] == 0.55


def test_threshold_json_top_level_cut_is_the_proposed_one():
    js = cut_choice(INPUTS, Goal(max_bluff=0.25), folds=2).as_json()
    assert js["cut"] == js["proposed"]["cut"] == 0.45 and js["cut_method"] == "conformal"
    assert js["in_sample"]["cut"] == js["in_sample_cut"] == 0.55  # the in-sample cut, by name only


def test_cut_and_similarity_forms_keep_the_same_chunks():
    choice = cut_choice(INPUTS, Goal(max_bluff=0.25), folds=2)
    doc = yaml.safe_load(thresholds_yaml(INPUTS, choice, config="E/dense", model=MODEL, rule="in-sample"))
    cut, sim = doc["cut"]["cosine_distance"], doc["cut"]["cosine_similarity"]
    assert cut == 0.55 and sim == 0.45  # exact decimals, not 1 - 0.55 = 0.44999999999999996
    # ragdiag keeps d < cut; a similarity consumer keeps s >= sim: the same chunks except a score equal to it
    for d in INPUTS.closest:
        if not np.isclose(d, cut):
            assert (d < cut) == (1 - d >= sim)
    assert doc["rates"]["in_sample"]["bluffs"]["count"] == 1
    assert doc["rates"]["in_sample"]["answered"]["count"] == 2
    qdrant = doc["consumers"]["qdrant"]
    assert (qdrant["limit"], qdrant["score_threshold"], qdrant["keep_if"]) == (4, sim, f"score >= {sim} (inclusive)")
    assert doc["consumers"]["chroma"]["keep_if"] == "distance < 0.55"
    assert doc["model"]["weights_sha256"] == MODEL["weights_sha256"] and "invalid" in doc["valid_only_for_this_model"]


@pytest.mark.parametrize("cut", [0.545, 0.455, 0.1, 0.3, 0.524, 0.999, 0.001, 1.0])
def test_every_number_of_a_printed_cut_s_file_has_at_most_6_significant_digits(cut):
    """The file of a cut as every page prints it (3 decimals): no float noise (``0.45499999999999996``), no long
    rate (1 of 3 is ``0.333333``)."""
    import re

    choice = cut_choice(INPUTS, Goal(max_bluff=0.25), folds=2)
    text = thresholds_yaml(INPUTS, choice, config="E/dense", model=MODEL, cut=cut)
    numbers = re.findall(r"(?<![\w.])\d+\.\d+(?:e-?\d+)?", text)
    assert numbers
    long = [n for n in numbers if len(n.split("e")[0].replace(".", "").lstrip("0")) > 6]
    assert not long, long
    doc = yaml.safe_load(text)
    assert doc["cut"]["cosine_similarity"] == float(f"{1 - cut:.6f}")  # the same value, printed short


def test_no_cut_no_export_and_the_model_must_be_named():
    impossible = cut_choice(INPUTS, Goal(min_answered=1.0), folds=2)  # every answerable answered: cut 0.35+
    assert impossible.cut is not None
    ONE = GateTable(("a",), np.array([True]), np.array([0.2]), np.array([np.inf]), 4)
    none = cut_choice(ONE, Goal(min_answered=1.0), folds=2)
    assert none.cut is None
    with pytest.raises(ValueError, match="nothing to export"):
        thresholds_document(ONE, none, config="E/dense", model=MODEL)
    with pytest.raises(ValueError, match="model"):
        thresholds_document(INPUTS, impossible, config="E/dense", model={})


def test_only_an_export_is_recognised():
    choice = cut_choice(INPUTS, Goal(max_bluff=0.25), folds=2)
    assert is_thresholds_export(thresholds_yaml(INPUTS, choice, config="E/dense", model=MODEL))
    for other in ("", "a: 1\n", "- 1\n", "ragdiag_thresholds: 2\n", ":\n  - ["):
        assert not is_thresholds_export(other)
