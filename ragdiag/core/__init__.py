"""Foundations every stage uses: defaults, exact statistics, per-query metrics, text tables, SVG, progress events, input limits and argument checks."""
