"""How every surface writes a number: the CLI, the report and the dashboard read these (one format each).

A rate is ``55% (42–67)`` (estimate and 95% interval in whole points), a
difference ``+5 pts (−2 to +12)`` (:func:`difference_text`), a cut three decimals rounded down
(:func:`ragdiag.core.gate.cut_text`, re-stated here as the words of a number).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace

from .defaults import RERANK_HEAD
from .gate import cut_text

__all__ = ["DASH", "MINUS", "RUNG_WORDS", "plural", "f3", "pct", "pct_span", "cut_as_given", "pct_cell", "pct_range",
           "interval", "rate_text", "count_rate_text", "ship_headline", "diff_points", "signed_points", "signed_whole",
           "signed_bound", "difference_text", "mean_difference_text", "difference_of", "value_interval", "thousands",
           "secs", "cut_text", "OUTCOME_WORDS", "outcome_sentence", "found_then_answered", "GLOSSARY"]

#: What a table cell or a sentence shows for "nothing" (no estimate, not measured).
DASH = "–"
#: A true minus sign (a difference reads "−27 pts", not "-27 pts").
MINUS = "\u2212"

#: The outcome ladder's rungs (:mod:`ragdiag.analyses.outcomes`) as a person reads them: one name per rung on every
#: surface (the dashboard, the report, the ``funnel`` command, the glossary). A rung says where an answerable query's
#: answer was lost; the four outcomes (:data:`OUTCOME_WORDS`) say what the user gets. The two rungs at the gate are
#: named "found, then ..." after the outcome they always lead to, so that neither reads as that outcome itself
#: ("refused" and "given wrong passages" count every answerable query refused or given wrong passages, whatever the
#: rung); the machine names (``kept-but-wrong``) stay in files, URLs and JSON.
RUNG_WORDS = {"destroyed": "split by the chunking", "truncated": "cut off by the length limit",
              "not-in-pool": "not retrieved", "ranked-low": "retrieved too low",
              "refused": "found, then refused by the cut", "kept-but-wrong": "found, then given wrong passages",
              "answered": "answered", "bluff": "bluff", "abstained": "correctly refused"}


def plural(n: int, word: str) -> str:
    """``"1 bluff"``, ``"2 bluffs"``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def f3(x) -> str:
    """Three decimals; ``n/a`` for None or NaN."""
    return "n/a" if x is None or x != x else f"{x:.3f}"


def _missing(x) -> bool:
    return x is None or x != x


def _hundred(x, of) -> float:
    """``x`` in percent: a share times 100, or a count of ``of`` as ``100 * x / of`` (the count's exact ratio)."""
    return 100 * x if of is None else 100 * x / of


def _number(x: float, digits: int | None) -> str:
    return f"{x:g}" if digits is None else f"{x:.{digits}f}"


def pct(x, digits: int | None = 0, *, of: int | None = None, missing: str = DASH) -> str:
    """A share as a percentage, the one way every surface writes one: ``pct(0.5469)`` is ``"55%"``,
    ``pct(0.5469, 1)`` ``"54.7%"``; ``digits=None`` for a goal as stated (``pct(0.025, None)`` is ``"2.5%"``);
    with ``of``, ``x`` is a count of ``of`` (``pct(3, of=8)`` is ``"38%"``). ``missing`` (a dash unless told) for
    None, NaN or a count of nothing.

    >>> pct(0.5469), pct(0.5469, 1), pct(0.025, None), pct(3, of=8), pct(None), pct(1, of=0, missing="n/a")
    ('55%', '54.7%', '2.5%', '38%', '–', 'n/a')
    """
    if _missing(x) or of == 0:
        return missing
    return _number(_hundred(x, of), digits) + "%"


def pct_span(low, high, digits: int | None = 0, *, of: int | None = None) -> str:
    """Two shares as a range of percentages, ``"42–67%"`` (``of``: counts of ``of``, as :func:`pct`).

    >>> pct_span(0.42, 0.67), pct_span(0.421, 0.675, 1), pct_span(3, 5, of=8)
    ('42–67%', '42.1–67.5%', '38–62%')
    """
    return f"{_number(_hundred(low, of), digits)}–{_number(_hundred(high, of), digits)}%"


def cut_as_given(cut: float, digits: int = 6) -> str:
    """A cut printed as it was given, not rounded down: one typed on the command line (``--cut 0.95`` reads
    ``0.95``) or one on a ranking's own score (a reranker's logit, BM25), where :func:`cut_text`'s three decimals
    rounded down would not be the side that only refuses more. ``digits`` significant digits.

    >>> cut_as_given(0.95), cut_as_given(12.345678), cut_as_given(0.123456, 4)
    ('0.95', '12.3457', '0.1235')
    """
    return f"{cut:.{digits}g}"


