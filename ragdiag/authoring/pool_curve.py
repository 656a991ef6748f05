"""The pool curve: the same questions against nested subsets of the corpus, and recall at the size you will run at.

A question set measured on a few hundred chunks says little about a corpus of
millions: every added chunk is one more distractor that can outrank the
needle. :func:`pool_curve` evaluates the same questions against nested, seeded
subsets of the chunks of one dense configuration (10%, 25%, 50% and 100% of the
chunks that hold no needle, by default; every chunk that holds a needle is
always kept), several draws per size, and reads recall at k and answered at the
cut at each size, with a question-level interval
(:func:`ragdiag.analyses.compare.clustered_mean`, the questions as the unit).

The unit sampled is the chunk, not the document: in a hand-written ground truth
most documents hold a needle (all 14 of the bundled corpus do), so keeping the
needle documents would keep the whole corpus. A dense configuration ranks by
exact cosine distance, so its ranking on a subset is its full ranking with the
chunks left out removed: the needle's rank on a subset is one more than the
number of kept distractors strictly closer than its closest holder, exactly
what the dense retriever would return on that sub-index (BM25's and the
hybrid's scores change with the collection, so they are not read this way).

:func:`fit_log_linear` fits ``rate = a + b ln(size)`` by least squares over the
draws and extrapolates to a stated size with a 95% prediction interval whose
variance adds the draws' residual variance (with the fit's leverage at that
size, a t quantile) and the question-level sampling variance of the rate at the
largest fitted size. It refuses, with the reason, when the fitted line leaves
the interval of a size it was fitted on (the curve is not log-linear within its
intervals), when fewer than three sizes were fitted, or when the stated size is
more than :data:`MAX_EXTRAPOLATION` times the corpus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..core.defaults import SEED
from ..core.words import cut_as_given, pct

if TYPE_CHECKING:  # pragma: no cover
    from ..core.gate import Gate
    from ..evaluation.records import Evaluation

__all__ = ["PoolPoint", "PoolFit", "PoolCurve", "pool_curve", "document_pool_curve", "curve_of", "fit_log_linear",
           "subset_ranks", "POOL_FRACTIONS",
           "POOL_DRAWS", "MAX_EXTRAPOLATION"]

#: The shares of the distractor chunks kept, smallest first (1.0: the whole corpus).
POOL_FRACTIONS = (0.1, 0.25, 0.5, 1.0)
#: Seeded draws per size below the whole corpus.
POOL_DRAWS = 5
#: Extrapolation is refused beyond this many times the corpus's chunks.
MAX_EXTRAPOLATION = 100
_LEVEL = 0.95


@dataclass(frozen=True)
class PoolPoint:
    """One measure at one size: the mean over draws (``draws``: each draw's rate) and its question-level interval."""

    measure: str
    fraction: float
    size: int  # chunks (or documents) in the subset
    rate: float
    low: float
    high: float
    draws: tuple[float, ...]

    def as_json(self) -> dict:
        """Plain fields."""
        return {"measure": self.measure, "fraction": self.fraction, "size": self.size, "rate": self.rate,
                "low": self.low, "high": self.high, "draws": list(self.draws)}


@dataclass(frozen=True)
class PoolFit:
    """``rate = intercept + slope * ln(size)`` over the sizes fitted; the prediction at ``at_size`` or the refusal."""

    measure: str
    slope: float
    intercept: float
    sizes: tuple[int, ...]
    residual_sd: float
    df: int
    at_size: int | None = None
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    refused: str | None = None  # why no extrapolation is given
    unit: str = "chunks"

    def sentence(self) -> str:
        """The fit and the prediction (or the refusal) in one sentence."""
        per = f"{100 * self.slope * math.log(10):+.3g} points per tenfold more {self.unit}"
        if self.refused is not None:
            return f"{self.measure}: {per} (fitted on {len(self.sizes)} sizes); no extrapolation: {self.refused}"
        if self.at_size is None:
            return f"{self.measure}: {per} (fitted on {len(self.sizes)} sizes)"
        return (f"{self.measure} at {self.at_size:,} {self.unit}: expect {pct(self.estimate, 1)} "
                f"(95% prediction interval {pct(self.low, 1)} to {pct(self.high, 1)}; {per})")

    def as_json(self) -> dict:
        """Plain fields."""
        return {"measure": self.measure, "slope": self.slope, "intercept": self.intercept, "unit": self.unit,
                "points_per_tenfold": 100 * self.slope * math.log(10), "sizes": list(self.sizes),
                "residual_sd": self.residual_sd, "df": self.df, "at_size": self.at_size,
                "estimate": self.estimate, "low": self.low, "high": self.high, "refused": self.refused,
                "sentence": self.sentence()}


@dataclass(frozen=True)
class PoolCurve:
    """The pool curve of one configuration: the points per measure and size, and one fit per measure."""

    config: str
    corpus_size: int
    holders: int
    questions: int
    points: tuple[PoolPoint, ...]
    fits: tuple[PoolFit, ...]
    seed: int = SEED
    draws: int = POOL_DRAWS
    notes: tuple[str, ...] = field(default=())
    unit: str = "chunks"

    def as_json(self) -> dict:
        """The ``ruler --pool-curve --json`` document."""
        return {"config": self.config, "corpus_size": self.corpus_size, "size_unit": self.unit,
                "needle_units": self.holders,
                "questions": self.questions, "unit": "question", "draws": self.draws, "seed": self.seed,
                "points": [p.as_json() for p in self.points], "fits": [f.as_json() for f in self.fits],
                "notes": list(self.notes)}

    def text(self) -> str:
        """What ``ruler --pool-curve`` prints."""
        from ..core.tables import format_rows

        lines = [f"Pool curve of {self.config}: the {self.questions} questions against nested subsets of its "
                 f"{self.corpus_size:,} {self.unit} (every one of the {self.holders} holding an answer kept; "
                 f"{self.draws} seeded draws per size)"]
        lines.append(format_rows([{"measure": p.measure, "share": pct(p.fraction), self.unit: p.size,
                                   "rate": round(p.rate, 3), "low": round(p.low, 3), "high": round(p.high, 3)}
                                  for p in self.points]))
        lines += [f.sentence() for f in self.fits]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def subset_ranks(distances: np.ndarray, holder: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query: the closest holder's rank among the kept chunks (0: no holder) and its distance (inf: none).

    ``distances`` (queries, chunks), ``holder`` (queries, chunks) bool, ``keep`` (chunks) bool. Holders are
    always counted as kept; a distractor ranks above the holder when strictly closer.

    >>> d = np.array([[0.1, 0.3, 0.2, 0.05]])
    >>> h = np.array([[False, False, True, False]])
    >>> subset_ranks(d, h, np.array([True, True, True, True]))[0].tolist()  # 0.1 and 0.05 are closer
    [3]
    >>> subset_ranks(d, h, np.array([True, True, False, False]))[0].tolist()  # 0.05 left out; the holder stays
    [2]
    """
    d = np.asarray(distances, dtype=np.float64)
    h = np.asarray(holder, dtype=bool)
    best = np.where(h, d, np.inf).min(axis=1) if d.shape[1] else np.full(d.shape[0], np.inf)
    closer = (d < best[:, None]) & ~h & np.asarray(keep, dtype=bool)[None, :]
    ranks = np.where(np.isfinite(best), 1 + closer.sum(axis=1), 0)
    return ranks.astype(np.int64), best


def _t(df: int) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + _LEVEL / 2, df))


def fit_log_linear(points: Sequence[PoolPoint], *, at_size: int | None = None, corpus_size: int | None = None,
                   max_fraction: float = 1.0, unit: str = "chunks") -> PoolFit:
    """The log-linear fit of one measure's ``points`` with fraction at most ``max_fraction``, and its extrapolation.

    Parameters
    ----------
    points : sequence of PoolPoint
        One measure's points (each with its draws).
    at_size : int, optional
        The size to predict at (chunks).
    corpus_size : int, optional
        The whole corpus's chunks: extrapolation past :data:`MAX_EXTRAPOLATION` times it is refused.
    max_fraction : float
        Fit only the sizes up to this share of the corpus (e.g. 0.5, to check a prediction of the whole).

    Examples
    --------
    A curve that falls 10 points per tenfold, exactly (the intervals are 2 points wide):

    >>> pts = [PoolPoint("R@4", f, s, r, r - 0.01, r + 0.01, (r, r))
    ...        for f, s, r in [(0.1, 100, 0.9), (0.25, 1000, 0.8), (0.5, 10000, 0.7)]]
    >>> fit = fit_log_linear(pts, at_size=100000, corpus_size=10000)
    >>> round(fit.estimate, 6), fit.refused
    (0.6, None)
    """
    pts = [p for p in points if p.fraction <= max_fraction + 1e-12]
    measure = points[0].measure if points else ""
    x, y = [], []
    seen_whole = False
    for p in pts:
        draws = p.draws
        if p.fraction >= 1.0 - 1e-12:  # the whole corpus: every draw is the same observation
            if seen_whole:
                continue
            seen_whole, draws = True, draws[:1]
        x += [math.log(p.size)] * len(draws)
        y += list(draws)
    X = np.column_stack([np.ones(len(x)), np.asarray(x)])
    Y = np.asarray(y, dtype=np.float64)
    sizes = tuple(p.size for p in pts)
    if len({p.size for p in pts}) < 3:
        return PoolFit(measure, math.nan, math.nan, sizes, math.nan, 0, at_size,
                       refused="fewer than three corpus sizes to fit a line through", unit=unit)
    coef, *_ = np.linalg.lstsq(X, Y, rcond=None)
    intercept, slope = float(coef[0]), float(coef[1])
    df = len(Y) - 2
    resid = Y - X @ coef
    s2 = float(resid @ resid) / df if df > 0 else 0.0
    refused = None
    for p in pts:
        fitted = intercept + slope * math.log(p.size)
        if not p.low - 1e-9 <= fitted <= p.high + 1e-9:
            refused = (f"the curve is not log-linear within its intervals: at {p.size:,} {unit} the line says "
                       f"{pct(fitted, 1)} and the {p.measure} interval is {pct(p.low, 1)} to {pct(p.high, 1)}")
            break
    base = PoolFit(measure, slope, intercept, sizes, math.sqrt(s2), df, at_size, refused=refused, unit=unit)
    if at_size is None or refused is not None:
        return base
    if at_size < 1:
        raise ValueError(f"at_size is a number of chunks, at least 1; got {at_size}")
    if corpus_size is not None and at_size > MAX_EXTRAPOLATION * corpus_size:
        return PoolFit(measure, slope, intercept, sizes, math.sqrt(s2), df, at_size,
                       refused=f"{at_size:,} {unit} is more than {MAX_EXTRAPOLATION} times the corpus "
                               f"({corpus_size:,} {unit}): a line fitted on this corpus says nothing that far",
                       unit=unit)
    x0 = np.array([1.0, math.log(at_size)])
    leverage = float(x0 @ np.linalg.pinv(X.T @ X) @ x0)
    largest = max(pts, key=lambda p: p.size)
    se_questions = (largest.high - largest.low) / 2 / 1.959964  # the question-level sampling error at that size
    half = math.sqrt((_t(df) ** 2 if df > 0 else 0.0) * s2 * (1 + leverage) + (1.959964 * se_questions) ** 2)
    est = intercept + slope * math.log(at_size)
    return PoolFit(measure, slope, intercept, sizes, math.sqrt(s2), df, at_size, est,
                   max(0.0, est - half), min(1.0, est + half), unit=unit)


def pool_curve(ev: Evaluation, config, query_vectors: np.ndarray, gate: Gate, *,
               fractions: Sequence[float] = POOL_FRACTIONS, draws: int = POOL_DRAWS, seed: int = SEED,
               at_size: int | None = None, fit_max_fraction: float = 1.0) -> PoolCurve:
    """The pool curve of a dense configuration of ``ev`` (see the module docstring).

    Parameters
    ----------
    ev : Evaluation
        The run; ``config`` must be a dense configuration in it (exact cosine ranking).
    query_vectors : array (queries, dim)
        The unit vectors of ``ev.queries`` (all of them, in order), from the encoder that built the index.
    gate : Gate
        Recall at ``gate.k``; answered at ``gate.cut`` within ``gate.keep``.
    fractions : sequence of float
        Shares of the distractor chunks kept, in (0, 1]; nested within a draw.
    at_size : int, optional
        Extrapolate each measure to this many chunks.
    fit_max_fraction : float
        Fit on the sizes up to this share only.
    """
    res = ev.result(config)
    cfg = res.config
    if cfg.external or cfg.retriever != "dense":
        raise ValueError(f"the pool curve re-ranks a dense configuration's exact cosine distances; {cfg.label} is "
                         "not one (name e.g. E/dense)")
    fr = sorted(set(float(f) for f in fractions))
    if not fr or fr[0] <= 0 or fr[-1] > 1:
        raise ValueError(f"fractions must be shares in (0, 1]; got {list(fractions)}")
    if draws < 1:
        raise ValueError(f"draws must be at least 1, got {draws}")
    index = ev.indexes[cfg.strategy]
    mask = ev.in_domain
    qv = np.asarray(query_vectors, dtype=np.float64)
    if qv.shape[0] != len(ev.queries):
        raise ValueError(f"query_vectors must hold one vector per query ({len(ev.queries)}), got {qv.shape[0]}")
    queries = [q for q, m in zip(ev.queries, mask) if m]
    groups = ev.groups(mask)
    n_chunks = len(index.chunks)
    holder = np.zeros((len(queries), n_chunks), dtype=bool)
    for i, q in enumerate(queries):
        pos = index.holders.get(q.question_id, np.zeros(0, dtype=np.int64))
        holder[i, np.asarray(pos, dtype=np.int64)] = True
    from ..retrieval.dense import cosine_distances

    dist = cosine_distances(qv[mask], index.vectors)
    notes = ("the unit sampled is the chunk (every needle chunk kept); a dense configuration's ranking on a subset "
             "is its full ranking without the chunks left out",)
    return curve_of(dist, holder, groups, gate, label=cfg.label, fractions=fr, draws=draws, seed=seed,
                    at_size=at_size, fit_max_fraction=fit_max_fraction, notes=notes)


def curve_of(dist: np.ndarray, holder: np.ndarray, groups: Sequence[str], gate: Gate, *, label: str,
             fractions: Sequence[float] = POOL_FRACTIONS, draws: int = POOL_DRAWS, seed: int = SEED,
             at_size: int | None = None, fit_max_fraction: float = 1.0, notes: Sequence[str] = (),
             unit: str = "chunks") -> PoolCurve:
    """The pool curve from exact distances ``dist`` (queries, units) and the units holding each query's answer
    (``holder``, always kept): nested seeded subsets of the other units, the points and the fits."""
    from ..analyses.compare.intervals import clustered_mean

    fr = sorted(set(float(f) for f in fractions))
    n_units = dist.shape[1]
    needle_units = holder.any(axis=0)
    distractors = np.flatnonzero(~needle_units)
    rng = np.random.default_rng(seed)
    orders = [rng.permutation(distractors) for _ in range(draws)]
    k = gate.k
    per: dict[str, list[PoolPoint]] = {f"R@{k}": [], "answered": []}
    for f in fr:
        n_keep = int(round(f * distractors.size))
        rates = {m: [] for m in per}
        sums = {m: np.zeros(dist.shape[0]) for m in per}
        runs = 1 if n_keep == distractors.size else draws
        for order in orders[:runs]:
            keep = needle_units.copy()
            keep[order[:n_keep]] = True
            ranks, best = subset_ranks(dist, holder, keep)
            found = ((ranks > 0) & (ranks <= k)).astype(np.float64)
            answered = ((ranks > 0) & (ranks <= gate.keep) & gate.under(best)).astype(np.float64)
            for m, v in ((f"R@{k}", found), ("answered", answered)):
                rates[m].append(float(v.mean()))
                sums[m] += v
        size = int(needle_units.sum()) + n_keep
        for m in per:
            iv = clustered_mean(sums[m] / runs, list(groups))
            per[m].append(PoolPoint(m, f, size, float(np.mean(rates[m])), float(iv.low), float(iv.high),
                                    tuple(rates[m] * (draws if runs == 1 else 1))))
    fits = tuple(fit_log_linear(pts, at_size=at_size, corpus_size=n_units, max_fraction=fit_max_fraction,
                                unit=unit) for pts in per.values())
    notes = (f"answered: the closest answer within the top {gate.keep} and under the cut "
             f"{cut_as_given(gate.cut)}", *notes)
    return PoolCurve(label, n_units, int(needle_units.sum()), len(set(groups)),
                     tuple(p for pts in per.values() for p in pts), fits, seed, draws, tuple(notes), unit)


def document_pool_curve(collection, encoder, gate: Gate, *, strategy: str | None = None, store=None,
                        fractions: Sequence[float] = POOL_FRACTIONS, draws: int = POOL_DRAWS, seed: int = SEED,
                        at_size: int | None = None, fit_max_fraction: float = 1.0) -> PoolCurve:
    """The pool curve of a collection judged by document (BEIR, TREC): documents are the unit sampled.

    A document's distance to a query is its closest chunk's (``strategy``'s chunks, dense, exact cosine), so
    the ranking of a subset of documents is the full ranking without the documents left out. A topic's answer
    documents are those of its highest grade (always kept); recall at k is one of them in the top k documents.
    """
    from ..core.defaults import DEFAULT_STRATEGY
    from ..documents.truth import GroundTruth
    from ..evaluation.evaluate import build_index
    from ..index.chunking import parse_strategies
    from ..retrieval.dense import cosine_distances

    if collection.level != "document":
        raise ValueError(f"{collection.name} is judged by {collection.level}; use pool_curve on its evaluation")
    strat = parse_strategies(strategy or DEFAULT_STRATEGY)[0]
    index = build_index(collection.corpus, GroundTruth((), ()), strat, encoder, store=store)
    topics = collection.topics
    texts = [t.text for t in topics]
    qv = store.embed(encoder, texts).vectors if store is not None else encoder.encode(texts)
    docs = [d.id for d in collection.corpus.documents]
    col = {d: i for i, d in enumerate(docs)}
    chunk_dist = cosine_distances(np.asarray(qv), index.vectors)
    dist = np.full((len(topics), len(docs)), np.inf)
    for j, c in enumerate(index.chunks):
        i = col[c.doc_id]
        dist[:, i] = np.minimum(dist[:, i], chunk_dist[:, j])
    holder = np.zeros(dist.shape, dtype=bool)
    for qi, t in enumerate(topics):
        grades = dict(t.judgments)
        top = max(grades.values(), default=0)
        for d, g in grades.items():
            if top > 0 and g == top and d in col:
                holder[qi, col[d]] = True
    notes = (f"the unit sampled is the document (every topic's top-graded documents kept); a document is as close "
             f"as its closest {strat.name} chunk (dense, exact cosine)",)
    return curve_of(dist, holder, [t.id for t in topics], gate, label=f"{collection.name} {strat.name}/dense",
                    fractions=fractions, draws=draws, seed=seed, at_size=at_size, fit_max_fraction=fit_max_fraction,
                    notes=notes, unit="documents")
