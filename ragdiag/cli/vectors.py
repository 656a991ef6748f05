"""``eval --vectors FILE``: evaluate vectors a team already has (:mod:`ragdiag.index.imported`)."""

from __future__ import annotations

__all__ = ["add_vector_options", "imported_encoder"]


def add_vector_options(p) -> None:
    """Add ``--vectors`` and ``--query-vectors`` to the subparser ``p``."""
    p.add_argument("--vectors", metavar="FILE", default=None,
                   help="chunk vectors computed elsewhere (Parquet/Arrow with a vector column and chunk_id, "
                        "doc_id+start+end or text; or .npy with a .json of ids): evaluated instead of embedding")
    p.add_argument("--query-vectors", metavar="FILE", default=None,
                   help="with --vectors: the queries' vectors (keyed by text or query_id); default: the model "
                        "the vectors file names embeds them")


def _named_model(option: str | None, named: str, load_encoder):
    """``--model`` when given; else the default encoder when it is the model the file names; else that model."""
    from ..index.models import model_label

    if option:
        return load_encoder(option)
    default = load_encoder(None)
    if model_label(named) == "minilm" or named == getattr(default.stamp, "model", None):
        return default
    return load_encoder(named)


def imported_encoder(args, corpus, truth, strategies):
    """The :class:`~ragdiag.index.imported.ImportedEncoder` of ``--vectors`` (None without it).

    The named model (``--model``, else the file's ``model``) counts wordpieces and, without
    ``--query-vectors``, embeds the queries. Problems are a ``ValueError`` whose message is the
    one line to print (the caller makes it a usage error).
    """
    if not getattr(args, "vectors", None):
        if getattr(args, "query_vectors", None):
            raise ValueError("--query-vectors goes with --vectors (the chunk vectors)")
        return None
    from ..index.chunking import chunk_corpus, parse_strategies
    from ..index.encoder.resolve import ModelUnavailable
    from ..index.imported import ImportedEncoder, chunk_keys, read_vector_table
    from ..index.models import load_encoder

    if getattr(args, "engine", "local") == "ray":
        raise ValueError("--vectors brings the vectors in: there is nothing to embed on Ray (drop --engine ray)")
    table = read_vector_table(args.vectors)
    queries = read_vector_table(args.query_vectors) if args.query_vectors else None
    try:
        model = _named_model(args.model, table.model, load_encoder)
    except (ModelUnavailable, ValueError) as exc:
        raise ValueError(f"the model {args.model or table.model!r} that {table.path.name} names is not available here "
                         f"(it counts wordpieces{'' if queries else ' and embeds the queries'}): {exc}; "
                         "pass --model with a local copy") from None
    chunks = {s.name: chunk_corpus(corpus, s) for s in parse_strategies(strategies)}
    encoder = ImportedEncoder(table, chunk_keys(chunks, table.key), model=model, queries=queries,
                              query_ids={q.text: q.id for q in truth.queries})
    encoder.check([c.embed_text for cs in chunks.values() for c in cs])
    return encoder