def pct_cell(cell) -> str:
    """A rate cell's estimate as a whole percentage, ``"55%"`` (``"n/a"`` over no queries)."""
    return "n/a" if cell is None or cell.rate is None else pct(cell.rate)


def pct_range(cell) -> str:
    """A rate cell's 95% interval, ``"42–67%"``."""
    return "n/a" if cell is None or cell.rate is None else pct_span(cell.low, cell.high)


def interval(estimate, low, high, missing: str = DASH) -> str:
    """The one format of a rate everywhere: the estimate and its 95% interval in whole points, ``"55% (42–67)"``
    (``missing``, a dash unless told, when there is no estimate).

    >>> interval(35 / 64, 0.42, 0.67), interval(None, 0, 1)
    ('55% (42–67)', '–')
    """
    if _missing(estimate):
        return missing
    return f"{pct(estimate)} ({100 * low:.0f}–{100 * high:.0f})"


def rate_text(cell, missing: str = "n/a") -> str:
    """A :class:`~ragdiag.evaluation.rows.RateCell` or :class:`~ragdiag.core.stats.Interval` as :func:`interval`
    writes it, ``"55% (42–67)"`` (``missing`` over no queries).

    >>> from ragdiag.evaluation.rows import RateCell
    >>> rate_text(RateCell(35, 35 / 64, 0.42, 0.67))
    '55% (42–67)'
    """
    if cell is None:
        return missing
    est = cell.rate if hasattr(cell, "rate") else getattr(cell, "estimate", None)
    return interval(est, cell.low, cell.high, missing)


def ship_headline(what: str, cut: float | None = None, how: str | None = None) -> str:
    """The recommendation's headline, one writer for the Summary, Compare, the CLI and the report:
    ``"Ship <what> at strictness 0.524"``, or, where the stack filters on its own score, ``"Ship <what>, <how>"``
    (``how``: that filter in words). ``what`` is the configuration in words, already marked up by the caller.

    >>> ship_headline("paragraph cuts, hybrid", 0.5245), ship_headline("X", how="keeps scores above 0.5")
    ('Ship paragraph cuts, hybrid at strictness 0.524', 'Ship X, keeps scores above 0.5')
    """
    if how is not None:
        return f"Ship {what}, {how}"
    return f"Ship {what} at strictness {cut_text(cut)}"


def diff_points(d: float, digits: int = 0) -> str:
    """A difference of two shares in percentage points, signed, as a bare number for a table cell or a list:
    ``diff_points(0.05)`` is ``"+5"``, ``diff_points(-0.0312, 1)`` ``"-3.1"``.

    >>> diff_points(0.05), diff_points(-0.0312, 1)
    ('+5', '-3.1')
    """
    return f"{100 * d:+.{digits}f}"


def signed_points(d: float) -> str:
    """A difference of shares in points, ``"+5 points"``, ``"-3 points"``, ``"0 points"``."""
    r = round(d)
    return "0 points" if r == 0 else f"{r:+d} point{'' if abs(r) == 1 else 's'}"


def signed_whole(points_: float) -> str:
    """Whole points with a sign and a true minus: ``+5``, ``\u22123``, ``0``."""
    r = round(points_)
    return "0" if r == 0 else (f"+{r}" if r > 0 else f"{MINUS}{-r}")


def signed_bound(points_: float) -> str:
    """Points with a sign and a true minus, whole, but one decimal under half a point so that a value near zero
    keeps its side: an interval's bound just under 0 excludes 0 and must not read ``0``.

    >>> signed_bound(12.4), signed_bound(-0.3), signed_bound(0.0), signed_bound(-0.02), signed_bound(0.7)
    ('+12', '−0.3', '0', '−0.0', '+1')
    """
    if points_ == 0 or round(points_) != 0:
        return signed_whole(points_)
    return f"{points_:+.1f}".replace("-", MINUS)


def difference_text(d) -> str:
    """A difference of shares with its 95% interval, the one format in tables and sentences alike:
    ``"−27 pts (−48 to −5)"``; a dash when unknown. ``d`` has ``estimate``, ``low``, ``high``
    (shares), as attributes or keys. A value under half a point keeps its side (:func:`signed_bound`).

    >>> from types import SimpleNamespace as D
    >>> difference_text(D(estimate=-0.27, low=-0.48, high=-0.05))
    '−27 pts (−48 to −5)'
    >>> difference_text({"estimate": 0.021, "low": 0.002, "high": 0.04})
    '+2 pts (+0.2 to +4)'
    """
    if isinstance(d, Mapping):
        d = SimpleNamespace(**d)
    if d is None or d.estimate is None or d.estimate != d.estimate:
        return DASH
    return f"{signed_bound(100 * d.estimate)} pts ({signed_bound(100 * d.low)} to {signed_bound(100 * d.high)})"


