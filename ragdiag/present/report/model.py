"""The frozen :class:`Report`: the report's sections, computed by the library, formatted by the templates."""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

from ...core.gate import Gate, OnGate
from ...evaluation.records import Config
from .gate import GateSection
from .sections import BluffSection, CostSection, NeedleSection, Provenance, RecallSection
from .story import AlternativesSection, EffectsSection, FlowSection, Headline

__all__ = ["Report", "BUSY_LOAD"]

#: A machine whose 1-minute load average per CPU is at least this was busy while timings were measured.
BUSY_LOAD = 0.7


@dataclass(frozen=True)
class Report(OnGate):
    """Everything the report shows at ``gate``, one typed section each; ``to_html``/``to_markdown`` only format it.

    The first screen is ``headline``; the story ``flow``, ``trade_off`` (the gate's trade-off), ``alternatives``
    and ``effects``; the appendix the rest.

    The properties below the fields are shortcuts into the sections (the names earlier versions had).
    """

    config: Config
    gate: Gate  # the report's keep, cut and k: every section is at it
    generated: str
    headline: Headline
    flow: FlowSection
    alternatives: AlternativesSection | None
    effects: EffectsSection | None
    provenance: Provenance
    recall: RecallSection
    needles: NeedleSection
    trade_off: GateSection
    bluffing: BluffSection
    costs: CostSection
    diag: object | None = None  # ragdiag.present.report.diag.DiagSections: funnel, hubs, cost, variants
    history: object | None = None  # ragdiag.present.report.history.HistorySection: the last runs (report --history)
    ruler: object | None = None  # ragdiag.present.report.ruler.RulerSection: "Can this set tell?" (computed outside)
    ledger: object | None = None  # ragdiag.present.report.ledger.LedgerSection: the repair ledger (computed outside)

    # -- shortcuts ------------------------------------------------------------

    n_in = property(attrgetter("trade_off.n_in"), doc="Answerable queries.")
    n_ood = property(attrgetter("trade_off.n_ood"), doc="Out-of-domain queries.")
    n_questions = property(attrgetter("needles.n_questions"), doc="Questions (needles) of the ground truth.")
    destroyed = property(attrgetter("needles.needles"), doc="Every destroyed needle of every strategy.")
    destroyed_counts = property(lambda self: dict(self.needles.counts),
                                doc="Strategy -> destroyed needles (zeros included).")
    sweep_row = property(attrgetter("trade_off.row"), doc="The gate's counts at the cut (a ``GateRow``).")
    curve = property(attrgetter("trade_off.curve"), doc="The gate's counts at every cut of the sweep (a ``Curve``).")
    choice = property(attrgetter("trade_off.choice"), doc="``CutChoice.as_json()`` for the default goal.")
    bluffs = property(attrgetter("bluffing.rows"), doc="The out-of-domain queries that get sources at the cut.")

    # -- derived --------------------------------------------------------------

    def provenance_groups(self) -> tuple[tuple, tuple, tuple]:
        """(label, value) pairs of the corpus, the ground truth, and the model and software (with the date)."""
        p = self.provenance
        return p.corpus, p.truth, (*p.model, ("generated", self.generated))

    @property
    def busy(self) -> str:
        """When the costs were measured on a loaded machine, the words that say so ("" otherwise)."""
        m = (getattr(self.diag, "machine", None) or {})
        load, cpus = m.get("load_average_1min"), m.get("cpus")
        if load is None or not cpus or load / cpus < BUSY_LOAD:
            return ""
        return (f"Measured on a busy machine (load {load:g} on {cpus} CPUs): timings are slower than on an idle "
                f"one; compare them with each other, not with another machine.")

    def to_html(self) -> str:
        """The self-contained HTML report."""
        from .render import render

        return render(self, "report.html.j2")

    def to_markdown(self) -> str:
        """The Markdown twin of the report."""
        from .render import render

        return render(self, "report.md.j2")
