"""``python -m ragdiag truth check|stats|suggest``: write and check a ground truth from the command line."""

from __future__ import annotations

import sys
from pathlib import Path

from .common import UsageError, _check_out_file, open_corpus, print_result
from .options import add_k

__all__ = ["register"]


def _corpus_for(args, truth_file: Path | None = None):
    folder = args.corpus
    if folder is None and truth_file is not None:  # kb.truth.json -> kb/ beside it, when there is one
        name = truth_file.name
        for suffix in (".truth.json", ".truth.yaml", ".truth.yml"):
            if name.endswith(suffix) and (truth_file.parent / name[: -len(suffix)]).is_dir():
                folder = truth_file.parent / name[: -len(suffix)]
    return open_corpus(folder)


def _open(path: str):
    from ..authoring.save import open_truth

    p = Path(path)
    if p.exists() and not p.is_file():
        raise UsageError(f"{path}: not a regular file (a folder, device or pipe); name a .json or .yaml file")
    if not p.is_file():
        raise UsageError(f"{path}: no such file; start one with `python -m ragdiag truth suggest` or on the "
                         "dashboard's Ground truth page")
    try:
        return open_truth(p)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def cmd_check(args) -> int:
    """``truth check FILE``: print every problem; exit status 1 on an error (or any warning without --errors-only)."""
    from ..authoring.checks import Problem, check_truth
    from ..authoring.save import open_truth

    if Path(args.file).is_file():
        try:
            open_truth(args.file)
        except ValueError as exc:  # unreadable JSON/YAML is a problem of the file, not of the command line
            print(Problem("error", "file", "", str(exc)))
            return 1
    opened = _open(args.file)
    corpus = _corpus_for(args, opened.path)
    problems = check_truth(opened.data, corpus, source=opened.path.name)
    errors = [p for p in problems if p.severity == "error"]
    for p in problems:
        print(p)
    n_q = len(opened.data.get("questions") or []) if isinstance(opened.data.get("questions"), list) else 0
    print(f"{opened.path.name} against corpus {corpus.name}: {n_q} questions; {len(errors)} error(s), "
          f"{len(problems) - len(errors)} warning(s)", file=sys.stderr)
    if errors or (problems and not args.errors_only):
        return 1
    return 0


def cmd_stats(args) -> int:
    """``truth stats FILE``: print the coverage table of a ground-truth file."""
    from ..authoring.coverage import coverage, format_coverage

    opened = _open(args.file)
    corpus = _corpus_for(args, opened.path)
    cov = coverage(opened.data, corpus, k=args.gate.k, family_size=args.family_size)
    return print_result(cov, args.json, lambda: format_coverage(cov))


def cmd_suggest(args) -> int:
    """``truth suggest --out FILE``: write candidate needles and near out-of-domain queries to start from."""
    from ..authoring.save import dumps
    from ..authoring.suggest import suggest, to_truth_data

    out = Path(args.out)
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists; pass --force to replace it, or another --out")
    if args.ood is not None and args.ood < 0:
        raise UsageError(f"--ood must be 0 or more, got {args.ood}")
    if not out.parent.is_dir():
        raise UsageError(f"--out {str(out)!r}: the folder {str(out.parent)!r} does not exist")
    _check_out_file(out)
    corpus = _corpus_for(args)
    sugg = suggest(corpus, args.n, n_ood=args.ood)
    fmt = "yaml" if out.suffix.lower() in (".yaml", ".yml") else "json"
    from ..core.files import OutputError, atomic_write

    try:
        atomic_write(out, dumps(to_truth_data(sugg), fmt))
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    for note in sugg.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {out}: {len(sugg.questions)} candidate needles ({sugg.eligible} eligible sentences in "
          f"{len(corpus.documents)} documents) and {len(sugg.ood)} near out-of-domain candidates; write the "
          "phrasings ('draft' is only a template), then `python -m ragdiag truth check`")
    return 0


def register(sub) -> None:
    """Add ``truth`` and its subcommands to the main parser's subparsers."""
    p = sub.add_parser("truth", help="check, measure or start a ground truth (no LLM)")
    tsub = p.add_subparsers(dest="truth_command", required=True, metavar="ACTION")
    corpus_help = "folder of documents (default: <name> beside FILE for <name>.truth.json, else the bundled corpus)"

    c = tsub.add_parser("check", help="every problem of a ground-truth file, exit status 1 when any")
    c.add_argument("file", metavar="FILE")
    c.add_argument("--corpus", help=corpus_help)
    c.add_argument("--errors-only", action="store_true", help="exit status 1 only for errors (warnings still print)")
    c.set_defaults(func=cmd_check)

    s = tsub.add_parser("stats", help="coverage: questions per document and section, phrasings, near/far, "
                                      "what this many questions can resolve")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--corpus", help=corpus_help)
    add_k(s)
    s.add_argument("--family-size", type=int, default=None,
                   help="comparisons in the family a verdict is corrected within (default: every pair of the "
                        "default configurations)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_stats)

    g = tsub.add_parser("suggest", help="candidate needles and near out-of-domain queries to start from")
    g.add_argument("--corpus", help="folder of documents (default: the bundled corpus)")
    g.add_argument("-n", type=int, default=40, help="candidate needles (default 40)")
    g.add_argument("--ood", type=int, default=None, help="near out-of-domain candidates (default n/4)")
    g.add_argument("--out", required=True, help="file to write (.json or .yaml)")
    g.add_argument("--force", action="store_true", help="replace --out when it exists")
    g.set_defaults(func=cmd_suggest)

    from .truth_plan import register as register_growth  # plan, draft, near-miss

    register_growth(tsub)