def _signed(x: float, digits: int) -> str:
    text = f"{x:+.{digits}f}"
    return text.replace("-", MINUS) if float(text) != 0 else text.lstrip("+-")


def mean_difference_text(d, digits: int = 3) -> str:
    """A difference of means that are not shares (MRR) with its 95% interval, in :func:`difference_text`'s
    shape: ``"+0.031 (−0.012 to +0.074)"``; a dash when unknown. ``d`` has ``estimate``, ``low``, ``high``.

    >>> from types import SimpleNamespace as D
    >>> mean_difference_text(D(estimate=0.0312, low=-0.0121, high=0.0744))
    '+0.031 (−0.012 to +0.074)'
    """
    if d is None or d.estimate is None or d.estimate != d.estimate:
        return DASH
    return f"{_signed(d.estimate, digits)} ({_signed(d.low, digits)} to {_signed(d.high, digits)})"


def difference_of(metric: str, d) -> str:
    """A difference at ``metric`` as said everywhere: in points for a rate (``R@k``, :func:`difference_text`),
    as a difference of means otherwise (``MRR``, :func:`mean_difference_text`).

    >>> from types import SimpleNamespace as D
    >>> d = D(estimate=0.05, low=-0.02, high=0.12)
    >>> difference_of("R@4", d), difference_of("MRR", d)
    ('+5 pts (−2 to +12)', '+0.050 (−0.020 to +0.120)')
    """
    return difference_text(d) if metric.startswith("R@") else mean_difference_text(d)


def value_interval(estimate: float, low: float, high: float, digits: int = 1) -> str:
    """A measured value that is not a share (a latency) with its 95% interval: ``"12.3 (11.0–14.1)"``.

    >>> value_interval(12.34, 11.0, 14.06)
    '12.3 (11.0–14.1)'
    """
    return f"{estimate:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


def thousands(x) -> str:
    """An integer with thousands separators; ``n/a`` for None (an external run has no chunks of ours)."""
    return "n/a" if x is None else f"{int(x):,}"


def secs(x) -> str:
    """Seconds from 0.1 s up, milliseconds below; ``n/a`` for None."""
    if x is None:
        return "n/a"
    return f"{x:.2f} s" if x >= 0.1 else f"{1000 * x:.1f} ms"


def count_rate_text(cell, total: int | None = None) -> str:
    """A count and its rate, the one way every surface writes both: ``"35 of 64: 55% (42–67)"``, without
    ``total`` ``"35 = 55% (42–67)"`` (a table cell, the CLI's rates). ``cell`` a
    :class:`~ragdiag.evaluation.rows.RateCell` (its ``count``) or a :class:`~ragdiag.core.stats.Interval` (its
    ``successes``).

    >>> from ragdiag.evaluation.rows import RateCell
    >>> from ragdiag.core.stats import Interval
    >>> count_rate_text(RateCell(35, 35 / 64, 0.42, 0.67), 64), count_rate_text(Interval(0.55, 0.42, 0.67, 35, 64))
    ('35 of 64: 55% (42–67)', '35 = 55% (42–67)')
    """
    if cell is None:
        return DASH
    count = cell.count if hasattr(cell, "count") else cell.successes
    if total is None:
        return f"{count} = {rate_text(cell)}"
    return f"{count} of {total}: {rate_text(cell)}"


#: The four outcomes of a gate at a cut, one word each, on every surface (the Summary's cards, the Threshold
#: page's sentence, the thresholds file, the report's cards and chart). Answerable queries are ``answered``,
#: ``wrong_sources`` or ``no_answer``; off-topic ones that still get passages are ``bluffs``.
OUTCOME_WORDS = {"answered": "answered", "wrong_sources": "given wrong passages", "no_answer": "refused",
                 "bluffs": "bluffs"}


def outcome_sentence(cut: float, answered: int, wrong_sources: int, no_answer: int, bluffs: int, n_ood: int,
                     whose: str | None = None) -> str:
    """The four outcomes at ``cut`` in one sentence, with their counts (the words of :data:`OUTCOME_WORDS`);
    ``whose``: whose cut it is, said after it ("the recommendation").

    >>> outcome_sentence(0.5245, 31, 15, 18, 0, 30)
    'At cut 0.524: of 64 answerable queries, 31 answered, 15 given wrong passages, 18 refused; 0 of 30 off-topic queries get passages (bluffs).'
    """
    n_in = answered + wrong_sources + no_answer
    w = OUTCOME_WORDS
    at = f"{cut_text(cut)} ({whose})" if whose else cut_text(cut)
    head = (f"At cut {at}: of {n_in} answerable queries, {answered} {w['answered']}, "
            f"{wrong_sources} {w['wrong_sources']}, {no_answer} {w['no_answer']}")
    if not n_ood:
        return head + "; no off-topic queries to count bluffs on."
    return head + f"; {bluffs} of {n_ood} off-topic queries get passages ({w['bluffs']})."


