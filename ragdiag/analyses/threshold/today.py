"""What a proposed cut changes against the cut a team runs today, on the distance gate or on a native score.

:class:`~ragdiag.analyses.threshold.proposal.CurrentCut` (a distance cut) and
:class:`~ragdiag.analyses.threshold.native_current.NativeCurrent` (a native
score's cut) both hold the proposed cut and the queries it moves; this module
says once which queries those are, how they are written to JSON and how they
are said after the record's own first sentence.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

__all__ = ["VersusProposed", "moved_queries"]


def moved_queries(query_ids: Sequence[str], in_domain: np.ndarray, today: float, proposed: float | None,
                  answered: Callable[[float], np.ndarray],
                  given_sources: Callable[[float], np.ndarray]) -> tuple[tuple[str, ...], ...]:
    """``(gained, lost, bluffs_added, bluffs_removed)``: the queries that moving the cut from ``today`` to
    ``proposed`` moves (all empty when nothing is proposed).

    ``answered(cut)`` and ``given_sources(cut)`` are one boolean per query;
    gained: answerable queries the proposal answers that today's cut does not,
    lost the reverse; bluffs added: off-topic queries given sources under the
    proposal, not today, bluffs removed the reverse.

    >>> ind = np.array([True, True, False])
    >>> at = lambda c: np.array([0.2, 0.5, 0.4]) < c
    >>> moved_queries(("a", "b", "o"), ind, 0.3, 0.6, at, at)
    (('b',), (), ('o',), ())
    >>> moved_queries(("a", "b", "o"), ind, 0.3, None, at, at)
    ((), (), (), ())
    """
    if proposed is None:
        return (), (), (), ()
    ids = np.array(query_ids, dtype=object)
    now_a, then_a = answered(today), answered(proposed)
    now_b, then_b = given_sources(today), given_sources(proposed)
    return (tuple(ids[in_domain & then_a & ~now_a]), tuple(ids[in_domain & now_a & ~then_a]),
            tuple(ids[~in_domain & then_b & ~now_b]), tuple(ids[~in_domain & now_b & ~then_b]))


class VersusProposed:
    """A base for a record of today's cut holding ``proposed`` (``None``: no cut proposed) and the queries it
    moves: ``gained``, ``lost``, ``bluffs_added``, ``bluffs_removed`` (see :func:`moved_queries`)."""

    __slots__ = ()  # the fields are the subclass's (a frozen dataclass)

    def versus_cells(self) -> dict:
        """The JSON form of ``versus_proposed``."""
        return {"proposed_cut": self.proposed, "gained": list(self.gained), "lost": list(self.lost),
                "bluffs_added": list(self.bluffs_added), "bluffs_removed": list(self.bluffs_removed)}

    def versus_sentence(self, head: str, today: float, proposed_words: str) -> str:
        """``head`` followed by what the proposal (written ``proposed_words``) changes against ``today``'s cut."""
        if self.proposed is None:
            return head + " No cut is proposed for this goal."
        if self.proposed == today:
            return head + " It is the proposed cut."
        return (head + f" The proposed cut {proposed_words} would answer {len(self.gained)} more and "
                f"{len(self.lost)} fewer answerable queries, with {len(self.bluffs_added)} more and "
                f"{len(self.bluffs_removed)} fewer bluffs.")
