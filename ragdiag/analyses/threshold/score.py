"""A cut in the ranking's own score: BM25, the RRF fused score, MaxSim, the cross-encoder's logit or its sigmoid.

The gate of :mod:`ragdiag.analyses.threshold.gate` reads the dense model's
cosine distance of each kept chunk, whatever ranked it. A team that filters
where its ranking is scored (after a reranker, on a fused list, on BM25
scores) needs the cut on *that* score. This module chooses it there.

The rule, per query, on the top ``Gate.window`` (the smaller of ``k`` and ``keep``) chunks of the configuration's
own ranking (the same window as the distance gate):

* a chunk is **kept when its score is at least the cut** (``score >= cut``:
  higher keeps, the way LlamaIndex's postprocessors and Qdrant's
  ``score_threshold`` read a cut);
* a query is *answered* when a kept chunk holds its needle, an off-topic query
  *bluffs* when anything is kept.

The cut for at most ``a`` bluffs is the split-conformal one, as for distances:
with the off-topic queries' best scores sorted from the top,
``s_(1) >= ... >= s_(n)`` and ``j = floor(a (n + 1))``, a new off-topic query
is kept only when its best score ranks among the ``j - 1`` above ``s_(j)``;
the cut is the smallest number with 4 significant digits *strictly above*
``s_(j)`` (so the value people type keeps the guarantee under ``>=`` and ``>``
alike). With too few off-topic queries to certify the goal it is the in-sample
cut just above the ``(m + 1)``-th best score (``m = floor(a n)``: optimistic,
said so). The chosen cut depends on the off-topic queries alone, as the
distance cut does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

import numpy as np

from ...core.gate import Gate
from ...core.goal import Goal, OnGoal, allowed
from ...evaluation.rows import RateCell
from .choice import IN_SAMPLE, PROPOSED, conformal_guarantee, in_sample_words
from ...core.words import cut_as_given

if TYPE_CHECKING:  # pragma: no cover
    from ...evaluation.records import Evaluation

__all__ = ["SCORE_SPACES", "NATIVE_SCORES", "CE_UNITS", "ScoreTable", "score_table", "ScoreCut", "score_cut",
           "score_stamp", "above", "native_document", "refuse_foreign"]

#: The score a gate can read: the dense model's cosine distance (the default) or the ranking's own score.
SCORE_SPACES = ("dense", "native")
#: The ranking's own score of each built-in retriever, in words.
NATIVE_SCORES = {
    "dense": "cosine similarity of the dense model",
    "bm25": "BM25 score",
    "hybrid": "RRF fused score",
    "rerank-maxsim": "MaxSim score (the reranker's)",
    "rerank-ce": "cross-encoder logit (the reranker's)",
}
#: The units a cross-encoder's score can be read in: its raw logit, or the sigmoid of it (a probability).
CE_UNITS = ("logit", "sigmoid")
_DIGITS = 4  # significant digits of a cut people type


def _retriever(label: str) -> str:
    return label.partition("/")[2].partition("@")[0]


def above(x: float, digits: int = _DIGITS) -> float:
    """The smallest number with ``digits`` significant digits strictly above ``x``.

    >>> above(0.016393), above(12.5), above(-3.21049), above(0.0)
    (0.0164, 12.51, -3.21, 1e-06)
    """
    if not math.isfinite(x):
        raise ValueError(f"a score must be finite, got {x}")
    exp = max(math.floor(math.log10(abs(x))), -9) if x != 0 else -digits + 1  # below 1e-9 a score is 0 here
    step = 10.0 ** (exp - digits + 1)
    v = round((math.floor(x / step) + 1) * step, max(0, digits - 1 - exp))
    while v <= x:  # float rounding: never on or under the score it must exceed
        v = round(v + step, max(0, digits - 1 - exp))
    return float(v)


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Per query, the best score in the gate's window (``top``) and the best score of a needle holder in it
    (``holder``; ``-inf``: none there, and for off-topic queries), in the ranking's own score."""

    config: str
    score: str  # in words
    unit: str  # "score", "logit", "sigmoid"
    query_ids: tuple[str, ...]
    in_domain: np.ndarray
    groups: tuple[str, ...]
    top: np.ndarray
    holder: np.ndarray
    window: int
    kinds: tuple = ()  # off-topic kind per query ("near", "far"; None answerable); () = unknown

    def kind_of(self) -> tuple:
        """The off-topic kind of each query (``None`` for all when ``kinds`` is empty)."""
        return self.kinds or (None,) * len(self.query_ids)

    def kept(self, cut: float) -> np.ndarray:
        """Per query: the gate keeps anything (``top >= cut``)."""
        return self.top >= cut

    def answered(self, cut: float) -> np.ndarray:
        """Per query: the gate keeps a chunk holding the needle (``holder >= cut``)."""
        return self.holder >= cut


