"""A writer process for the ground-truth concurrency test (spawned by tests/unit/test_authoring.py).

Usage::

    python tests/helpers/_truth_writer.py FILE NAME N

Adds N out-of-domain entries ``NAME-0`` ... one save at a time; when a save is
refused because another writer saved first, it reloads, merges its edit onto
the file as it now is (what the Ground truth page offers) and saves again.
Prints ``done <refusals>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ragdiag.authoring.edit import add_ood  # noqa: E402
from ragdiag.authoring.save import ConflictError, merge, open_truth, save_truth  # noqa: E402


def main(path: str, name: str, n: int) -> int:
    refusals = 0
    for i in range(n):
        opened = open_truth(path)
        mine = add_ood(opened.data, f"{name}-{i}", "far", f"{name} {i}")
        while True:
            try:
                save_truth(path, mine, expected_sha256=opened.sha256)
                break
            except ConflictError:
                refusals += 1
                theirs = open_truth(path)
                mine, conflicts = merge(opened.data, mine, theirs.data)
                if conflicts:
                    print(f"conflict {conflicts}")
                    return 1
                opened = theirs
    print(f"done {refusals}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
