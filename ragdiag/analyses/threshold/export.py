"""The chosen cut, exported for the stack it goes into: ``thresholds.yaml`` in each consumer's units and direction.

ragdiag's gate keeps at most ``keep`` chunks whose cosine distance to the
query is **strictly below** the cut (strictly under it). Vector stores and frameworks
spell the same rule differently:

* cosine distance (``1 - cosine similarity``): Chroma in cosine space
  (``{"hnsw:space": "cosine"}``; its ``query`` returns distances and takes no
  threshold: keep a result when ``distance < max_distance``, the exported cut),
  pgvector's ``<=>`` operator (``WHERE embedding <=> :query < :max_distance``,
  the cut bound as a query parameter). Same units, same strict direction.
* cosine similarity (``1 - distance``): Qdrant ``score_threshold`` on a
  ``Cosine`` collection, LlamaIndex ``SimilarityPostprocessor(similarity_cutoff=...)``,
  LangChain ``search_type="similarity_score_threshold"`` with
  ``search_kwargs={"score_threshold": ...}``. They keep a result whose score is
  **at least** the threshold (LlamaIndex drops a node whose score is under its
  ``similarity_cutoff``;
  LangChain keeps ``similarity >= score_threshold``; Qdrant returns scores equal
  to the threshold), so the same cut is ``similarity > 1 - cut`` here and
  ``similarity >= 1 - cut`` there: they differ only for a score equal to the
  threshold in every digit. LangChain's score is the store's *relevance* score:
  it equals cosine similarity only where the store maps cosine distance ``d``
  to ``1 - d`` (its default cosine relevance function); some stores rescale it.

A cut belongs to one embedding model: distances of another model (or another
precision of the same one) are on another scale, and the cut means nothing
there. The export names the model and its weights hash for that reason.

:func:`thresholds_yaml` is a pure function (the CLI writes its text; the
dashboard can offer it as a download); :func:`is_thresholds_export` tells an
earlier export from any other file, which is never overwritten.
"""

from __future__ import annotations

from typing import Mapping

from ...core.gate import check_cut
from ...core.words import outcome_sentence
from ..gate_table import GateTable
from .choice import CONFORMAL_PREMISE, IN_SAMPLE, PROPOSED, CutChoice
from .gate import GATE_DISTANCE
from .rates import rate_rows

__all__ = ["EXPORT_KEY", "EXPORT_FORMAT", "EXPORT_RULES", "export_cut", "thresholds_document", "thresholds_yaml",
           "is_thresholds_export"]

#: The top-level key that marks a ragdiag thresholds export (and its format version).
EXPORT_KEY = "ragdiag_thresholds"
#: The format version written under :data:`EXPORT_KEY`.
EXPORT_FORMAT = 1

_HEADER = ("# ragdiag thresholds export: the abstention cut chosen for one configuration, in each consumer's units.\n"
           "# Valid only for the embedding model named below. Regenerate with `python -m ragdiag threshold CONFIG "
           "--max-bluff A --export FILE`.\n"
           f"# A conformal cut's guarantee: {CONFORMAL_PREMISE}.\n")


def _num(x: float | None, digits: int = 6) -> float | None:
    """A rate or an informative cut as the file prints it: at most ``digits`` significant digits (``0.0333333``,
    never ``0.03333333333``)."""
    return None if x is None else float(f"{x:.{digits}g}")


def complement(cut: float) -> float:
    """``1 - cut`` in exact decimals: the similarity of a printed cut prints as short as the cut (``0.545`` ->
    ``0.455``, never ``0.45499999999999996``); a cut at a query's full distance keeps every digit.

    >>> complement(0.545), complement(0.1), complement(0.4)
    (0.455, 0.9, 0.6)
    """
    from decimal import Decimal

    return float(Decimal(1) - Decimal(repr(float(cut))))


def _cells(row) -> dict | None:
    if row is None:
        return None
    return {k: {kk: _num(vv) if isinstance(vv, float) else vv for kk, vv in v.items()}
            for k, v in row.items() if isinstance(v, dict)}


#: What ``--export-rule`` can name: the proposed cut (default), or the in-sample cut (labelled optimistic in the file).
EXPORT_RULES = ("proposed", "in-sample")


def export_cut(choice: CutChoice, rule: str = "proposed") -> tuple[float, str]:
    """The cut an export carries and its label: the proposal (:attr:`CutChoice.proposal`), or the in-sample cut.

    ``ValueError`` when that cut does not exist (no cut reaches the goal; no in-sample cut).
    """
    if rule not in EXPORT_RULES:
        raise ValueError(f"the export rule must be one of {', '.join(EXPORT_RULES)}, got {rule!r}")
    if rule == "in-sample":
        if choice.cut is None:
            raise ValueError("no cut reaches this goal on this set: there is nothing to export")
        return float(choice.cut), IN_SAMPLE
    p = choice.proposal
    if p is None or p.cut is None:
        raise ValueError("no cut reaches this goal on this set: there is nothing to export"
                         + (f" ({p.guarantee})" if p is not None and p.guarantee else ""))
    return float(p.cut), p.method