def score_table(ev: Evaluation, config: str, gate: Gate | None = None, *, unit: str | None = None) -> ScoreTable:
    """The native-score table of ``config`` at ``gate``'s window (``unit``: ``"sigmoid"`` for a cross-encoder read
    as a probability; default its logit). ``ValueError`` for a retriever whose own score is not known here."""
    gate = Gate() if gate is None else gate
    res = ev.result(config)
    label = res.config.label
    base = _retriever(label)
    if res.config.external or base not in NATIVE_SCORES:
        raise ValueError(f"{label}: no native score is known for this retriever (known: {', '.join(NATIVE_SCORES)}); "
                         "use --score dense")
    if unit is not None and base != "rerank-ce":
        raise ValueError(f"{label}: only a cross-encoder's score has units to choose ({', '.join(CE_UNITS)})")
    unit = unit or ("logit" if base == "rerank-ce" else "score")
    if unit not in CE_UNITS + ("score",):
        raise ValueError(f"a cross-encoder's score is read as one of {', '.join(CE_UNITS)}, got {unit!r}")
    scores = np.asarray(res.top_scores, dtype=np.float64)
    if unit == "sigmoid":
        scores = 1.0 / (1.0 + np.exp(-scores))
    w = gate.window(scores.shape[1])
    s = np.where(np.isfinite(scores[:, :w]), scores[:, :w], -np.inf)  # a reranker's tail (no score): never kept
    if base == "bm25":  # a chunk scoring 0 shares no token with the query: not retrieved at all
        s = np.where(s > 0, s, -np.inf)
    holds = np.asarray(res.top_holds[:, :w], dtype=bool)
    ind = np.asarray(ev.in_domain, dtype=bool)
    top = s.max(axis=1) if w else np.full(len(ind), -np.inf)
    holder = np.where(holds, s, -np.inf).max(axis=1) if w else np.full(len(ind), -np.inf)
    holder[~ind] = -np.inf
    score = NATIVE_SCORES[base] if unit != "sigmoid" else "cross-encoder probability (sigmoid of its logit)"
    return ScoreTable(label, score, unit, tuple(q.id for q in ev.queries), ind,
                      tuple(q.question_id or q.id for q in ev.queries), top, holder, w,
                      tuple(None if q.in_domain else (q.kind or "ood") for q in ev.queries))


@dataclass(frozen=True)
class ScoreCut(OnGoal):
    """A cut on a native score for a bluff goal, how it was had, and the three cards at it; the goal it follows is
    held whole (its ``max_bluff`` reads through it)."""

    config: str
    score: str
    unit: str
    cut: float | None
    method: str
    guarantee: str
    goal: Goal
    answered: RateCell | None
    bluffs: RateCell | None
    lost: RateCell | None
    n_in: int
    n_ood: int

    def cells(self) -> dict:
        c = lambda x: None if x is None else x.cells()  # noqa: E731
        return {"config": self.config, "score": self.score, "unit": self.unit, "direction": "higher keeps",
                "kept_when": "score >= cut", "cut": self.cut, "method": self.method, "guarantee": self.guarantee,
                "goal": {"max_bluff": self.max_bluff}, "answered": c(self.answered), "bluffs": c(self.bluffs),
                "lost": c(self.lost), "answerable": self.n_in, "out_of_domain": self.n_ood}


