"""Subcommand ``ci``: the GitHub Action's entry point (``action.yml``), usable from any CI.

``ragdiag ci --baseline DIR --config CONFIG [--candidate DIR]`` runs
``ragdiag gate`` (in a child process, exactly as a workflow step would) and
then does what a CI job needs with its result, reading the variables GitHub
Actions sets:

* the gate's Markdown is appended to ``$GITHUB_STEP_SUMMARY``;
* ``verdict`` (pass, fail, inconclusive, error) and ``exit-code`` (the gate's:
  0, 1, 3, or 2 when it could not compare) go to ``$GITHUB_OUTPUT``;
* the Markdown of a pull-request comment, opened by a hidden marker, is
  written to ``--comment-file``;
* with a token (``$GITHUB_TOKEN``) and a pull-request event
  (``$GITHUB_EVENT_PATH``), that comment is posted to the pull request, or
  the earlier one carrying the same marker is updated: one sticky comment per
  configuration, not one per push. ``$GITHUB_API_URL`` (set by GitHub; GitHub
  Enterprise too) is the REST endpoint.

Its own exit status blocks the job or not: 0 pass (and inconclusive unless
``--strict``), 1 fail, 2 could not compare. A comment that cannot be posted (a
pull request from a fork gets a read-only token) is a warning, never a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .common import UsageError

__all__ = ["register", "cmd_ci", "comment_marker", "upsert_comment", "pull_request_number"]

DEFAULT_API = "https://api.github.com"
VERDICT_BY_EXIT = {0: "pass", 1: "fail", 3: "inconclusive", 2: "error"}


def register(sub) -> None:
    """Add ``ci`` to the subparsers ``sub``."""
    from ..core.defaults import PRACTICAL_MARGIN

    p = sub.add_parser("ci", help="the GitHub Action's step: gate, then write the job summary, the outputs and "
                                  "one sticky pull-request comment",
                       description="Run `ragdiag gate`, append its Markdown to $GITHUB_STEP_SUMMARY, write verdict "
                                   "and exit-code to $GITHUB_OUTPUT, write the pull-request comment to "
                                   "--comment-file and, with $GITHUB_TOKEN on a pull request, post it or update "
                                   "the earlier one (found by a hidden marker). Exit status: 0 pass (and "
                                   "inconclusive unless --strict), 1 fail, 2 could not compare.")
    p.add_argument("--baseline", required=True, help="the accepted run: an `eval --out` folder")
    p.add_argument("--candidate", default=None,
                   help="the run to gate: an `eval --out` folder (default: evaluate --corpus/--truth now)")
    p.add_argument("--config", required=True, help="the gated configuration, e.g. E/hybrid")
    p.add_argument("--corpus", default=None, help="without --candidate: the folder of documents to evaluate")
    p.add_argument("--truth", default=None, help="without --candidate: the ground truth")
    p.add_argument("--margin", type=float, default=None,
                   help=f"non-inferiority margin in rate units (default {PRACTICAL_MARGIN:g}); when given, passed to "
                        "the gate, which first checks that the questions can detect that drop")
    p.add_argument("--strict", action="store_true", help="an inconclusive result fails the job")
    p.add_argument("--history", metavar="FILE", default=None, help="add the candidate and the verdict to this "
                                                                   "run history (ragdiag history)")
    p.add_argument("--junit", metavar="FILE", default="ragdiag-gate.xml",
                   help="JUnit XML, one case per check (default ragdiag-gate.xml)")
    p.add_argument("--comment-file", metavar="FILE", default="ragdiag-comment.md",
                   help="where the pull-request comment's Markdown is written (default ragdiag-comment.md)")
    p.add_argument("--no-comment", action="store_true", help="write the comment file but post nothing")
    p.set_defaults(func=cmd_ci)


def comment_marker(config: str) -> str:
    """The hidden first line that finds this configuration's comment again on the next push.

    >>> comment_marker("E/hybrid")
    '<!-- ragdiag-gate E/hybrid -->'
    """
    return f"<!-- ragdiag-gate {config} -->"


def pull_request_number(event_path: str | None) -> int | None:
    """The pull request's number in the event file GitHub writes (``pull_request``, or a comment on one)."""
    if not event_path:
        return None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key in ("pull_request", "issue"):
        number = (event.get(key) or {}).get("number") if isinstance(event, dict) else None
        if isinstance(number, int):
            return number
    return None


def _request(method: str, url: str, token: str, body: dict | None = None):
    import urllib.request  # here, not at the start of every command (http.client and email come with it)

    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "ragdiag-ci",
        **({"Content-Type": "application/json"} if data is not None else {})})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read().decode("utf-8") or "null")


