"""Write the command reference of docs/cli.md from ``build_parser()`` (``python scripts/cli_docs.py``).

The text between the ``cli reference`` markers is replaced by every
subcommand's ``--help`` (80 columns); ``--check`` exits 1 when the page is not
current instead of writing it (``tests/slow/test_docs.py`` runs the same check).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "cli.md"
BEGIN, END = "<!-- cli reference: begin -->", "<!-- cli reference: end -->"


def _leaves(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _leaves(sub, (*words, name))
            return
    yield words, parser


def reference() -> str:
    """The generated part of docs/cli.md: one section per command, its ``--help`` verbatim."""
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal; the page must not depend on it
    sys.path.insert(0, str(ROOT))
    from ragdiag.cli.parser import build_parser

    out = []
    for words, sub in _leaves(build_parser()):
        name = " ".join(words)
        out += [f"### `{name}`", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def render(page: str) -> str:
    """``page`` with its reference replaced by the current one."""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(page):
        raise SystemExit(f"{PAGE}: the markers {BEGIN} ... {END} are missing")
    return pattern.sub(lambda _: f"{BEGIN}\n\n{reference()}\n{END}", page)


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md is not current")
    check = args.parse_args(argv).check
    page = PAGE.read_text(encoding="utf-8")
    new = render(page)
    if check:
        if new != page:
            print(f"{PAGE.name} is not current: run python scripts/cli_docs.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(new, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