def found_then_answered(found: float, answered: float, keep: int, cut: float) -> str:
    """How recall in the top ``keep`` (before the cut) leads to the answered share (after it), in one sentence: the
    Overview's first line, which the Summary's answered share continues.

    >>> found_then_answered(0.734, 0.5625, 4, 0.5245)
    '73% of answerable queries have the answer in the top 4 passages (found); after the cut 0.524, 56% are answered.'
    """
    return (f"{pct(found)} of answerable queries have the answer in the top {keep} passage"
            f"{'' if keep == 1 else 's'} (found); after the cut {cut_text(cut)}, {pct(answered)} are "
            f"{OUTCOME_WORDS['answered']}.")


#: The words the screens and the report use, each in one or two plain sentences (the dashboard's Glossary page
#: and the report's "How we know" print this list).
GLOSSARY = (
    ("answerable question", "A question the documents answer; the ground truth says where (the answer's exact text)."),
    ("off-topic question", "A question the documents do not answer. A good pipeline gives the model nothing for it."),
    ("bluff", "An off-topic question that still gets passages: the model would answer from unrelated text."),
    ("found (retrieved)", "A passage holding the whole answer is among the top passages the retriever returns. "
                          "Said before the cut."),
    ("answered", "The model is given a passage holding the whole answer: found, and closer than the cut. Said after "
                 "the cut."),
    ("not answered", "An answerable question that is not answered: given wrong passages, or refused (no answer)."),
    ("strictness (cut)", "The largest distance a passage may have to the question and still be given to the model "
                         "(cosine distance, 0 to 2). Lower is stricter: fewer bluffs, fewer answers. Printed with 3 "
                         "decimals, rounded down, so typing a printed cut gives the same results."),
    ("passages kept", "At most this many of the top passages are given to the model."),
    ("given wrong passages", "Passages are given, none holding the answer: a model would answer from them."),
    ("refused", "No passage is given: the user gets no answer."),
    ("correctly refused", "An off-topic question that gets no passage: what a good pipeline does."),
    ("split by the chunking", "Where an answer is lost, first step: no passage holds the whole answer, the way the "
                              "documents are cut split it."),
    ("cut off by the length limit", "Where an answer is lost: every passage holding it is longer than the model "
                                    "reads, and cut before the answer."),
    ("not retrieved", f"Where an answer is lost: no passage holding it is among the top {RERANK_HEAD} the retriever "
                      "returns (for a reranker: among those it re-scores)."),
    ("retrieved too low", "Where an answer is lost: a passage holding it is retrieved, but below the passages given "
                          "to the model."),
    ("found, then refused by the cut", "Where an answer is lost, at the cut: it is found, but nothing found is "
                                       "closer than the cut, so the question is refused."),
    ("found, then given wrong passages", "Where an answer is lost, at the cut: it is found, but only other passages "
                                         "pass the cut (or it ranks past the passages kept), so the question is "
                                         "given wrong passages."),
    ("what alone would fix it", "For each failed question, the one change that answers it on its own: a less strict "
                                "cut, a better ranking (ranked first, it would pass the cut), or both."),
    ("95% range", "The range the true rate lies in with 95% confidence, given how many questions were asked: "
                  "55% (42–67)."),
    ("no detectable difference", "The range of a difference includes zero: these questions cannot tell the two "
                                 "apart. Shown in grey, never green or red."),
    ("statistically tied with the best", "Configurations whose difference from the best is not detectable, all "
                                         "comparisons taken together."),
    ("what you run today", "The configuration the operator declared as the current one (the baseline); every "
                           "comparison is with it, or, without one, with the runner-up."),
    ("a cut that holds for new off-topic questions", "A cut chosen so that the bluff goal holds for off-topic "
                                                     "questions not seen yet, not only for these."),
    ("a cut fitted to these questions", "The best cut for these questions; optimistic for new ones."),
    ("word-level rerank", "Hybrid retrieval whose top passages are re-scored by matching each word of the question "
                          "to its closest word in the passage (MaxSim over the model's word vectors)."),
    ("provisional", "Shown while some chunking strategies are still being computed; the recommendation may change."),
)
