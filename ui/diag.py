"""Funnel and cost results of the shared evaluation, through :mod:`ui.cache` (keyed by its token)."""

from __future__ import annotations

from ragdiag.evaluation.records import Evaluation
from ui import cache
from ui.state import settings

__all__ = ["funnels_for", "costs_for"]


def funnels_for(token: str, k: int, cut: float, keep: int, ev: Evaluation):
    """:func:`ragdiag.analyses.funnel.funnels` of every configuration (first-stage ranks computed when not evaluated)."""
    return cache.funnels(token, k, cut, keep, settings().cache, ev)


def costs_for(token: str, k: int, cut: float, keep: int, sample: int, ev: Evaluation):
    """:func:`ragdiag.analyses.cost.costs` of every configuration, measured once per evaluation and settings."""
    return cache.costs(token, k, cut, keep, sample, ev)
