"""What leaves the library: the report, the exported files (summary.json, per_query, TREC), the regression gate of two runs and the dashboard's access rules."""
