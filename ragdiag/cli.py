"""``python -m ragdiag``: the same results as the dashboard, headless."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .defaults import ALPHA, DEFAULT_CUT, DEFAULT_KEEP, PRIMARY_K

__all__ = ["main"]




class UsageError(Exception):
    """Bad input: printed without a traceback, exit status 2."""


def _progress_bar():
    """A progress callback drawing one tqdm bar per stage on stderr."""
    from tqdm import tqdm

    bars: dict[str, tqdm] = {}

    def update(event) -> None:
        stage, done, total = event.label, event.done, event.total
        if event.stage == "rank":
            return  # instant; a bar per configuration would only flicker
        bar = bars.get(stage)
        if bar is None:
            for other in bars.values():
                other.close()
            bars.clear()
            bar = bars[stage] = tqdm(total=total, desc=stage, unit="chunk" if event.stage == "embed" else "step",
                                     file=sys.stderr, leave=False, mininterval=0.5)
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()
            bars.pop(stage, None)

    return update


def _load(args):
    from .corpus import CorpusError, load_corpus
    from .truth import TruthError, default_truth_path, load_truth

    try:
        corpus = load_corpus(args.corpus)
    except CorpusError as exc:
        raise UsageError(str(exc)) from None
    for f in corpus.failures:
        print(f"warning: {f.path} not loaded: {f.reason}", file=sys.stderr)
    truth_path = args.truth or default_truth_path(corpus.root)
    try:
        truth = load_truth(truth_path, corpus)
    except TruthError as exc:
        raise UsageError(str(exc)) from None
    return corpus, truth


def _store(args):
    """The store, or None (``--no-cache``, or a cache folder that cannot be used: a warning, and results anyway)."""
    if getattr(args, "no_cache", False):
        return None
    import sqlite3

    from .store import Store, resolve_root

    root = resolve_root(args.cache)
    if root.exists() and not root.is_dir():
        raise UsageError(f"--cache names {str(root)!r}, which is a file; pass a folder (it is created if missing)")
    try:
        return Store(args.cache)
    except (OSError, sqlite3.Error) as exc:
        print(f"warning: cannot use the cache folder {str(root)!r} ({getattr(exc, 'strerror', None) or exc}); "
              "continuing without it: everything is computed, nothing is stored", file=sys.stderr)
        return None


def _check_out_folder(out: str | None) -> None:
    """``--out`` must be a folder we can write, checked before any work is done."""
    if not out:
        return
    import os

    path = Path(out)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out names {out!r}, which is a file; pass a folder for the output files")
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out!r} cannot be written ({str(probe)!r} is not a writable folder)")


def _check_out_file(out: Path) -> None:
    import os

    if out.is_dir():
        raise UsageError(f"--out names {str(out)!r}, which is a folder; pass a file name like report.html")
    probe = out.parent
    while not probe.exists():
        probe = probe.parent
    if (out.exists() and not os.access(out, os.W_OK)) or not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"--out {str(out)!r} cannot be written (no write permission)")


def _finite(name: str, value: float, low: float, high: float, *, low_open: bool = False) -> float:
    import math

    ok = math.isfinite(value) and (low < value if low_open else low <= value) and value <= high
    if not ok:
        bracket = "(" if low_open else "["
        raise UsageError(f"{name} must be a cosine distance in {bracket}{low:g}, {high:g}], got {value}")
    return value


def _keep(value: int) -> int:
    if value < 1:
        raise UsageError(f"--keep must be at least 1, got {value}")
    return value


def _known_config(cfg, what: str):
    """A configuration ragdiag can evaluate (not an external run's ``ext/...`` label): checked by the registries."""
    from .chunking import STRATEGIES
    from .retrieval.registry import retriever_spec

    try:
        if cfg.strategy not in STRATEGIES:
            raise ValueError(f"a strategy from {','.join(STRATEGIES)}")
        retriever_spec(cfg.retriever)
    except ValueError as exc:
        raise UsageError(f"{what} {cfg.label!r} is not a ragdiag configuration: use STRATEGY/RETRIEVER ({exc})") from None
    return cfg


def _print_notes(ev) -> None:
    for note in getattr(ev, "notes", {}).values():
        print(f"note: {note}", file=sys.stderr)


def _encoder(args):
    from .encoder import ModelUnavailable, load_encoder

    try:
        encoder = load_encoder(args.model, precision=getattr(args, "precision", "fp32"))
    except (ModelUnavailable, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if getattr(args, "engine", "local") == "ray":
        from .ray_engine import RayEncoder, RayUnavailable

        try:
            return RayEncoder(encoder, address=args.ray_address, actors=args.ray_actors,
                              gpus_per_actor=args.ray_gpus_per_actor)
        except RayUnavailable as exc:
            raise UsageError(str(exc)) from None
    return encoder


def _print_strategy_rows(partial) -> None:
    """After each strategy: its rows on stderr at once (the final tables still go to stdout)."""
    from dataclasses import replace

    from .results import format_summary

    name = list(partial.indexes)[-1]
    view = replace(partial, results={c: r for c, r in partial.results.items() if c.strategy == name})
    print(f"\nstrategy {name} done ({len(partial.indexes)} so far):\n{format_summary(view)}", file=sys.stderr)


def _evaluate(args, strategies, retrievers, loaded=None, *, stream: bool = False):
    from .evaluate import evaluate

    corpus, truth = loaded or _load(args)
    encoder = _encoder(args)
    store = _store(args)
    if store is not None and not getattr(args, "no_snapshot", False):
        from .snapshot import seed_from_snapshot

        seed_from_snapshot(store, corpus, truth, encoder, strategies=strategies,
                           log=lambda msg: print(msg, file=sys.stderr))
    t = time.perf_counter()
    ev = evaluate(corpus, truth, encoder=encoder, strategies=strategies, retrievers=retrievers, store=store,
                  cross_encoder=args.cross_encoder, progress=_progress_bar(), diagnosis_k=args.k,
                  on_strategy=_print_strategy_rows if stream and len(strategies) > 1 else None)
    _print_notes(ev)
    embedded = sum(idx.embedded for idx in ev.indexes.values())
    total = sum(len(idx.chunks) for idx in ev.indexes.values())
    cache = f"store {store.root}" if store is not None else "no store"
    print(f"embedded {embedded} of {total} chunk vectors ({total - embedded} reused from {cache}); "
          f"evaluation took {time.perf_counter() - t:.1f} s", file=sys.stderr)
    if store is not None:
        from .store import record_evaluation

        record_evaluation(store, ev)
    return ev


def _write_outputs(ev, out: str | None) -> None:
    from .results import write_outputs

    if out:
        for path in write_outputs(ev, out):
            print(f"wrote {path}")


def _print_unavailable(ev) -> None:
    for name, reason in ev.unavailable.items():
        print(f"\nunavailable: {name}: {reason}")


def cmd_eval(args) -> int:
    from .chunking import parse_strategies
    from .evaluate import parse_retrievers
    from .results import chunking_rows, format_rows, format_summary

    try:
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_out_folder(args.out)
    ev = _evaluate(args, strategies, retrievers, stream=True)
    n_in = int(ev.in_domain.sum())
    print(f"corpus {ev.corpus.name}: {len(ev.corpus.documents)} documents, {ev.corpus.n_chars:,} characters; "
          f"{len(ev.truth.questions)} questions, {n_in} in-domain queries, {len(ev.queries) - n_in} ood")
    print(f"model {ev.encoder_stamp.get('model')} ({ev.encoder_stamp.get('precision')}); "
          f"max |L2^2/2 - cosine distance| = {max(i.normalisation_error for i in ev.indexes.values()):.1e}\n")
    print(format_summary(ev))
    for phrasing in ev.truth.phrasings:
        print(f"\nphrasing: {phrasing}")
        print(format_summary(ev, phrasing=phrasing))
    print("\nchunking")
    print(format_rows(chunking_rows(ev)))
    for name, idx in ev.indexes.items():
        if idx.report.destroyed:
            items = ", ".join(f"{d.question_id} (cut at {','.join(map(str, d.cuts))})" for d in idx.report.destroyed)
            print(f"destroyed by {name}: {items}")
    _print_unavailable(ev)
    _write_outputs(ev, args.out)
    return 0


def cmd_compare(args) -> int:
    import json

    from .chunking import parse_strategies
    from .evaluate import parse_key, parse_retrievers
    from .results import check_phrasing, compare, compare_in_family

    try:
        a, b = parse_key(args.a), parse_key(args.b)
        if args.family == "none":
            strategies, retrievers = sorted({a.strategy, b.strategy}), sorted({a.retriever, b.retriever})
        else:  # the family's members: the configurations asked for (default: all), always with A and B
            strategies = sorted({*(s.name for s in parse_strategies(args.strategies)), a.strategy, b.strategy})
            retrievers = sorted({*parse_retrievers(args.retrievers), a.retriever, b.retriever})
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _known_config(a, "CONFIG_A"), _known_config(b, "CONFIG_B")
    loaded = _load(args)
    known = ("all", *loaded[1].phrasings)
    if args.phrasing not in known:  # before any model is loaded: an unknown phrasing would test 0 queries
        raise UsageError(f"unknown phrasing {args.phrasing!r}; choose one of: {', '.join(known)}")
    ev = _evaluate(args, strategies, retrievers, loaded)
    for cfg in (a, b):
        if cfg.retriever in ev.unavailable:
            raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    k = None if args.mrr else args.k
    try:
        check_phrasing(ev, args.phrasing)
        if args.family == "none":
            c = compare(ev, a, b, k=k, phrasing=args.phrasing)
        else:
            c = compare_in_family(ev, a, b, k=k, phrasing=args.phrasing, planned=args.family == "planned")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(c.as_json(), indent=2))
        return 0
    print(c.summary())
    print(c.verdict)
    print(c.power)
    if c.wins:
        print(f"  queries {a.label} finds, {b.label} misses: {', '.join(c.wins)}")
    if c.losses:
        print(f"  queries {b.label} finds, {a.label} misses: {', '.join(c.losses)}")
    return 0


def cmd_pairs(args) -> int:
    import json

    from .chunking import parse_strategies
    from .evaluate import parse_key, parse_retrievers
    from .results import check_phrasing, family, family_rows, format_rows

    try:
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
        baseline = parse_key(args.baseline) if args.baseline else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if baseline is not None:
        strategies = sorted({*strategies, baseline.strategy})
        retrievers = sorted({*retrievers, baseline.retriever})
    loaded = _load(args)
    known = ("all", *loaded[1].phrasings)
    if args.phrasing not in known:
        raise UsageError(f"unknown phrasing {args.phrasing!r}; choose one of: {', '.join(known)}")
    ev = _evaluate(args, strategies, retrievers, loaded)
    try:
        check_phrasing(ev, args.phrasing)
        fam = family(ev, k=args.k, phrasing=args.phrasing, baseline=baseline)
    except (ValueError, KeyError) as exc:
        raise UsageError(str(exc)) from None
    rows = family_rows(fam)
    if args.json:
        print(json.dumps({"unit": "question", "k": args.k, "phrasing": args.phrasing,
                          "family": fam[0].family_name if fam else "", "family_size": len(fam),
                          "shown_different": sum(c.status == "different" for c in fam), "rows": rows}, indent=2))
        return 0
    name = fam[0].family_name if fam else "no comparisons"
    print(f"{name} at R@{args.k} ({args.phrasing}), over questions; Holm within this family")
    print(format_rows([{k: r[k] for k in ("a", "b", "wins", "losses", "ties", "p", "p_holm", "difference", "low",
                                          "high", "status")} for r in rows]))
    below = sum(c.p_holm < ALPHA for c in fam)
    print(f"\n{below} of {len(fam)} with Holm p < {ALPHA}" + (" (shown different)" if fam and fam[0].primary
                                                           else f" (descriptive: verdicts are at R@{PRIMARY_K})"))
    return 0


def _gate_config(args):
    from .evaluate import parse_key

    try:
        cfg = parse_key(args.config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _known_config(cfg, "CONFIG")
    _keep(args.keep)
    ev = _evaluate(args, [cfg.strategy], [cfg.retriever])
    if cfg.retriever in ev.unavailable:
        raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    return ev, cfg


def cmd_sweep(args) -> int:
    import json

    from .compare import upper_bound_words
    from .results import check_cuts, format_rows, gate_inputs_for, sweep_cuts
    from .threshold import GATE_DISTANCE, bluffs_at, rate_rows, sweep

    try:
        cuts = sweep_cuts(args.start, args.stop, args.step)
        if args.cut is not None:
            check_cuts([args.cut])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    ev, cfg = _gate_config(args)
    try:
        inputs = gate_inputs_for(ev, cfg, keep=args.keep)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps({"config": cfg.label, "keep": args.keep, "distance": GATE_DISTANCE,
                          "answerable": int(inputs.in_domain.sum()), "out_of_domain": int((~inputs.in_domain).sum()),
                          "rows": rate_rows(inputs, cuts)}, indent=2))
        return 0
    table = sweep(inputs, cuts)
    print(f"{cfg.label}: the gate keeps at most {args.keep} chunks closer than the cut; distance: {GATE_DISTANCE}. "
          f"{table.n_in} answerable queries, {table.n_ood} out-of-domain")
    print(format_rows(table.rows()))
    if args.cut is not None:
        row = sweep(inputs, [args.cut]).row(args.cut)
        print(f"\nat cut {args.cut:g}: " + "; ".join(
            upper_bound_words(row[key], n, what) for key, n, what in (
                ("bluffs", table.n_ood, "out-of-domain queries bluff"),
                *((f"bluffs_{k}", table.n_by_kind[k], f"{k} out-of-domain queries bluff") for k in table.n_by_kind))))
        res = ev.result(cfg)
        chunks = ev.indexes[cfg.strategy].chunks
        bluffs = bluffs_at(res, ev.queries, cut=args.cut, keep=args.keep)
        print(f"bluffing out-of-domain queries at cut {args.cut:g}: {len(bluffs)}")
        for b in bluffs:
            pos, d = b.kept[0]
            q = ev.queries[ev.query_index(b.query_id)]
            print(f"  {b.query_id} ({b.kind}) {q.text[:70]!r} -> {chunks[pos].id} at {d:.3f}")
    return 0


def cmd_threshold(args) -> int:
    import json

    from .results import gate_inputs_for
    from .threshold import GATE_DISTANCE, Goal, cut_choice

    try:
        goal = Goal(max_bluff=args.max_bluff, min_answered=args.min_answered)
    except ValueError as exc:
        raise UsageError(str(exc).replace("max_bluff", "--max-bluff").replace("min_answered", "--min-answered")) from None
    if not 2 <= args.folds <= 20:
        raise UsageError(f"--folds must be between 2 and 20, got {args.folds}")
    ev, cfg = _gate_config(args)
    try:
        choice = cut_choice(gate_inputs_for(ev, cfg, keep=args.keep), goal, folds=args.folds)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps({"config": cfg.label, "keep": args.keep, **choice.as_json()}, indent=2))
        return 0
    print(f"{cfg.label}, keep {args.keep}; distance: {GATE_DISTANCE}")
    print(f"rule: {choice.rule}")
    if choice.cut is None:
        print("no cut reaches this goal on this set")
    else:
        print(f"cut: {choice.cut:.4f}")
        print("in sample:        " + _rates_line(choice.in_sample))
    print(f"cross-validated ({choice.folds} folds grouped by question, seed {choice.seed}): "
          + _rates_line(choice.cross_validated))
    print("conformal: " + (f"cut {choice.conformal_cut:.4f} ({choice.conformal})" if choice.conformal_cut is not None
                           else choice.conformal))
    return 0


