"""The order in which the suite's workers take test files: the longest first.

``./run.sh test`` hands whole files to its workers (``--dist loadfile``), each the next file in the collection's
order. xdist's own order is by number of tests, so a file of five long tests (Ray's) started late and ended last:
42 minutes of one worker under ``scripts/busy.sh 6``. ``tests/file_costs.tsv`` holds each long file's worker seconds from a run
under load (``python scripts/suite_times.py times.tsv --costs tests/file_costs.tsv``); the collection puts those files
first, longest first, and the rest after them in their own order: the longest-first rule that keeps the last file to
end a short one. A file missing from the table (a new one) only runs later; nothing is skipped.
"""

from __future__ import annotations

from pathlib import Path


def read_costs(path: Path) -> dict[str, float]:
    """``{file: worker seconds}`` from a costs table (``#`` lines are comments); a line that is not ``file<TAB>seconds``
    is refused with its number, so a bad edit fails the collection instead of silently reordering nothing."""
    costs: dict[str, float] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, _, seconds = line.partition("\t")
        try:
            costs[name] = float(seconds)  # no tab: float("") refuses it too
        except ValueError:
            costs[name] = float("nan")
        if not costs[name] >= 0:
            raise ValueError(f"{path}:{n}: not 'file<TAB>seconds': {line[:80]!r} "
                             "(write it with: python scripts/suite_times.py times.tsv --costs FILE)")
    return costs


def costliest_first(items: list, costs: dict[str, float], root: Path) -> list:
    """``items`` with the files of ``costs`` first, longest first; each file's tests, and every other file, keep
    their order (a stable sort on the file's cost, 0 for a file the table does not name).

    >>> from types import SimpleNamespace as Item
    >>> items = [Item(path=Path("/r/tests/a.py"), name=n) for n in "12"] + [Item(path=Path("/r/tests/b.py"), name="3")]
    >>> [i.name for i in costliest_first(items, {"tests/b.py": 90.0}, Path("/r"))]
    ['3', '1', '2']
    """
    def cost(item) -> float:
        try:
            return costs.get(Path(str(item.path)).relative_to(root).as_posix(), 0.0)
        except ValueError:  # outside the checkout
            return 0.0

    return sorted(items, key=lambda item: -cost(item))
