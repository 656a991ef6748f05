"""What each section of the report means, and the steps its timings name (the same words in HTML and Markdown).

Numbers are written by :mod:`ragdiag.core.words` (one format each, on every surface).
"""

from __future__ import annotations

__all__ = ["MEANS", "timing_name"]

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
               "questions (phrasings of a question are correlated, so they count as less than independent queries; exact Clopper-Pearson at 4 or fewer hits or misses). "
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
            "Given wrong passages: passages are given, none holds the answer (a model would answer from them). "
            "Refused: nothing kept, the user gets no answer. Not answered = given wrong passages + refused "
            "(whatever the stage that lost the answer; the funnel's \"found, then refused by the cut\" and "
            "\"found, then given wrong passages\" are the part of these whose answer was in the top k). Bluffs: "
            "out-of-domain queries that still get sources. "
            "Where to stand is a product decision; the bluff column is the price of answering more."),
    "bluffs": ("These queries are not covered by the corpus, yet at this cut they get sources: a model would "
               "answer them from unrelated text. The closest ones are the most dangerous."),
    "costs": ("Header tokens are paid on every chunk. A truncated chunk is longer than the encoder window: the "
              "text past it is silently never embedded. Timings are those of this run on this machine."),
}