def _rule(choice: CutChoice, method: str) -> str:
    """The rule that chose the exported cut (``method``), in words: the conformal order statistic, or the goal's
    in-sample rule, or a person's choice."""
    if method == PROPOSED and choice.conformal_cut is not None:
        return ("conformal: " + choice.conformal.split(": ", 1)[0]
                + " (the in-sample rule and its cut are under rates: in_sample_rule, in_sample_cut)")
    if method.startswith("chosen by a person"):
        return "chosen by a person on screen, not by a rule"
    return choice.rule


def thresholds_document(table: GateTable, choice: CutChoice, *, config: str, model: Mapping,
                        describe: str | None = None, rule: str = "proposed", cut: float | None = None,
                        slices: Mapping | None = None) -> dict:
    """The export as a plain mapping (:func:`thresholds_yaml` dumps it).

    Parameters
    ----------
    table : GateTable
        The configuration's gate table (:func:`ragdiag.analyses.gate_table.gate_table`): its keep is exported,
        and the rates are computed from it at the exported cut.
    choice : CutChoice
        From :func:`ragdiag.analyses.threshold.cut_choice` on the same table.
    config : str
        The configuration the cut was chosen for (``E/hybrid``).
    model : mapping
        The stamp of the model whose distances the gate read: ``model`` (name),
        ``weights_sha256``, and, when known, ``dim``, ``precision``, ``normalize``, ``pooling``.
    describe : str, optional
        The configuration in words.
    rule : {"proposed", "in-sample"}
        Which cut: the proposal (the conformal cut for a bluff goal, with its guarantee) or, named explicitly,
        the in-sample cut (labelled optimistic in the file).
    cut : float, optional
        A cut chosen by a person (the dashboard's cut on screen), exported instead, labelled as chosen.
    slices : mapping, optional
        A ``slices:`` block (:meth:`ragdiag.analyses.slice_cuts.SliceCuts.export_block`): each slice's own
        cut that has a guarantee, keyed by tag or language; every other query uses ``cut``.
    """
    keep = table.gate.keep if table.gate is not None else table.window
    if not model.get("model"):
        raise ValueError("the model the cut belongs to must be named (model stamp without 'model')")
    if cut is None:
        cut, method = export_cut(choice, rule)
    else:  # the cut on screen: the proposal's own label when it is the proposal
        cut = check_cut(cut)
        p = choice.proposal
        method = p.method if p is not None and p.cut is not None and cut == p.cut else \
            "chosen by a person (not the proposal)"
    label = {PROPOSED: "proposed (conformal): holds for new off-topic queries", IN_SAMPLE:
             "in sample (optimistic): fitted to these off-topic queries; new ones bluff more often"}.get(method, method)
    at = rate_rows(table, [cut])[0]
    cut = float(cut)  # exact: a proposed cut is already rounded down; an in-sample one sits on a query's distance
    sim = complement(cut)  # exact decimals: the file prints what a person would type
    name = model["model"]
    doc = {
        EXPORT_KEY: EXPORT_FORMAT,
        "config": config,
        **({"describe": describe} if describe else {}),
        "model": {k: model.get(k) for k in ("model", "weights_sha256", "dim", "precision", "pooling", "normalize")
                  if model.get(k) is not None},
        "valid_only_for_this_model": (f"This cut is a cosine distance of {name}'s embeddings (weights sha256 "
                                      f"{str(model.get('weights_sha256') or 'unknown')[:12]}...). Under another "
                                      "model, or another precision of this one, distances are on another scale "
                                      "and the cut is invalid: choose it again with ragdiag."),
        "goal": {k: v for k, v in (("max_bluff", choice.goal.max_bluff), ("min_answered", choice.goal.min_answered))
                 if v is not None},
        "rule": _rule(choice, method),
        "keep": keep,
        "cut": {
            "method": method,
            "label": label,
            **({"guarantee": choice.proposal.guarantee} if method == PROPOSED and choice.proposal else {}),
            "cosine_distance": cut,
            "cosine_similarity": sim,
            "kept_when": f"cosine distance < {cut} (strict), among the top {keep}",
            "distance": GATE_DISTANCE,
        },
        "rates": {
            "unit": "queries; answerable intervals over questions (95%), out-of-domain intervals Wilson (95%)",
            "answerable_queries": choice.n_in,
            "out_of_domain_queries": choice.n_ood,
            "at_this_cut": _cells(at.cells()),
            "at_this_cut_in_words": outcome_sentence(cut, at.answered.count, at.wrong_sources.count,
                                                     at.no_answer.count, at.bluffs.count, choice.n_ood),
            "in_sample_cut": _num(choice.cut),
            "in_sample_rule": choice.rule,
            "in_sample": _cells(choice.in_sample.cells() if choice.in_sample is not None else None),
            "cross_validated": {"folds": choice.folds, "grouped_by": "question", "seed": choice.seed,
                                **_cells({k: v.cells() for k, v in choice.cross_validated.items()})},
            "conformal_cut": _num(choice.conformal_cut),
            "conformal": choice.conformal,
        },
        "consumers": {
            "chroma": {"units": "cosine distance (collection metadata {'hnsw:space': 'cosine'})",
                       "n_results": keep, "keep_if": f"distance < {cut}",
                       "note": "query() returns distances and takes no threshold: filter the results"},
            "pgvector": {"units": "cosine distance (operator <=>)",
                         "sql": f"SELECT ... ORDER BY embedding <=> :query LIMIT {keep}, keeping rows with "
                                f"embedding <=> :query < {cut}",
                         "keep_if": f"embedding <=> :query < {cut}"},
            "qdrant": {"units": "cosine similarity (collection distance Cosine; score = 1 - distance)",
                       "limit": keep, "score_threshold": sim,
                       "keep_if": f"score >= {sim} (inclusive)"},
            "llamaindex": {"units": "cosine similarity (node.score)", "similarity_top_k": keep,
                           "postprocessor": f"SimilarityPostprocessor(similarity_cutoff={sim})",
                           "keep_if": f"score >= {sim} (a node scoring under similarity_cutoff is dropped)"},
            "langchain": {"units": "relevance score = 1 - cosine distance (the store's cosine relevance function; "
                                   "check that yours is not rescaled)",
                          "search_type": "similarity_score_threshold",
                          "search_kwargs": {"k": keep, "score_threshold": sim},
                          "keep_if": f"relevance >= {sim} (inclusive)"},
        },
        "direction": ("ragdiag keeps a chunk whose cosine distance is strictly under cut.cosine_distance, i.e. "
                      "similarity > cut.cosine_similarity (strict); the similarity "
                      "consumers keep similarity >= threshold (inclusive): they differ only for a score equal "
                      "to the threshold in every digit. The values are exact, not rounded: a cut chosen for a "
                      "bluff budget sits on the distance of an out-of-domain query, and a score computed with "
                      "other rounding (float32 in a database) may land on either side of it"),
        "hybrid_and_rerank": ("for bm25, hybrid and reranked rankings the gate compares the dense model's "
                              "cosine distance of each kept chunk, not the fused or reranked score: filter on "
                              "that similarity"),
    }
    if slices is not None:
        doc["slices"] = dict(slices)
    return doc