def _rates_line(cells: dict) -> str:
    def one(name):
        c = cells[name]
        rate = "n/a" if c["rate"] is None else f"{c['rate']:.3f}"
        return f"{name} {c['count']} = {rate} [{c['low']:.3f}, {c['high']:.3f}]"

    return "; ".join(one(n) for n in ("answered", "kept_wrong", "bluffs") if n in cells)


def cmd_index(args) -> int:
    from .store import _chunking_label, current_stamps, format_status_table

    store = _store(args) if not args.no_cache else None
    if store is None:
        raise UsageError("the index commands need the store (drop --no-cache)")
    if args.action == "status":
        current = None
        try:
            corpus, truth = _load(args)
            current = current_stamps(corpus, _encoder(args))
        except UsageError as exc:
            print(f"warning: cannot judge staleness against the current corpus/model: {exc}", file=sys.stderr)
        print(format_status_table(store.status(current)))
        return 0
    if args.corpus and not args.stale:
        gone = store.indexes_of(args.corpus)
        if not gone:
            print(f"no stored index of corpus {args.corpus!r}; nothing removed")
            return 0
        print(f"removing {len(gone)} index(es) of corpus {args.corpus!r} (the vectors no other index uses); "
              "other corpora's indexes and cached pair scores are kept:")
        for s in gone:
            print(f"  {Path(s.model).name or s.model} {s.precision} {_chunking_label(s.chunking)} ({s.n_chunks} chunks)")
        print(store.clear(corpus_root=args.corpus))
        return 0
    corpus, truth = _load(args) if args.stale else (None, None)
    current = current_stamps(corpus, _encoder(args)) if args.stale else None
    if not args.stale:
        n = len(store.indexes())
        print(f"removing everything in the store {str(store.root)!r}: {n} index(es), their vectors and cached pair "
              "scores (use --corpus DIR to clear one corpus, --stale for stale indexes only)")
    res = store.clear(stale_only=args.stale, current=current)
    print(res)
    return 0


