"""The report's funnel, hubs, cost and variants sections: now :mod:`ragdiag.report.diag` (kept importable here)."""

from .report.diag import WORST_HUBS, DiagSections, diag_sections, variant_rows

__all__ = ["DiagSections", "diag_sections", "variant_rows", "WORST_HUBS"]
