"""What every subcommand shares: loading inputs, the store and the encoder, evaluating, checking options.

The public names (``__all__``) are the surface the subcommands of other
packages (``eval-store``, ``truth``, ``variants``) use; this module imports no
subcommand, so they can import it without a cycle through the parser.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

__all__ = ["UsageError", "progress_bar", "load_inputs", "open_corpus", "open_store", "cli_encoder", "evaluate_args",
           "write_results", "add_selection", "strategy_help", "retriever_help", "print_result"]


class UsageError(Exception):
    """Bad input: printed without a traceback, exit status 2."""


def strategy_help() -> str:
    """``--strategies``' help from the registry (plugins' strategies included)."""
    from ..index.chunking import DEFAULT_STRATEGIES, STRATEGIES

    return f"comma-separated from {','.join(STRATEGIES)} (default: {','.join(DEFAULT_STRATEGIES)})"


def retriever_help() -> str:
    """``--retrievers``' help from the registry (plugins' retrievers included)."""
    from ..retrieval.registry import retriever_names

    return (f"comma-separated from {','.join(retriever_names())} "
            f"(default: {','.join(retriever_names(default_only=True))})")


def add_selection(p, strategies: str | None = None, retrievers: str | None = None, *, json: bool = True) -> None:
    """Add ``--strategies``, ``--retrievers`` (help: the registries') and ``--json`` to the subparser ``p``."""
    p.add_argument("--strategies", default=None, help=strategies or strategy_help())
    p.add_argument("--retrievers", default=None, help=retrievers or retriever_help())
    if json:
        p.add_argument("--json", action="store_true", help="print one JSON object")


def progress_bar():
    """A progress callback drawing one tqdm bar per stage on stderr."""
    from tqdm import tqdm

    bars: dict[str, tqdm] = {}

    def update(event) -> None:
        stage, done, total = event.label, event.done, event.total
        if event.stage == "rank":
            return  # instant; a bar per configuration would only flicker
        key = event.stage if event.stage == "time" else stage  # timing: one bar, the configuration in its label
        bar = bars.get(key)
        if bar is None:
            for other in bars.values():
                other.close()
            bars.clear()
            unit = {"embed": "chunk", "time": "configuration"}.get(event.stage, "step")
            bar = bars[key] = tqdm(total=total, desc=stage, unit=unit, file=sys.stderr, leave=False, mininterval=0.5)
        if bar.desc != stage:
            bar.set_description_str(stage, refresh=False)
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()
            bars.pop(key, None)

    return update


def load_inputs(args):
    """The corpus and ground truth ``--corpus`` and ``--truth`` name (the truth beside the corpus by default).

    A file that fails to load is a warning on stderr; a corpus or truth that cannot be used is a
    :class:`UsageError`.
    """
    from ..documents.truth import TruthError, default_truth_path, load_truth

    corpus = open_corpus(args.corpus)
    truth_path = args.truth or default_truth_path(corpus.root)
    try:
        truth = load_truth(truth_path, corpus)
    except TruthError as exc:
        raise UsageError(str(exc)) from None
    return corpus, truth


def open_corpus(folder):
    """The corpus in ``folder`` (``None``: the bundled one): a file that fails to load is a warning on stderr, a
    folder that cannot be read a :class:`UsageError`."""
    from ..documents.corpus import load_corpus
    from ..documents.walk import CorpusError

    try:
        corpus = load_corpus(folder)
    except CorpusError as exc:
        raise UsageError(str(exc)) from None
    for f in corpus.failures:
        print(f"warning: {f.path} not loaded: {f.reason}", file=sys.stderr)
    return corpus


def print_result(res, as_json: bool, text, *, ensure_ascii: bool = True) -> int:
    """Print a command's result: ``res.as_json()`` as indented JSON when ``as_json`` (``--json``), else what
    ``text()`` says; the exit status, 0."""
    import json

    print(json.dumps(res.as_json(), indent=2, ensure_ascii=ensure_ascii) if as_json else text())
    return 0


def open_store(args):
    """The store, or None (``--no-cache``, or a cache folder that cannot be used: a warning, and results anyway)."""
    if getattr(args, "no_cache", False):
        return None
    import sqlite3

    from ..index.store import Store
    from ..index.store.keys import resolve_root

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
    """``--out`` must be a folder we can write, checked before any work is done (by writing a probe file there)."""
    if not out:
        return
    import os
    import shutil
    import tempfile

    path = Path(out)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out names {out!r}, which is a file; pass a folder for the output files")
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out!r} cannot be written ({str(probe)!r} is not a writable folder)")
    created = None if path.exists() else next((p for p in [path, *path.parents] if p.parent == probe), path)
    try:  # access() says yes to root in /proc and on read-only mounts: only a write tells
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise UsageError(f"--out {out!r} cannot be written ({exc.strerror or exc})") from None
    finally:
        if created is not None and created.is_dir():
            shutil.rmtree(created, ignore_errors=True)  # created again when the outputs are written


def _check_out_file(out: Path) -> None:
    """``out`` can be written: not a folder, not a special file (``/dev/null``), its folder writable."""
    import os

    if out.is_dir():
        raise UsageError(f"--out names {str(out)!r}, which is a folder; pass a file name like report.html")
    if out.exists() and not out.is_file():
        raise UsageError(f"--out names {str(out)!r}, which is not a regular file (a device, pipe or socket); "
                         "pass a file name like report.html")
    probe = out.parent
    while not probe.exists():
        probe = probe.parent
    if (out.exists() and not os.access(out, os.W_OK)) or not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"--out {str(out)!r} cannot be written (no write permission)")