def thresholds_yaml(table: GateTable, choice: CutChoice, *, config: str, model: Mapping, describe: str | None = None,
                    rule: str = "proposed", cut: float | None = None, slices: Mapping | None = None) -> str:
    """The export as YAML text (:func:`thresholds_document` with a header comment); pure: nothing is written.

    >>> import numpy as np
    >>> from ragdiag.analyses.threshold.choice import Goal, cut_choice
    >>> from ragdiag.analyses.gate_table import GateTable
    >>> g = GateTable(("a", "b", "o1", "o2"), np.array([True, True, False, False]),
    ...                closest=np.array([0.2, 0.3, 0.4, 0.5]), closest_holder=np.array([0.2, 0.35, np.inf, np.inf]), window=4)
    >>> text = thresholds_yaml(g, cut_choice(g, Goal(max_bluff=0.5), folds=2), config="E/dense",
    ...                        model={"model": "all-MiniLM-L6-v2", "weights_sha256": "7e54"})
    >>> "cosine_distance: 0.4" in text and "score_threshold: 0.6" in text and is_thresholds_export(text)
    True
    """
    import yaml

    doc = thresholds_document(table, choice, config=config, model=model, describe=describe, rule=rule, cut=cut,
                              slices=slices)
    return _HEADER + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


def is_thresholds_export(text: str) -> bool:
    """Whether ``text`` is a ragdiag thresholds export (the only kind of file ``--export`` overwrites).

    >>> is_thresholds_export("ragdiag_thresholds: 1\\nconfig: E/dense\\n"), is_thresholds_export("a: 1\\n")
    (True, False)
    """
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return isinstance(doc, dict) and doc.get(EXPORT_KEY) == EXPORT_FORMAT