def rates(table: ScoreTable, cut: float) -> dict[str, RateCell]:
    """Answered, bluffs and lost at ``cut`` (answerable over questions, clustered Wilson; bluffs Wilson/exact)."""
    from ..compare.intervals import clustered_rate, rate_interval

    ind = table.in_domain
    groups = [g for g, i in zip(table.groups, ind) if i]
    ans = table.answered(cut)[ind]
    return {"answered": RateCell.of(clustered_rate(ans, groups)),
            "bluffs": RateCell.of(rate_interval(int(table.kept(cut)[~ind].sum()), int((~ind).sum()))),
            "lost": RateCell.of(clustered_rate(~ans, groups))}


def score_cut(table: ScoreTable, max_bluff: float | Goal) -> ScoreCut:
    """The cut for at most ``max_bluff`` bluffs on the table's score (the module's rule); ``max_bluff`` a share in
    (0, 1) or a :class:`~ragdiag.core.goal.Goal` (its bluff goal is the one followed)."""
    goal = Goal.recommending(max_bluff.max_bluff if isinstance(max_bluff, Goal) else max_bluff).cut_goal
    max_bluff = goal.max_bluff
    ind = table.in_domain
    ood = np.sort(table.top[~ind])[::-1]  # best first
    n, n_in = int(ood.size), int(ind.sum())
    if n == 0:
        return ScoreCut(table.config, table.score, table.unit, None, "none", "no off-topic queries to choose a cut "
                        "from: add some", goal, None, None, None, n_in, 0)
    j = allowed(max_bluff, n + 1)
    if j >= 1:
        j = min(j, n)
        ref, method = ood[j - 1], PROPOSED
        words = conformal_guarantee(j, n, max_bluff)
    else:
        m = allowed(max_bluff, n)
        ref, method = ood[m], IN_SAMPLE
        words = in_sample_words(n, max_bluff)
    # a query with no scored chunk in the window (-inf) bluffs at no cut: the cut sits just above the reference
    cut = above(float(ref)) if np.isfinite(ref) else -math.inf
    if not math.isfinite(cut):
        return ScoreCut(table.config, table.score, table.unit, None, method, "off-topic queries at the reference "
                        "rank get no scored chunk: any cut keeps the goal", goal, None, None, None, n_in, n)
    r = rates(table, cut)
    return ScoreCut(table.config, table.score, table.unit, cut, method, words, goal, r["answered"], r["bluffs"],
                    r["lost"], n_in, n)


def score_stamp(ev: Evaluation, table: ScoreTable, *, cross_encoder: str | None = None) -> dict:
    """What a native cut belongs to: the score and its unit, the embedding model, and the reranker (or None)."""
    base = _retriever(table.config)
    model = dict(ev.encoder_stamp)
    reranker = None
    if base == "rerank-maxsim":
        reranker = f"maxsim:{model.get('model')}:{str(model.get('weights_sha256') or '')[:16]}"
    elif base == "rerank-ce":
        from ...retrieval.rerank import DEFAULT_CROSS_ENCODER

        reranker = f"ce:{cross_encoder or DEFAULT_CROSS_ENCODER}"
    return {"score": table.score, "unit": table.unit, "retriever": base, "model": model.get("model"),
            "weights_sha256": model.get("weights_sha256"), "reranker": reranker}


def _consumers(base: str, unit: str, cut: float, keep: int) -> Mapping[str, object]:
    """Each consumer's setting only where it filters on this score; else what it cannot do, in words."""
    if base == "dense":  # the same score as the distance gate's (similarity = 1 - distance): that export says it all
        same = (f"cosine similarity >= {cut} (distance < {cut_as_given(1 - cut)}): --score dense exports every "
                f"consumer's setting")
        return {name: same for name in ("chroma", "pgvector", "qdrant", "llamaindex", "langchain")}
    cannot = "filters on the dense similarity, not on this score: no setting applies"
    out: dict[str, object] = {
        "chroma": f"cannot: {cannot}", "pgvector": f"cannot: {cannot}", "langchain": f"cannot: {cannot}"}
    if base in ("rerank-maxsim", "rerank-ce"):
        out["llamaindex"] = {"postprocessor": f"SimilarityPostprocessor(similarity_cutoff={cut})",
                             "placed": "after the reranker, so node.score is the reranker's score in these units "
                                       f"({unit}); check that your reranker leaves its score in node.score unchanged",
                             "top_n": keep, "keep_if": f"score >= {cut}"}
    else:
        out["llamaindex"] = f"cannot: its retrievers' node.score is not the {NATIVE_SCORES.get(base, base)}"
    if base == "hybrid":
        out["qdrant"] = {"api": "query API with prefetch and fusion=RRF", "score_threshold": cut, "limit": keep,
                         "keep_if": f"fused score >= {cut}",
                         "note": "only when your fusion uses the same RRF constant (k=60) and the same two lists"}
    else:
        out["qdrant"] = f"cannot: {cannot}"
    if base == "bm25":
        out["any"] = {"keep_if": f"BM25 score >= {cut}", "note": "the same k1, b and tokenizer as ragdiag's "
                                                                  "(see the run's retriever stamp)"}
    return out


