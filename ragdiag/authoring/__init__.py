"""Writing a ground truth without an LLM: checks, leakage, coverage, suggestions, safe saving.

Pure library (no streamlit). The loader's rules live in :mod:`ragdiag.documents.truth`;
everything here reuses them by calling :func:`ragdiag.documents.truth.parse_truth`.
"""
