"""Every default that more than one surface uses, defined once.

The CLI, the dashboard, the report and the README read these; nothing else
spells them out.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_CUT", "DEFAULT_KEEP", "KS", "PRIMARY_K", "MRR_DEPTH", "TOP", "RERANK_HEAD",
    "DEFAULT_STRATEGY", "PREFERRED_CONFIGS", "ALPHA", "SEED", "DEFAULT_MAX_BLUFF", "PRACTICAL_MARGIN",
]

#: The abstention cut: keep chunks whose cosine distance to the query is below this.
DEFAULT_CUT = 0.6
#: The gate keeps at most this many chunks.
DEFAULT_KEEP = 4
#: Recall is reported at these k.
KS = (1, 4, 8, 20)
#: The k that carries verdicts (the gate's keep); the other k are descriptive.
PRIMARY_K = DEFAULT_KEEP
#: MRR is computed over the top 20.
MRR_DEPTH = 20
#: How many ranked chunks per query are kept for display, the ladder and export.
TOP = 20
#: Rerankers rescore this many chunks of their pool ranking (the built-ins: hybrid).
RERANK_HEAD = 25
#: The strategy a first look starts with (boundaries + contextual header).
DEFAULT_STRATEGY = "E"
#: The configuration a report or page is about when none is named, in order of preference:
#: a fixed rule, never "the best scorer" (that would be chosen after looking).
PREFERRED_CONFIGS = ("E/hybrid", "E/dense")
#: Significance level of every verdict (after Holm's correction within the family shown).
ALPHA = 0.05
#: Seed of every resampling step (bootstrap, cross-validation folds).
SEED = 20261130
#: The goal the cut chooser starts from: a bluff rate of at most this (out-of-domain queries given sources).
DEFAULT_MAX_BLUFF = 0.05
#: A difference of recall this small is given up for a simpler or cheaper configuration (the recommendation), and
#: a candidate within it of its baseline passes the regression gate (non-inferiority): 5 points.
PRACTICAL_MARGIN = 0.05
