"""Subcommands ``best`` and ``recommend``: what to ship, decided by the question each answers."""

from __future__ import annotations

import sys

from ..core.defaults import DEFAULT_MAX_BLUFF
from .common import UsageError, add_selection, evaluate_args, load_inputs, print_result
from .options import add_evaluation, add_gate, evaluating_parser
from ..core.words import count_rate_text, cut_text

__all__ = ["register", "cmd_best", "best_text", "cmd_recommend", "cmd_effects"]


def _configs(args):
    from ..index.chunking import parse_strategies
    from ..retrieval.registry import parse_retrievers

    try:
        return [s.name for s in parse_strategies(args.strategies)], parse_retrievers(args.retrievers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _pct(cell) -> str:
    """A count and its rate as every surface writes both, ``"36 = 56% (44–68)"``
    (:func:`~ragdiag.core.words.count_rate_text`)."""
    if cell.rate is None:
        return "n/a"
    return count_rate_text(cell)


def cmd_best(args) -> int:
    """``best``: the best configuration at R@k and the set not shown worse than it (simultaneous)."""
    from ..analyses.compare import best

    strategies, retrievers = _configs(args)
    ev = evaluate_args(args, strategies, retrievers, load_inputs(args))
    res = best(ev, k=args.gate.k, configs=[c for c in ev.results if not c.external])
    return print_result(res, args.json, lambda: best_text(res))


def best_text(res) -> str:
    """What ``best`` prints: the best set in one sentence, then every row with its interval (what ``--json`` gives:
    ``critical_difference`` is the printed high less the printed difference)."""
    from ..analyses.recommend import describe_config
    from ..core.tables import format_rows

    head = (f"Best at R@{res.k}: {describe_config(res.best)} ({res.best}). Not shown worse than it, simultaneously "
            f"over {len(res.rows)} configurations (Hsu's comparison with the best, critical value {res.critical:.2f}; "
            f"{res.method}): {', '.join(res.best_set)}.")
    rows = sorted(res.rows, key=lambda r: -r.mean)
    return head + "\n" + format_rows([{"config": r.config, f"R@{res.k}": round(r.mean, 3),
                                       "difference to best (best: to runner-up)": round(r.estimate, 3),
                                       "low (Hsu MCB)": round(r.low, 3), "high (Hsu MCB)": round(r.high, 3),
                                       "p adjusted": "-" if r.p_adjusted is None else round(r.p_adjusted, 4),
                                       "best set": "yes" if r.in_best_set else "no"} for r in rows])


def cmd_recommend(args) -> int:
    """``recommend``: the configuration to ship and its cut for the bluff goal, with the rates at that cut."""
    import json

    from ..analyses.recommend import recommend

    strategies, retrievers = _configs(args)
    from .goal_args import goal_of

    goal = goal_of(args, recommending=True)  # --max-bluff and --min-answered checked once, by the Goal
    ev = evaluate_args(args, strategies, retrievers, load_inputs(args))
    try:
        rec = recommend(ev, args.gate, goal=goal)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(rec.as_json(), indent=2))
        return 0
    if rec.feasible is False:  # the verdict is the sentence, not a cut
        print(rec.verdict)
        print(f"closest: {rec.sentence()}")
    else:
        print(rec.sentence())
        if rec.verdict:
            print(rec.verdict)
    print(f"why: {rec.why}")
    if rec.guarantee:
        print(f"cut ({rec.cut_method}): {rec.guarantee}")
    print(f"answered {_pct(rec.answered)}; lost {_pct(rec.lost)}; bluffs {_pct(rec.bluffs)}")
    if rec.runner_up_rates is not None:
        r = rec.runner_up_rates
        print(f"runner-up {rec.runner_up} at strictness {cut_text(rec.runner_up_cut)}: answered {_pct(r['answered'])}; "
              f"lost {_pct(r['lost'])}; bluffs {_pct(r['bluffs'])}", file=sys.stdout)
    return 0


def cmd_effects(args) -> int:
    """``effects``: what each chunking switch does, the design's contrasts per retriever as one family."""
    import json

    from ..analyses.compare import effects
    from ..core.tables import format_rows

    strategies, retrievers = _configs(args)
    ev = evaluate_args(args, strategies, retrievers, load_inputs(args))
    try:
        res = effects(ev, k=args.gate.k, strategies=strategies, retrievers=[r for r in retrievers if r not in ev.unavailable])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(res.as_json(), indent=2))
        return 0
    print(f"{res.family} at R@{res.k} over {res.n_questions} questions; {res.correction}")
    for r in res.rows:
        if r.status == "different":
            print(r.sentence())
    print(format_rows([{"switch": r.switch, "contrast": r.contrast, "retriever": r.retriever, "wins": r.wins,
                        "losses": r.losses, "ties": r.ties, "p": round(r.p, 4), "p adjusted": round(r.p_adjusted, 4),
                        "difference": round(r.estimate, 3), "low": round(r.low, 3), "high": round(r.high, 3),
                        "destroyed": " / ".join(f"{s} {n}" for s, n in r.destroyed.items()), "status": r.status}
                       for r in res.rows]))
    return 0


def register(sub) -> None:
    """Add ``best``, ``recommend`` and ``effects`` to the subparsers ``sub``."""
    p = evaluating_parser(sub, "best", "the best configuration at R@k and the set not shown worse than it (comparison "
                                       "with the best, simultaneous over the configurations shown)", selection=True)
    p.set_defaults(func=cmd_best)

    p = sub.add_parser("recommend", help="the configuration to ship (simplest or cheapest of the best set) and the "
                                         "cut for a bluff goal, with the rates at that cut")
    add_evaluation(p)
    add_gate(p)
    add_selection(p)
    p.add_argument("--max-bluff", type=float, default=DEFAULT_MAX_BLUFF,
                   help=f"goal: at most this share of off-topic queries get sources (default {DEFAULT_MAX_BLUFF})")
    p.add_argument("--min-answered", type=float, default=None,
                   help="a second goal: at least this share of answerable queries answered at the cut; the pick "
                        "moves on to configurations that meet both, or the verdict says none can")
    p.set_defaults(func=cmd_recommend)

    p = evaluating_parser(sub, "effects", "what each chunking switch does: boundaries C-A, D-B; header E-C, F-D; "
                                          "overlap B-A, D-C, F-E, per retriever, one family (simultaneous)",
                          selection=True)
    p.set_defaults(func=cmd_effects)