def native_document(ev: Evaluation, table: ScoreTable, choice: ScoreCut, *, keep: int,
                    cross_encoder: str | None = None) -> dict:
    """The thresholds export of a native cut: the score, its direction, the stamp, the rates and the consumers."""
    from .export import EXPORT_FORMAT, EXPORT_KEY

    if choice.cut is None:
        raise ValueError(f"no cut on the {table.score} of {table.config}: {choice.guarantee}")
    base = _retriever(table.config)
    return {
        EXPORT_KEY: EXPORT_FORMAT,
        "config": table.config,
        "stamp": score_stamp(ev, table, cross_encoder=cross_encoder),
        "valid_only_for_this_score": (f"This cut is on the {table.score} ({table.unit}) of {table.config}; a cut on "
                                      "another score, model or reranker means nothing here, and the distance "
                                      "commands (gate, threshold --current-from, monitor) refuse it."),
        "goal": {"max_bluff": choice.max_bluff},
        "keep": keep,
        "cut": {"score": table.score, "unit": table.unit, "value": choice.cut, "direction": "higher keeps",
                "kept_when": f"score >= {choice.cut}, among the top {keep}", "method": choice.method,
                "guarantee": choice.guarantee},
        "rates": {"answerable_queries": choice.n_in, "out_of_domain_queries": choice.n_ood,
                  "at_this_cut": {k: getattr(choice, k).cells() for k in ("answered", "bluffs", "lost")}},
        "consumers": _consumers(base, table.unit, choice.cut, keep),
    }


def refuse_foreign(doc: Mapping, where: str, *, model: Mapping | None = None) -> None:
    """``ValueError`` in one line, naming both, when a ragdiag export ``doc`` holds a cut for another score than the
    dense model's cosine distance, or for another embedding model than ``model`` (name or weights).

    >>> refuse_foreign({"stamp": {"score": "MaxSim score (the reranker's)", "unit": "score",
    ...                 "reranker": "maxsim:m:ab"}, "config": "F/rerank-maxsim"}, "cut.yaml")
    Traceback (most recent call last):
    ValueError: cut.yaml: a cut on the MaxSim score (the reranker's) (score; reranker maxsim:m:ab) of F/rerank-maxsim, not on the dense model's cosine distance this command reads: choose the cut with --score dense
    """
    stamp = doc.get("stamp")
    if isinstance(stamp, Mapping) and stamp.get("score"):
        rr = f"; reranker {stamp['reranker']}" if stamp.get("reranker") else ""
        raise ValueError(f"{where}: a cut on the {stamp['score']} ({stamp.get('unit')}{rr}) of "
                         f"{doc.get('config', 'a configuration')}, not on the dense model's cosine distance this "
                         "command reads: choose the cut with --score dense")
    theirs = doc.get("model") if isinstance(doc.get("model"), Mapping) else None
    if model is None or theirs is None:
        return
    for key in ("model", "weights_sha256"):
        a, b = theirs.get(key), model.get(key)
        if a and b and str(a) != str(b):
            raise ValueError(f"{where}: a cut for {key.replace('_', ' ')} {str(a)[:40]}, this run's model is "
                             f"{str(b)[:40]}: distances of another model are on another scale; choose the cut again")
