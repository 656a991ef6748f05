"""A shareable report of one run: one self-contained HTML file and its Markdown twin.

It reads in the order a product owner asks: the recommendation in words with
four cards at the gate's k (answered, given wrong passages, refused, bluffs) (:func:`ragdiag.analyses.recommend.recommend`), then the
story in two screens (where the questions go, from :mod:`ragdiag.analyses.outcomes`;
the alternatives, from :func:`ragdiag.analyses.compare.best`; what each chunking switch
bought; the threshold trade-off with the goal and the proposed cut), then an
appendix collapsed in ``<details>`` (provenance, full tables, destroyed
needles, costs, hubs, the funnel), opened by the print stylesheet.

:func:`build_report` (:mod:`.build`) gathers the numbers from the library
(``recommend``, ``best``, ``query_outcomes``, ``summary_rows``, ``summary_document``,
``sweep``, ``rate_rows``, ``bluffs_at``, ``chunking_rows``, and :mod:`.diag`'s funnel,
hubs, costs and variants) into a frozen :class:`Report` of typed sections
(:mod:`.model`, :mod:`.story`, :mod:`.sections`, :mod:`.gate`); :meth:`Report.to_html` and
:meth:`Report.to_markdown` only format them through the Jinja2 templates in
``templates/`` (:mod:`.render`), so a figure in the report is the figure the CLI
prints and ``summary.json`` holds.

The HTML needs no network to open: styles are inline, charts are inline SVG
(:mod:`ragdiag.core.svg`), there are no scripts, links, fonts or images to fetch.
Corpus and query text are untrusted: every piece of it is escaped (HTML
autoescape; Markdown-significant characters backslash-escaped by
:func:`ragdiag.core.tables.md_line`), never injected raw.
"""

from ...core.defaults import ALPHA
from .build import build_report, default_config
from .diag import DiagSections, diag_sections, variant_rows
from .gate import Curve, GateRow, GateSection, RateCell
from .model import Report
from .render import MARKDOWN_SIGNATURE, markdown_twin, write_report
from .sections import BluffRow, DestroyedNeedle
from .story import AlternativesSection, Card, EffectsSection, FlowSection, Headline
from .words import MEANS

__all__ = ["ALPHA", "DestroyedNeedle", "BluffRow", "Report", "build_report", "default_config", "write_report",
           "markdown_twin", "MARKDOWN_SIGNATURE", "MEANS", "DiagSections", "diag_sections", "variant_rows", "GateRow",
           "GateSection", "RateCell", "Curve", "Headline", "Card", "FlowSection", "AlternativesSection",
           "EffectsSection"]
