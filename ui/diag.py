"""Funnel and cost results of the shared evaluation, through :mod:`ui.cache` (keyed by its token)."""

from __future__ import annotations

from ragdiag.core.gate import Gate
from ragdiag.evaluation.records import Evaluation
from ui import cache
from ui.state import settings

__all__ = ["funnels_for", "costs_for"]


def funnels_for(token: str, gate: Gate, ev: Evaluation):
    """:func:`ragdiag.analyses.funnel.funnels` of every configuration at ``gate`` (first-stage ranks computed when
    not evaluated)."""
    return cache.funnels(token, gate, settings().cache, ev)


def costs_for(token: str, gate: Gate, sample: int, ev: Evaluation):
    """:func:`ragdiag.analyses.cost.costs` of every configuration at ``gate``, measured once per evaluation and
    settings."""
    return cache.costs(token, gate, sample, ev)
