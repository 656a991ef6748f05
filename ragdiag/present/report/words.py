"""How the report writes numbers, and what each section means (the same words in HTML and Markdown)."""

from __future__ import annotations

__all__ = ["MEANS", "plural", "f3", "pct", "thousands", "secs", "timing_name", "pct_cell", "pct_range",
           "rate_text", "points", "signed_points", "pp", "cut_text"]


def plural(n: int, word: str) -> str:
    """``"1 bluff"``, ``"2 bluffs"``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def f3(x) -> str:
    """Three decimals; ``n/a`` for None or NaN."""
    return "n/a" if x is None or x != x else f"{x:.3f}"


def pct(x) -> str:
    """A share as a percentage with one decimal; ``n/a`` for None or NaN."""
    return "n/a" if x is None or x != x else f"{100 * x:.1f}%"


def pct_cell(cell) -> str:
    """A rate cell's estimate as a whole percentage, ``"55%"`` (``"n/a"`` over no queries)."""
    return "n/a" if cell is None or cell.rate is None else f"{100 * cell.rate:.0f}%"


def pct_range(cell) -> str:
    """A rate cell's 95% interval, ``"42–67%"``."""
    return "n/a" if cell is None or cell.rate is None else f"{100 * cell.low:.0f}–{100 * cell.high:.0f}%"


def rate_text(cell) -> str:
    """The one format of a rate everywhere: ``"55% (42–67)"``.

    >>> from ragdiag.evaluation.rows import RateCell
    >>> rate_text(RateCell(35, 35 / 64, 0.42, 0.67))
    '55% (42–67)'
    """
    if cell is None or cell.rate is None:
        return "n/a"
    return f"{100 * cell.rate:.0f}% ({100 * cell.low:.0f}–{100 * cell.high:.0f})"


def points(n: int, of: int) -> str:
    """``n`` of ``of`` as a whole percentage."""
    return "n/a" if of == 0 else f"{100 * n / of:.0f}%"


def signed_points(d: float) -> str:
    """A difference of shares in points, ``"+5 points"``, ``"-3 points"``, ``"0 points"``."""
    r = round(d)
    return "0 points" if r == 0 else f"{r:+d} point{'' if abs(r) == 1 else 's'}"


def cut_text(cut: float) -> str:
    """A cut as every section writes it (four significant digits).

    >>> cut_text(0.524987), cut_text(0.6)
    ('0.525', '0.6')
    """
    return f"{cut:.4g}"


def pp(x: float) -> str:
    """A signed bound in points: whole points, one decimal under 1 so that a bound near zero keeps its side.

    >>> pp(12.4), pp(-0.3), pp(0.0)
    ('+12', '-0.3', '0')
    """
    if round(x, 1) == 0:
        return "0"
    return f"{x:+.1f}" if abs(x) < 1 else f"{x:+.0f}"


def thousands(x) -> str:
    """An integer with thousands separators; ``n/a`` for None (an external run has no chunks of ours)."""
    return "n/a" if x is None else f"{int(x):,}"


def secs(x) -> str:
    """Seconds from 0.1 s up, milliseconds below; ``n/a`` for None."""
    if x is None:
        return "n/a"
    return f"{x:.2f} s" if x >= 0.1 else f"{1000 * x:.1f} ms"


_TIMING_NAMES = {"embed_queries": "embedding the queries", "total": "whole evaluation"}


def timing_name(key: str) -> str:
    """The step an ``Evaluation.timings`` key measured, in words."""
    if key.startswith("index_"):
        return f"indexing strategy {key[6:]} (chunk, audit, embed)"
    return _TIMING_NAMES.get(key, key.replace("_", " "))


MEANS = {
    "provenance": ("Every number below holds for exactly this corpus, ground truth and model: a different "
                   "corpus hash, model or pipeline version means a different experiment."),
    "recall": ("R@k is the share of answerable queries whose needle (the sentence that answers it) is whole in a "
               "chunk of the top k (success@k, the hit rate); intervals are 95% Wilson on the effective number of "
               "questions (phrasings of a question are correlated, so they count as less than independent queries). "
               "Overlapping intervals do not make two "
               "configurations equal: the comparison with the best decides."),
    "best": ("Each configuration is compared with the best on the same questions, the unit of the test (the "
             "phrasings of a question fail together): a question's difference is its hits at R@{k} summed over its "
             "phrasings, and one max-T permutation over questions gives intervals that hold simultaneously for "
             "every configuration. The best set is every configuration whose interval reaches 0: not shown worse "
             "than the best, which is not the same as equal to it."),
    "destroyed": ("A destroyed needle is cut in two by the chunker: no chunk holds the answer whole, so no "
                  "retriever can find it, whatever its quality. It looks exactly like a bad retriever; overlap "
                  "or boundary-aware cuts fix it."),
    "cut": ("The gate keeps at most {keep} chunks closer than the cut. Answered: a kept chunk holds the needle. "
            "Wrong sources: sources are given, none holds the answer. No answer: nothing kept, the user gets NO "
            "ANSWER. Lost = wrong sources + no answer (whatever the stage that lost the answer; the funnel's "
            "refused and kept-but-wrong are the part of these whose answer was in the top k). Bluffs: "
            "out-of-domain queries that still get sources. "
            "Where to stand is a product decision; the bluff column is the price of answering more."),
    "bluffs": ("These queries are not covered by the corpus, yet at this cut they get sources: a model would "
               "answer them from unrelated text. The closest ones are the most dangerous."),
    "costs": ("Header tokens are paid on every chunk. A truncated chunk is longer than the encoder window: the "
              "text past it is silently never embedded. Timings are those of this run on this machine."),
}
