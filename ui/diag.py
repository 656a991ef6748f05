"""Funnel and cost results of the shared evaluation, through :mod:`ui.cache` (keyed by its token)."""

from __future__ import annotations

from ragdiag.core.gate import Gate
from ragdiag.evaluation.records import Evaluation
from ui import cache
from ui.state import settings

__all__ = ["funnels_for", "costs_for", "last_costs", "cost_key", "measurement_words", "no_measurement_words"]


def funnels_for(token: str, gate: Gate, ev: Evaluation):
    """:func:`ragdiag.analyses.funnel.funnels` of every configuration at ``gate`` (first-stage ranks computed when
    not evaluated)."""
    return cache.funnels(token, gate, settings().cache, ev)


def cost_key(ev: Evaluation) -> str:
    """What a cost measurement is of: the documents, the questions, the configurations and the encoder."""
    from ragdiag.documents.truth import truth_sha256

    enc = cache.encoder()
    labels = ",".join(sorted(c.label for c in ev.results if not c.external))
    return "|".join((ev.corpus.sha256, truth_sha256(ev.truth), labels, type(enc).__name__,
                     str(getattr(enc, "name", ""))))


def _folder() -> str:
    from ragdiag.core.cache_dir import resolve_root

    return str(resolve_root(settings().cache))


def costs_for(token: str, gate: Gate, sample: int, ev: Evaluation):
    """:func:`ragdiag.analyses.cost.costs` of every configuration at ``gate``, measured once per evaluation and
    settings (a :class:`~ragdiag.analyses.cost_log.CostMeasurement`), and kept in the cache folder as the last
    measurement of these inputs (a folder that cannot be written keeps nothing: the page still shows it)."""
    from ragdiag.analyses.cost_log import save_measurement

    m = cache.costs(token, gate, sample, ev)
    last = last_costs(ev)
    if last is None or last.measured_at != m.measured_at:  # once per measurement, not on every rerun
        try:
            save_measurement(_folder(), cost_key(ev), m)
        except OSError:
            pass
    return m


def last_costs(ev: Evaluation):
    """The last cost measurement of these inputs kept in the cache folder, or None."""
    from ragdiag.analyses.cost_log import last_measurement

    return last_measurement(_folder(), cost_key(ev))


def measurement_words(m, gate: Gate, *, fresh: bool) -> str:
    """What a shown cost measurement is: when, how long it took, at which cut and sample, on which machine; and,
    for the last one kept, that "Measure now" times again (and prices the prompts at the context's cut when it
    moved since)."""
    from ragdiag.core.gate import cut_text
    from ragdiag.core.words import secs

    when = m.measured_at.replace("T", " ").replace("+00:00", " UTC")
    where = ", ".join(f"{k} {v}" for k, v in m.machine.items())
    head = (("Measured now" if fresh else "Last measurement") + f": {when}, took {secs(m.seconds)}; "
            f"{m.sample} queries timed per configuration; prompts priced at cut {cut_text(m.gate.cut)}, at most "
            f"{m.gate.keep} passages. Machine: {where}.")
    if fresh:
        return head
    moved = (m.gate.cut, m.gate.keep) != (gate.cut, gate.keep)
    return head + (" Turn on “Measure now” to time again" + (f" and price the prompts at the context's cut "
                                                           f"{cut_text(gate.cut)} (at most {gate.keep} passages)"
                                                           if moved else "") + ".")


def no_measurement_words(ev: Evaluation, sample: int) -> str:
    """What the Cost page says before the first measurement of these inputs: that there is none, and how long
    measuring takes (at least the indexing this evaluation took here, which it repeats)."""
    from ragdiag.core.words import secs

    configs = [c for c in ev.results if not c.external]
    strategies = sorted({c.strategy for c in configs})
    indexing = sum(v for k, v in ev.timings.items() if k.startswith("index_"))
    took = (f" Indexing took {secs(indexing)} here, so expect at least that, usually a few minutes."
            if indexing > 0 else " Expect a few minutes.")
    return (f"No measurement of these documents and questions yet. “Measure now” re-builds the indexes of "
            f"{len(strategies)} chunking strateg{'y' if len(strategies) == 1 else 'ies'} and times each of the "
            f"{len(configs)} configurations on {sample} queries, one at a time; the result is kept and shown here "
            f"next time." + took)