def cmd_ingest(args) -> int:
    from .corpus import CorpusError
    from .ingest import format_ingest_table, ingest_folder

    import math

    if args.max_bytes is not None and args.max_bytes < 1:
        raise UsageError(f"--max-bytes must be at least 1, got {args.max_bytes}")
    if args.max_pages < 1:
        raise UsageError(f"--max-pages must be at least 1, got {args.max_pages}")
    if not (math.isfinite(args.time_limit) and args.time_limit > 0):
        raise UsageError(f"--time-limit must be a positive number of seconds, got {args.time_limit}")
    try:
        rows, corpus = ingest_folder(args.folder, max_bytes=args.max_bytes, strip_page_furniture=args.strip_furniture,
                                     max_pages=args.max_pages, time_limit_s=args.time_limit)
    except CorpusError as exc:
        raise UsageError(str(exc)) from None
    print(format_ingest_table(rows))
    if corpus is None:
        print("error: nothing could be loaded from this folder", file=sys.stderr)
        return 1
    return 0


def cmd_eval_run(args) -> int:
    from collections import Counter

    from .evaluate import Evaluation, parse_key
    from .external import RunError, attach_run, load_run
    from .results import compare, format_rows, format_summary, sweep_table

    against = None
    if args.compare:
        try:
            against = _known_config(parse_key(args.compare), "--compare")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    _keep(args.keep)
    _check_out_folder(args.out)
    if against is not None:
        ev = _evaluate(args, [against.strategy], [against.retriever])
        if against.retriever in ev.unavailable:
            raise UsageError(f"{against.label} cannot run: {ev.unavailable[against.retriever]}")
    else:
        corpus, truth = _load(args)
        ev = Evaluation(corpus, truth, truth.queries, {}, {}, diagnosis_k=args.k)
    try:
        run = load_run(args.run, ev.truth, name=args.name, distances=args.distances, corpus=ev.corpus)
    except RunError as exc:
        raise UsageError(str(exc)) from None
    ev = attach_run(ev, run)
    cfg = run.key
    for note in run.notes:
        print(f"note: {note}", file=sys.stderr)
    if run.missing:
        print(f"warning: {len(run.missing)} ground-truth queries are missing from the run and count as misses: "
              f"{', '.join(run.missing[:10])}{' ...' if len(run.missing) > 10 else ''}", file=sys.stderr)
    print(format_summary(ev))
    res = ev.results[cfg]
    counts = Counter(d for d in res.diagnosis if d != "ood")
    print("\ndiagnoses of " + cfg.label + ": " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if against is not None:
        c = compare(ev, cfg, against, k=args.k)
        print("\n" + c.summary())
        print(c.verdict)
    if run.distances:
        keep = min(args.keep, ev.results[cfg].top_distance.shape[1])
        print(f"\nthreshold sweep of {cfg.label} (keep {keep})")
        print(format_rows(sweep_table(ev, cfg, keep=keep,
                                      cuts=[round(x, 3) for x in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]).rows()))
    _write_outputs(ev, args.out)
    return 0


def cmd_report(args) -> int:
    from .chunking import STRATEGIES, parse_strategies
    from .evaluate import parse_key, parse_retrievers
    from .report import build_report, default_config, write_report

    try:
        cfg = parse_key(args.config) if args.config else None
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    import math

    if not (math.isfinite(args.cut) and 0 < args.cut <= 2):
        raise UsageError(f"--cut must be a cosine distance in (0, 2], e.g. {DEFAULT_CUT}; got {args.cut}")
    if args.keep < 1:
        raise UsageError(f"--keep must be at least 1, got {args.keep}")
    out = Path(args.out)
    if out.suffix.lower() == ".md":
        raise UsageError(f"--out names the HTML file (e.g. report.html); the Markdown is written beside it, got {out}")
    from .report import markdown_twin

    try:
        md = markdown_twin(out, args.md)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_out_file(out)
    _check_out_file(md)
    if cfg is not None:
        _known_config(cfg, "--config")
    if cfg is not None:  # the named configuration is always evaluated, with the others asked for
        strategies = sorted({*strategies, cfg.strategy}, key=list(STRATEGIES).index)
        retrievers = list(dict.fromkeys([*retrievers, cfg.retriever]))
    ev = _evaluate(args, strategies, retrievers)
    if cfg is None:
        cfg = default_config(ev)
        print(f"no --config: reporting {cfg.label}", file=sys.stderr)
    if cfg.retriever in ev.unavailable:
        raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    cost_items = machine_info = None
    if not args.no_cost:  # measured on this machine: build time, latency, tokens (ragdiag.cost)
        from .cost import costs, machine

        cost_items = costs(ev, _encoder(args), cut=args.cut, keep=args.keep, cross_encoder=args.cross_encoder)
        machine_info = machine()
    try:
        report = build_report(ev, config=cfg, cut=args.cut, keep=args.keep, k=args.k, costs=cost_items,
                              machine=machine_info)
        paths = write_report(report, out, md=md)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for path in paths:
        print(f"wrote {path}")
    return 0


def _strategy_help() -> str:
    from .chunking import DEFAULT_STRATEGIES, STRATEGIES

    return f"comma-separated from {','.join(STRATEGIES)} (default: {','.join(DEFAULT_STRATEGIES)})"


def _retriever_help() -> str:
    from .retrieval.registry import retriever_names

    return f"comma-separated from {','.join(retriever_names())} (default: {','.join(retriever_names(default_only=True))})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ragdiag", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(p, *, model=True):
        p.add_argument("--corpus", help="folder of documents (default: the bundled scikit-learn user guide)")
        p.add_argument("--truth", help="ground-truth JSON/YAML (default: <corpus folder>.truth.json beside it)")
        p.add_argument("--cache", help="store folder (default: $RAGDIAG_CACHE or ./.ragdiag-cache)")
        p.add_argument("--no-cache", action="store_true", help="compute everything, store nothing")
        p.add_argument("--no-snapshot", action="store_true",
                       help="do not seed the store from the bundled corpus's shipped index "
                            "(also: RAGDIAG_NO_SNAPSHOT=1)")
        if model:
            p.add_argument("--model", help="embedding model folder or cached hub id (default: all-MiniLM-L6-v2)")
            p.add_argument("--cross-encoder", help="cross-encoder for rerank-ce: folder or cached hub id "
                                                   "(default: cross-encoder/ms-marco-MiniLM-L-6-v2)")
            p.add_argument("--k", type=int, default=20, help="rank cut-off for hit/ranked-low diagnoses and compare")

    p = sub.add_parser("eval", help="evaluate strategies x retrievers; print the table")
    common(p)
    p.add_argument("--strategies", default=None, help=_strategy_help())
    p.add_argument("--retrievers", default=None,
                   help=_retriever_help())
    p.add_argument("--out", help="write summary.json and per_query.csv to this folder")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="where chunks are embedded: in this process, or on Ray (pip install -r requirements-ray.txt)")
    p.add_argument("--ray-address", default=None, help="with --engine ray: a cluster (e.g. auto, ray://head:10001); "
                                                       "default: start a local instance")
    p.add_argument("--ray-actors", type=int, default=None, help="encoder actors (default: one per CPU, or per GPU)")
    p.add_argument("--ray-gpus-per-actor", type=float, default=0.0, help="GPUs per encoder actor (default 0: CPU)")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("compare", help="paired exact sign-flip test over questions between two configurations")
    common(p)
    p.add_argument("a", metavar="CONFIG_A", help="e.g. E/hybrid")
    p.add_argument("b", metavar="CONFIG_B", help="e.g. E/dense")
    p.add_argument("--phrasing", default="all", help="all, or one phrasing of the ground truth (e.g. course)")
    p.add_argument("--mrr", action="store_true", help="compare reciprocal ranks (MRR) instead of R@k")
    p.add_argument("--family", choices=["none", "all", "planned"], default="none",
                   help="Holm-correct within a family: all pairs of the evaluated configurations, or the planned "
                        "family (CONFIG_A against each other configuration); default: this pair alone")
    p.add_argument("--strategies", default=None, help="with --family: the family's strategies (default: all six)")
    p.add_argument("--retrievers", default=None, help="with --family: the family's retrievers (default: all)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_compare, k=PRIMARY_K)

    p = sub.add_parser("pairs", help="every paired comparison of a family (all pairs, or --baseline against each "
                                     "other), over questions, Holm within it")
    common(p)
    p.add_argument("--strategies", default=None, help="comma-separated, e.g. A,C,E (default: all six)")
    p.add_argument("--retrievers", default=None, help="comma-separated (default: all)")
    p.add_argument("--baseline", default=None, help="planned family: this configuration against each other one")
    p.add_argument("--phrasing", default="all", help="all, or one phrasing of the ground truth")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_pairs, k=PRIMARY_K)

    p = sub.add_parser("sweep", help="the abstention threshold table for one configuration")
    common(p)
    p.add_argument("config", metavar="CONFIG", help="e.g. E/dense")
    p.add_argument("--keep", type=int, default=DEFAULT_KEEP, help=f"keep at most N chunks under the cut (default {DEFAULT_KEEP})")
    p.add_argument("--start", type=float, default=0.3)
    p.add_argument("--stop", type=float, default=0.9)
    p.add_argument("--step", type=float, default=0.025)
    p.add_argument("--cut", type=float, default=None, help="also list the bluffing ood queries at this cut")
    p.add_argument("--json", action="store_true",
                   help="print JSON rows: per cut, {count, rate, low, high} of every outcome")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("threshold", help="choose the cut for a goal (max bluff rate or min answered), "
                                         "in sample, cross-validated and conformal")
    common(p)
    p.add_argument("config", metavar="CONFIG", help="e.g. E/hybrid")
    p.add_argument("--max-bluff", type=float, default=None, help="goal: bluff rate at most this (e.g. 0.05)")
    p.add_argument("--min-answered", type=float, default=None, help="goal: answered rate at least this (e.g. 0.5)")
    p.add_argument("--keep", type=int, default=DEFAULT_KEEP, help=f"keep at most N chunks (default {DEFAULT_KEEP})")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds, grouped by question (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_threshold)

    p = sub.add_parser("report", help="one self-contained HTML report (and its Markdown) of a run")
    common(p)
    p.add_argument("--config", default=None,
                   help="the configuration the report is about, e.g. E/hybrid (default: E/hybrid when evaluated)")
    p.add_argument("--cut", type=float, default=DEFAULT_CUT, help=f"abstention cut (cosine distance, default {DEFAULT_CUT})")
    p.add_argument("--keep", type=int, default=4, help="the gate keeps at most N chunks under the cut (default 4)")
    p.add_argument("--strategies", default=None, help=_strategy_help())
    p.add_argument("--retrievers", default=None,
                   help=_retriever_help())
    p.add_argument("--out", default="report.html", help="HTML file to write; the Markdown goes beside it (.md)")
    p.add_argument("--no-cost", action="store_true", help="skip measuring build time and per-query latency")
    p.add_argument("--md", default=None, help="Markdown file to write (default: --out with .md; an existing file "
                                              "there that is not a ragdiag report is never overwritten)")
    p.set_defaults(func=cmd_report, k=PRIMARY_K)  # the paired comparisons carry verdicts at the primary k

    p = sub.add_parser("ingest", help="load a folder (Markdown, text, HTML, PDF) and report every file's status")
    p.add_argument("folder", metavar="DIR")
    p.add_argument("--max-bytes", type=int, default=None,
                   help="size limit per file (default $RAGDIAG_MAX_FILE_BYTES or 50 MB)")
    p.add_argument("--max-pages", type=int, default=2000, help="page limit per PDF (default 2000)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per document (default 60)")
    p.add_argument("--strip-furniture", action="store_true",
                   help="remove repeated page headers/footers (PDF) before chunking")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("eval-run", help="evaluate another system's results (JSON Lines) against the ground truth")
    common(p)
    p.add_argument("run", metavar="RUN.jsonl")
    p.add_argument("--name", help="name of the run in tables (default: file name)")
    p.add_argument("--distances", action="store_true",
                   help="hit scores are cosine distances (lower = closer): enables the threshold sweep")
    p.add_argument("--compare", metavar="CONFIG", help="also evaluate a ragdiag configuration (e.g. E/hybrid) "
                                                        "and run the paired sign test against it")
    p.add_argument("--keep", type=int, default=4)
    p.add_argument("--out", help="write summary.json and per_query.csv to this folder")
    p.set_defaults(func=cmd_eval_run)

    from .adapters.cli import register_eval_store

    register_eval_store(sub, common)

    p = sub.add_parser("index", help="list or clear stored indexes")
    common(p)
    p.add_argument("action", choices=["status", "clear"])
    p.add_argument("--stale", action="store_true", help="with clear: only indexes stale against the current state")
    p.epilog = "index clear --corpus DIR removes only that corpus's indexes; without --corpus or --stale, everything."
    p.set_defaults(func=cmd_index)

    from .authoring.cli import register as register_truth

    register_truth(sub)

    from .cli_diag import register

    register(sub, common)  # funnel, hubs, cost

    from .variants_cli import register as register_variants

    register_variants(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .encoder import offline

    offline()
    from .retrieval.registry import load_plugins  # plugins register retrievers and strategies before help is built

    try:
        load_plugins()
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "k", 1) < 1:
        parser.error("--k must be >= 1")
    from .encoder import ModelUnavailable

    try:
        return args.func(args)
    except (UsageError, ModelUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