def upsert_comment(api: str, repo: str, number: int, token: str, body: str, marker: str) -> tuple[str, int]:
    """Update the comment of pull request ``number`` that holds ``marker``, or create it; ``(action, id)``.

    ``action`` is ``"updated"`` or ``"created"``. Comments are read 100 a page,
    every page, so an old comment is found on a long pull request too.
    """
    base = f"{api.rstrip('/')}/repos/{repo}"
    page = 1
    while True:
        comments = _request("GET", f"{base}/issues/{number}/comments?per_page=100&page={page}", token)
        for c in comments:
            if marker in (c.get("body") or ""):
                _request("PATCH", f"{base}/issues/comments/{c['id']}", token, {"body": body})
                return "updated", int(c["id"])
        if len(comments) < 100:
            break
        page += 1
    made = _request("POST", f"{base}/issues/{number}/comments", token, {"body": body})
    return "created", int(made["id"])


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)


def _gate_argv(args, markdown: Path) -> list[str]:
    argv = [sys.executable, "-m", "ragdiag", "gate", args.baseline]
    if args.candidate:
        argv.append(args.candidate)
    argv += ["--config", args.config, "--json", "--markdown", str(markdown)]
    if args.margin is not None:
        argv += ["--margin", repr(args.margin)]
    for option, value in (("--corpus", args.corpus), ("--truth", args.truth), ("--junit", args.junit),
                          ("--history", args.history)):
        if value:
            argv += [option, value]
    if args.strict:
        argv.append("--strict")
    return argv


def cmd_ci(args) -> int:
    """``ci``: gate, then the job summary, the outputs, the comment file and the sticky comment."""
    import tempfile

    from ..core.defaults import PRACTICAL_MARGIN
    from ..present.regression.checks import check_options

    try:  # before the child gate runs: a bad number is one line here, not a comment on the pull request
        check_options(margin=PRACTICAL_MARGIN if args.margin is None else args.margin, alpha=0.05)
    except ValueError as exc:
        raise UsageError(f"--{exc}") from None
    if not Path(args.baseline).is_dir():
        hint = " (download the artifact into that folder first)" if not Path(args.baseline).exists() else ""
        raise UsageError(f"--baseline {args.baseline!r} is not a folder: pass an `eval --out` folder{hint}")
    with tempfile.TemporaryDirectory() as tmp:
        md_path = Path(tmp) / "gate.md"
        proc = subprocess.run(_gate_argv(args, md_path), capture_output=True, text=True)
        markdown = md_path.read_text(encoding="utf-8") if md_path.is_file() else ""
    sys.stderr.write(proc.stderr)
    code = proc.returncode
    verdict = VERDICT_BY_EXIT.get(code, "error")
    try:
        verdict = json.loads(proc.stdout)["verdict"]  # strict turns inconclusive into exit 1: keep the word
    except (ValueError, KeyError, TypeError):
        pass
    if not markdown:
        error = proc.stderr.strip().splitlines()[-1:] or [f"the gate exited with status {code}"]
        markdown = (f"## ragdiag gate: could not compare\n\n`{args.config}`: {error[0]}\n\n"
                    "Exit code 2: fix the input (the message says what), then push again.\n")
    marker = comment_marker(args.config)
    comment = f"{marker}\n{markdown}"
    Path(args.comment_file).write_text(comment, encoding="utf-8")
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), markdown + "\n")
    _append(os.environ.get("GITHUB_OUTPUT"),
            f"verdict={verdict}\nexit-code={code}\ncomment-file={args.comment_file}\n")
    print(f"ragdiag gate: {verdict} (exit code {code}); comment Markdown in {args.comment_file}", file=sys.stderr)
    token = os.environ.get("GITHUB_TOKEN", "")
    number = pull_request_number(os.environ.get("GITHUB_EVENT_PATH"))
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    if token and number is not None and repo and not args.no_comment:
        import urllib.error

        api = os.environ.get("GITHUB_API_URL") or DEFAULT_API
        try:
            action, cid = upsert_comment(api, repo, number, token, comment, marker)
            print(f"{action} comment {cid} on pull request #{number}", file=sys.stderr)
        except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
            print(f"::warning::ragdiag could not post the pull-request comment ({exc}); it is in "
                  f"{args.comment_file} and the job summary", file=sys.stderr)
    if code == 3 and not args.strict:
        return 0  # inconclusive: reported, not blocking
    return code
