"""When a trade for simplicity becomes possible: the worst case of ``recommend``'s margin, said first.

``recommend`` trades the best configuration for a simpler or cheaper one only
when that one is *shown* within :data:`~ragdiag.core.defaults.PRACTICAL_MARGIN`
of the best (the lower end of its simultaneous interval above minus the margin).
On a small ground truth no configuration can be: the interval of one *equal* to
the best already reaches further below than the margin. :func:`questions_for_trade`
says how many questions a trade needs at the spread seen, and :func:`trade_words`
says it in one sentence.
"""

from __future__ import annotations

import math

from ..core.defaults import PRACTICAL_MARGIN

__all__ = ["questions_for_trade", "trade_words"]


def questions_for_trade(result, margin: float = PRACTICAL_MARGIN) -> tuple[float, int] | None:
    """``(reach, questions)``: how far below its estimate the narrowest interval to the best reaches, and about
    how many questions would bring that reach inside ``margin``; ``None`` when no configuration but the best.

    The reach of a simultaneous interval over questions shrinks as one over the
    square root of the questions while the configurations' disagreements keep
    their rate (the discordance seen), so a configuration *equal* to the best
    is shown within the margin from ``n (reach / margin)^2`` questions on. A
    configuration below the best needs more: this is the least.

    >>> from types import SimpleNamespace as S
    >>> r = S(best="a", n_questions=32, rows=[S(config="a", estimate=0.02, low=-0.1),
    ...                                        S(config="b", estimate=-0.02, low=-0.194)])
    >>> questions_for_trade(r)
    (0.174, 388)
    """
    reaches = [r.estimate - r.low for r in result.rows if r.config != result.best and math.isfinite(r.low)]
    if not reaches:
        return None
    reach = round(min(reaches), 12)
    return reach, max(int(result.n_questions), math.ceil(result.n_questions * (reach / margin) ** 2))


def trade_words(result, margin: float = PRACTICAL_MARGIN) -> str:
    """The sentence, or ``""`` when the narrowest interval already fits within the margin.

    >>> from types import SimpleNamespace as S
    >>> r = S(best="a", n_questions=32, rows=[S(config="a", estimate=0.02, low=-0.1),
    ...                                        S(config="b", estimate=-0.02, low=-0.194)])
    >>> trade_words(r)
    'With 32 questions no configuration can be shown within 5 points of the best: the narrowest interval to it reaches 17 points below its estimate, so even one equal to the best could not be; at the spread seen here about 388 questions are needed before any trade for simplicity or cost is possible.'
    """
    got = questions_for_trade(result, margin)
    if got is None or got[0] <= margin:
        return ""
    reach, needed = got
    return (f"With {result.n_questions} questions no configuration can be shown within {100 * margin:g} points of "
            f"the best: the narrowest interval to it reaches {100 * reach:.0f} points below its estimate, so even one "
            f"equal to the best could not be; at the spread seen here about {needed} questions are needed before any "
            "trade for simplicity or cost is possible.")
