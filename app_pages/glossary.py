"""Glossary: the words the screens use, each in one or two plain sentences (every first screen links here)."""

import streamlit as st

from ragdiag.core.defaults import RERANK_HEAD

st.title("Glossary")
st.caption("The words on the screens and in the report, in plain terms. A passage is a chunk of a document; a "
           "question may be asked in several phrasings, and each phrasing is one query.")

TERMS = [
    ("answerable question", "A question the documents answer; the ground truth says where (the answer's exact text)."),
    ("off-topic question", "A question the documents do not answer. A good pipeline gives the model nothing for it."),
    ("bluff", "An off-topic question that still gets passages: the model would answer from unrelated text."),
    ("found (retrieved)", "A passage holding the whole answer is among the top passages the retriever returns. "
                          "Said before the cut."),
    ("answered", "The model is given a passage holding the whole answer: found, and closer than the cut. Said after "
                 "the cut."),
    ("no answer", "An answerable question that is not answered (the pipeline refuses it, or gives the wrong "
                  "passages)."),
    ("strictness (cut)", "The largest distance a passage may have to the question and still be given to the model "
                         "(cosine distance, 0 to 2). Lower is stricter: fewer bluffs, fewer answers. Printed with 3 "
                         "decimals, rounded down, so typing a printed cut gives the same results."),
    ("passages kept", "At most this many of the top passages are given to the model."),
    ("not retrieved", f"No passage holding the answer is among the top {RERANK_HEAD} the retriever returns (for a "
                      "reranker: among those it re-scores)."),
    ("retrieved too low", "A passage holding the answer is retrieved, but below the passages given to the model."),
    ("refused by the cut", "Nothing the retriever ranked high enough is closer than the cut: no passage is given."),
    ("wrong passages given", "Passages are given, none holding the answer."),
    ("answer split by the chunking", "No passage holds the whole answer: the way the documents are cut split it."),
    ("what alone would fix it", "For each failed question, the one change that answers it on its own: a less strict "
                                "cut, a better ranking (ranked first, it would pass the cut), or both."),
    ("95% range", "The range the true rate lies in with 95% confidence, given how many questions were asked: "
                  "55% (42–67)."),
    ("no detectable difference", "The range of a difference includes zero: these questions cannot tell the two "
                                 "apart. Shown in grey, never green or red."),
    ("statistically tied with the best", "Configurations whose difference from the best is not detectable, all "
                                         "comparisons taken together."),
    ("what you run today", "The configuration the operator declared as the current one (the baseline); every "
                           "comparison is against it, or, without one, against the runner-up."),
    ("a cut that holds for new off-topic questions", "A cut chosen so that the bluff goal holds for off-topic "
                                                     "questions not seen yet, not only for these."),
    ("a cut fitted to these questions", "The best cut for these questions; optimistic for new ones."),
    ("provisional", "Shown while some chunking strategies are still being computed; the recommendation may change."),
]
for term, words in TERMS:
    st.markdown(f"**{term}** · {words}")