def _check_report_out(out: Path) -> None:
    """An existing ``--out`` page is overwritten only when it is an earlier ragdiag report."""
    _check_out_file(out)
    if out.exists():
        try:
            with open(out, encoding="utf-8", errors="replace") as f:
                head = f.read(4096).lower()
        except OSError as exc:
            raise UsageError(f"--out {str(out)!r} cannot be read ({exc.strerror or exc})") from None
        if "ragdiag report" not in head and "ragdiag retrieval report" not in head:
            raise UsageError(f"{str(out)!r} exists and is not a ragdiag report; it is not overwritten. "
                             "Name another file with --out")


def _known_config(cfg, what: str):
    """A configuration ragdiag can evaluate (not an external run's ``ext/...`` label): checked by the registries."""
    from ..index.chunking import STRATEGIES
    from ..retrieval.registry import retriever_spec

    try:
        if cfg.strategy not in STRATEGIES:
            raise ValueError(f"a strategy from {','.join(STRATEGIES)}")
        retriever_spec(cfg.retriever)
    except ValueError as exc:
        raise UsageError(f"{what} {cfg.label!r} is not a ragdiag configuration: use STRATEGY/RETRIEVER ({exc})") from None
    return cfg


def _print_notes(ev) -> None:
    for note in ev.notes.values():
        print(f"note: {note}", file=sys.stderr)


def cli_encoder(args):
    """The encoder of ``--model`` and ``--precision`` (:func:`ragdiag.index.models.load_encoder`); Ray's: ``--engine ray``."""
    from ..index.encoder.resolve import ModelUnavailable
    from ..index.models import load_encoder

    try:
        encoder = load_encoder(args.model, precision=getattr(args, "precision", "fp32"))
    except (ModelUnavailable, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if getattr(args, "engine", "local") == "ray":
        from ..index.ray_engine import RayEncoder, RayUnavailable

        try:
            return RayEncoder(encoder, address=args.ray_address, actors=args.ray_actors,
                              gpus_per_actor=args.ray_gpus_per_actor)
        except RayUnavailable as exc:
            raise UsageError(str(exc)) from None
    return encoder


def cli_search_engine(args):
    """Where the searches run: None (this process), or shards on Ray with ``--engine ray`` (``--ray-actors`` of them)."""
    if getattr(args, "engine", "local") != "ray":
        return None
    from ..index.ray_engine import RayUnavailable
    from ..retrieval.ray_search import ray_search

    try:
        return ray_search(args.ray_actors, address=args.ray_address)
    except RayUnavailable as exc:
        raise UsageError(str(exc)) from None


def _print_strategy_rows(partial) -> None:
    """After each strategy: its rows on stderr at once (the final tables still go to stdout)."""
    from dataclasses import replace

    from ..analyses.summary import format_summary

    name = list(partial.indexes)[-1]
    view = replace(partial, results={c: r for c, r in partial.results.items() if c.strategy == name})
    print(f"\nstrategy {name} done ({len(partial.indexes)} so far):\n{format_summary(view)}", file=sys.stderr)


def evaluate_args(args, strategies, retrievers, loaded=None, *, stream: bool = False, encoder=None,
                  retriever_options: dict | None = None):
    """Evaluate with the CLI's encoder (``encoder``: one the caller goes on using, so the model loads once;
    ``retriever_options``: build options of the registry's retrievers, e.g. the dense variants' ``rescore``)."""
    from ..evaluation.evaluate import evaluate

    from .vectors import imported_encoder

    corpus, truth = loaded or load_inputs(args)
    try:
        imported = imported_encoder(args, corpus, truth, strategies)
    except ValueError as exc:  # a vector file that cannot be used: one line
        raise UsageError(str(exc)) from None
    encoder = imported or (encoder if encoder is not None else cli_encoder(args))
    store = open_store(args)
    if store is not None and not getattr(args, "no_snapshot", False) and imported is None:
        from ..index.snapshot import seed_from_snapshot

        seed_from_snapshot(store, corpus, truth, encoder, strategies=strategies,
                           log=lambda msg: print(msg, file=sys.stderr))
    t = time.perf_counter()
    ev = evaluate(corpus, truth, encoder=encoder, strategies=strategies, retrievers=retrievers, store=store,
                  cross_encoder=args.cross_encoder, progress=progress_bar(),
                  on_strategy=_print_strategy_rows if stream and len(strategies) > 1 else None,
                  retriever_options=retriever_options, engine=cli_search_engine(args))
    _print_notes(ev)
    embedded = sum(idx.embedded for idx in ev.indexes.values())
    total = sum(len(idx.chunks) for idx in ev.indexes.values())
    cache = f"store {store.root}" if store is not None else "no store"
    print(f"embedded {embedded} of {total} chunk vectors ({total - embedded} reused from {cache}); "
          f"evaluation took {time.perf_counter() - t:.1f} s", file=sys.stderr)
    if store is not None:
        from ..index.store.glue import record_evaluation

        record_evaluation(store, ev)
    return ev


def write_results(ev, out: str | None) -> None:
    """Write ``eval --out``'s files (:func:`ragdiag.present.export.write_outputs`) when ``out`` is given, naming each."""
    from ..present.export import write_outputs

    if out:
        for path in write_outputs(ev, out):
            print(f"wrote {path}")


def _print_unavailable(ev) -> None:
    for name, reason in ev.unavailable.items():
        print(f"\nunavailable: {name}: {reason}")

