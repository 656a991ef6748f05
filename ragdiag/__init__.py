"""ragdiag: diagnose the retrieval half of a RAG system, honestly, without an LLM."""

__version__ = "0.1.0"

# Bumped whenever chunking, evaluation or scoring changes what an index holds.
PIPELINE_VERSION = "1"

__all__ = ["__version__", "PIPELINE_VERSION"]
