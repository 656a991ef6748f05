"""Questions as the unit: intervals and paired tests that stay honest when phrasings are correlated.

A ground truth asks each question in several phrasings (two in the bundled
one). The phrasings of one question share a needle, so they fail together
(a needle destroyed by chunking fails all of them): they are not independent
observations. Every interval and test here therefore treats the *question*
as the unit and its phrasings as a cluster.

- :func:`question_differences` -- per question, the paired difference summed over its phrasings.
- :func:`sign_flip_test` -- exact two-sided sign-flip (permutation) test over questions.
- :func:`bootstrap_difference` -- a question-level bootstrap interval for a difference of means.
- :func:`clustered_rate` -- a Wilson interval on the Kish effective sample size (cluster design effect).
- :func:`clustered_mean` -- a cluster-robust interval for a mean in [0, 1] (MRR).
- :func:`rate_interval` -- Wilson with the exact bound at 0 (or all) events, and :func:`upper_bound_words`.
- :func:`questions_needed` -- questions needed for 80% power, given a difference and its discordance.
- :func:`resolvable`, :func:`questions_to_resolve` -- what a number of questions can resolve, alone and within a
  family, by the exact power of the test (the most favourable case), and the questions a difference needs.
- :func:`verdict` -- the one rule and the one set of words for a paired comparison.
- :func:`max_t` -- simultaneous intervals and adjusted p of a family from one studentized max-statistic permutation
  (an interval excludes 0 exactly when the adjusted p is below alpha); :func:`bh_qvalues` for exploring.
- :func:`effects` -- the chunking design's switch contrasts per retriever, one family.
- :func:`best`, :func:`best_of` -- comparison with the best (Hsu's MCB, studentized: the best set,
  simultaneous over the configurations shown).
- :func:`compare`, :func:`family`, :func:`compare_in_family` -- configurations of an evaluation compared,
  Holm within the family on screen; :func:`family_rows` / :func:`pairwise` as :class:`~ragdiag.evaluation.rows.PairRow`.

Modules: :mod:`.paired` (tests and the verdict), :mod:`.intervals` (intervals
and power), :mod:`.comparisons` (comparisons of an evaluation), :mod:`.simultaneous`
(max-T), :mod:`.best` (comparison with the best), :mod:`.power` (exact power of the sign test).
"""

from __future__ import annotations

from . import paired as _paired, intervals as _intervals, comparisons as _comparisons
from . import simultaneous as _simultaneous, best as _best, baseline as _baseline, effects as _effects
from . import power as _power
from .paired import (
    BOOTSTRAP_DRAWS,
    MONTE_CARLO_DRAWS,
    Difference,
    QuestionTest,
    bootstrap_difference,
    paired_test,
    question_differences,
    question_groups,
    sign_flip_test,
    verdict,
    verdict_status,
)
from .intervals import (
    RECALL_INTERVAL_WORDS,
    clustered_share,
    clustered_mean,
    clustered_rate,
    clustered_wilson,
    power_words,
    questions_needed,
    rate_interval,
    upper_bound_words,
)
from .comparisons import (
    Comparison,
    check_phrasing,
    compare,
    compare_in_family,
    family,
    family_rows,
    pair_json,
    pairwise,
)

from .simultaneous import EXACT_LIMIT, MAX_T_DRAWS, MaxT, SimultaneousRow, bh_qvalues, integer_units, max_t
from .best import BestResult, BestRow, best, best_of, difference_dict, outcome_matrix
from .effects import CONTRASTS, SWITCH_WORDS, EffectRow, EffectsResult, effects
from .baseline import BASELINE_ENV, PROJECT_FILE, DeclaredBaseline, declared_baseline
from .power import (Resolution, default_family_size, questions_to_resolve, resolution_sentence, resolvable,
                    resolvable_difference, sign_test_power)

__all__ = [*_paired.__all__, *_intervals.__all__, *_comparisons.__all__, *_simultaneous.__all__, *_best.__all__,
           *_baseline.__all__, *_effects.__all__, *_power.__all__]
