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

What the API may do is bounded: the token goes to ``$GITHUB_API_URL``'s host
only (a redirect to another host is not followed), one answer holds at most
:data:`MAX_ANSWER` bytes, at most :data:`MAX_PAGES` pages of comments are read,
and the whole exchange stops after ``--api-timeout`` seconds; any of these is
the same one-line warning. The comment updated is only one the token's own user
wrote whose first line is the marker; a comment holds only what the gate wrote,
never a line of an input file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from .common import UsageError

__all__ = ["register", "cmd_ci", "comment_marker", "upsert_comment", "pull_request_number", "ApiError"]

DEFAULT_API = "https://api.github.com"
VERDICT_BY_EXIT = {0: "pass", 1: "fail", 3: "inconclusive", 2: "error"}
MAX_ANSWER = 16 * 2**20  # bytes of one API answer (a page of 100 comments of 65,536 characters fits)
MAX_PAGES = 50  # pages of 100 comments read looking for ours
API_TIMEOUT = 60.0  # seconds for the whole exchange with the API
BOT_LOGIN = "github-actions[bot]"  # who the workflow's own token (GITHUB_TOKEN) writes as; it cannot read /user


class ApiError(Exception):
    """The API answered something the comment cannot be posted with; one line, never holding the token."""


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
    p.add_argument("--api-timeout", type=float, default=API_TIMEOUT, metavar="SECONDS",
                   help=f"give up posting the comment after this long, with a warning (default {API_TIMEOUT:g})")
    p.set_defaults(func=cmd_ci)


def comment_marker(config: str) -> str:
    """The hidden first line that finds this configuration's comment again on the next push.

    >>> comment_marker("E/hybrid")
    '<!-- ragdiag-gate E/hybrid -->'
    >>> comment_marker("E/x --> ![a](http://e.example/a.png)")  # nothing can close the HTML comment early
    '<!-- ragdiag-gate E/xahttp//e.example/a.png -->'
    """
    return f"<!-- ragdiag-gate {_code(config)} -->"


def _code(text: str) -> str:
    """Only letters, digits and ``./_+`` kept (a configuration label in a marker or a code span)."""
    return re.sub(r"[^0-9A-Za-z./_+]", "", str(text))


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
        if type(number) is int and number > 0:
            return number
    return None


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"https": 443, "http": 80}.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port


def _shown_origin(url: str) -> str:
    scheme, host, port = _origin(url)
    return f"{scheme}://{host}:{port}"


def _opener():
    import urllib.request  # here, not at the start of every command (http.client and email come with it)

    class SameHostRedirects(urllib.request.HTTPRedirectHandler):
        """Follow a redirect only to the host the request went to: the token never travels elsewhere."""

        def redirect_request(self, req, fp, code, msg, headers, newurl):
            if _origin(newurl) != _origin(req.full_url):
                raise ApiError(f"the API answered {code} towards another host ({_shown_origin(newurl)}); not "
                               f"followed, the token is sent to {_shown_origin(req.full_url)} only")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    # no proxy handler from the environment and no file:// or ftp:// handler: only the API's own host is reached
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), SameHostRedirects())


def _read_answer(resp, deadline: float) -> bytes:
    """The answer's bytes, at most :data:`MAX_ANSWER` of them, read before ``deadline`` (a drip-fed answer stops)."""
    length = resp.headers.get("Content-Length")
    if length and length.strip().isdigit() and int(length) > MAX_ANSWER:
        raise ApiError(f"the API's answer is {int(length)} bytes, over the {MAX_ANSWER} bytes read")
    chunks, size = [], 0
    while True:
        if time.monotonic() > deadline:
            raise ApiError("the API's answer did not arrive in time")
        chunk = resp.read1(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_ANSWER:
            raise ApiError(f"the API's answer is over the {MAX_ANSWER} bytes read")
        chunks.append(chunk)


def _request(method: str, url: str, token: str, body: dict | None = None, *, deadline: float | None = None):
    import urllib.request

    if _origin(url)[0] not in ("https", "http"):
        raise ApiError(f"the API address is not http(s): {_shown_origin(url)}")
    deadline = time.monotonic() + API_TIMEOUT if deadline is None else deadline
    left = deadline - time.monotonic()
    if left <= 0:
        raise ApiError("the API did not answer in time")
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "ragdiag-ci",
        **({"Content-Type": "application/json"} if data is not None else {})})
    with _opener().open(req, timeout=min(left, 15.0)) as resp:
        raw = _read_answer(resp, deadline)
    try:
        return json.loads(raw.decode("utf-8") or "null")
    except (ValueError, RecursionError):
        raise ApiError(f"the API's answer to {method} is not JSON") from None


def _comment_id(value, what: str) -> int:
    if isinstance(value, dict) and type(value.get("id")) is int and value["id"] > 0:
        return value["id"]
    raise ApiError(f"the API's answer to {what} holds no comment id")


def _token_login(api: str, token: str, deadline: float) -> str:
    """The login the token writes as: ``/user``'s, or :data:`BOT_LOGIN` for a workflow token (it cannot read it)."""
    import urllib.error

    try:
        me = _request("GET", f"{api}/user", token, deadline=deadline)
    except urllib.error.HTTPError as exc:
        if exc.code in (403, 404):
            return BOT_LOGIN
        raise
    login = me.get("login") if isinstance(me, dict) else None
    if not isinstance(login, str) or not login:
        raise ApiError("the API's answer to /user holds no login")
    return login


def _first_line(text) -> str:
    return text.split("\n", 1)[0].strip() if isinstance(text, str) else ""


def upsert_comment(api: str, repo: str, number: int, token: str, body: str, marker: str, *,
                   deadline: float | None = None) -> tuple[str, int]:
    """Update the comment of pull request ``number`` that holds ``marker``, or create it; ``(action, id)``.

    ``action`` is ``"updated"`` or ``"created"``. Comments are read 100 a page,
    up to :data:`MAX_PAGES` pages, so an old comment is found on a long pull
    request too. Only a comment whose first line is ``marker`` and whose author
    is the token's own user is updated: another user's comment quoting the
    marker is left alone. Raises :class:`ApiError` (or an ``OSError``) when the
    API answers something else than comments, too much, too slowly, or
    redirects to another host.
    """
    deadline = time.monotonic() + API_TIMEOUT if deadline is None else deadline
    api = api.rstrip("/")
    base = f"{api}/repos/{repo}"
    login = None
    for page in range(1, MAX_PAGES + 1):
        comments = _request("GET", f"{base}/issues/{number}/comments?per_page=100&page={page}", token,
                            deadline=deadline)
        if not isinstance(comments, list) or not all(isinstance(c, dict) for c in comments):
            raise ApiError("the API's answer to the list of comments is not a list of comments")
        for c in comments:
            if _first_line(c.get("body")) != marker:
                continue
            if login is None:
                login = _token_login(api, token, deadline)
            author = c.get("user")
            if isinstance(author, dict) and author.get("login") == login:
                cid = _comment_id(c, "the list of comments")
                _request("PATCH", f"{base}/issues/comments/{cid}", token, {"body": body}, deadline=deadline)
                return "updated", cid
        if len(comments) < 100:
            break
    else:
        raise ApiError(f"the pull request has more than {100 * MAX_PAGES} comments; not read further")
    made = _request("POST", f"{base}/issues/{number}/comments", token, {"body": body}, deadline=deadline)
    return "created", _comment_id(made, "the new comment")


def _post(api: str, repo: str, number: int, token: str, body: str, marker: str, timeout: float,
          comment_file: str) -> str:
    """Post or update the comment within ``timeout`` seconds; the line to print (a ``::warning::`` on failure)."""
    result: list[str] = []
    deadline = time.monotonic() + timeout

    def work():
        try:
            action, cid = upsert_comment(api, repo, number, token, body, marker, deadline=deadline)
            result.append(f"{action} comment {cid} on pull request #{number}")
        except Exception as exc:  # noqa: BLE001 - posting is never the job's failure: every kind is a warning
            result.append(f"!{exc}" if str(exc).strip() else f"!{type(exc).__name__}")

    worker = threading.Thread(target=work, name="ragdiag-ci-comment", daemon=True)
    worker.start()
    worker.join(max(timeout, 0.0) + 1.0)  # a drip-fed header is not caught by the socket timeout: this is
    line = result[0] if result else f"!the API did not answer within {timeout:g} s"
    if not line.startswith("!"):
        return line
    reason = " ".join((line[1:].replace(token, "***") if token else line[1:]).split())[:300]
    return (f"::warning::ragdiag could not post the pull-request comment ({reason}); it is in {comment_file} "
            "and the job summary")


def _append(path: str | None, text: str) -> None:
    if path:
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            print(f"::warning::ragdiag could not append to {path} ({exc.strerror or exc})", file=sys.stderr)


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


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        return False


def _check_comment_file(args) -> None:
    """``--comment-file`` checked before the gate runs: never an input, never inside a run folder, never a file
    ragdiag did not write (:func:`ragdiag.core.files.check_output`)."""
    from ..core.files import OutputError, check_output, has_signature

    out = Path(args.comment_file)
    for option, folder in (("--baseline", args.baseline), ("--candidate", args.candidate), ("--corpus", args.corpus)):
        if folder and Path(folder).is_dir() and _inside(out, Path(folder)):
            raise UsageError(f"--comment-file {args.comment_file!r} is inside the {option} folder {folder!r}; "
                             "name a file outside it")
    inputs = [v for v in (args.truth, args.history, args.junit) if v]
    try:
        check_output(out, what="--comment-file", inputs=inputs, force=False, force_hint=None,
                     ours=lambda p: has_signature(p, lambda head: head.startswith("<!-- ragdiag-gate ")),
                     example="ragdiag-comment.md", ours_words="a comment ragdiag wrote")
    except OutputError as exc:
        raise UsageError(str(exc)) from None


def _escaped(text: str) -> str:
    r"""One line of plain text for Markdown: control characters dropped, markup characters escaped.

    >>> _escaped("a|b `c` ![x](http://e.example/p.png)\x1b[31m")
    'a\\|b \\`c\\` \\!\\[x\\](http://e.example/p.png)\\[31m'
    """
    out = " ".join(re.sub(r"[\x00-\x1f\x7f-\x9f]", "", text).split())
    return re.sub(r"([\\`*_\[\]<>|!])", r"\\\1", out)


def _could_not_compare(config: str, reason: str | None) -> str:
    """The Markdown when the gate could not compare; ``reason`` (the gate's message) only where given: the job
    summary, never the comment (a message can quote an input file's first line)."""
    why = f": {_escaped(reason)}" if reason else " (the reason is in the job's log and summary)"
    return (f"## ragdiag gate: could not compare\n\n`{_code(config)}`{why}\n\n"
            "Exit code 2: fix the input (the message says what), then push again.\n")


def cmd_ci(args) -> int:
    """``ci``: gate, then the job summary, the outputs, the comment file and the sticky comment."""
    import tempfile

    from ..core.defaults import PRACTICAL_MARGIN
    from ..core.files import OutputError, atomic_write
    from ..present.regression.checks import check_options

    try:  # before the child gate runs: a bad number is one line here, not a comment on the pull request
        check_options(margin=PRACTICAL_MARGIN if args.margin is None else args.margin, alpha=0.05)
    except ValueError as exc:
        raise UsageError(f"--{exc}") from None
    if not (args.api_timeout > 0 and args.api_timeout <= 3600):
        raise UsageError(f"--api-timeout {args.api_timeout:g}: pass seconds between 0 and 3600")
    if not Path(args.baseline).is_dir():
        hint = " (download the artifact into that folder first)" if not Path(args.baseline).exists() else ""
        raise UsageError(f"--baseline {args.baseline!r} is not a folder: pass an `eval --out` folder{hint}")
    _check_comment_file(args)
    token = os.environ.get("GITHUB_TOKEN", "")
    child_env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN", "INPUT_TOKEN")}
    with tempfile.TemporaryDirectory() as tmp:
        md_path = Path(tmp) / "gate.md"
        proc = subprocess.run(_gate_argv(args, md_path), capture_output=True, text=True, env=child_env)
        markdown = md_path.read_text(encoding="utf-8") if md_path.is_file() else ""
    stderr = proc.stderr.replace(token, "***") if token else proc.stderr
    sys.stderr.write(stderr)
    code = proc.returncode
    verdict = VERDICT_BY_EXIT.get(code, "error")
    try:
        word = json.loads(proc.stdout)["verdict"]  # strict turns inconclusive into exit 1: keep the word
        if word in VERDICT_BY_EXIT.values():
            verdict = word
    except (ValueError, KeyError, TypeError, RecursionError):
        pass
    marker = comment_marker(args.config)
    if markdown:
        summary, comment = markdown, f"{marker}\n{markdown}"
    else:
        error = stderr.strip().splitlines()[-1:] or [f"the gate exited with status {code}"]
        summary = _could_not_compare(args.config, error[0])
        comment = f"{marker}\n{_could_not_compare(args.config, None)}"
    try:
        atomic_write(args.comment_file, comment)
    except OutputError as exc:
        print(f"::warning::ragdiag {exc}", file=sys.stderr)
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), summary + "\n")
    _append(os.environ.get("GITHUB_OUTPUT"),
            f"verdict={verdict}\nexit-code={code}\ncomment-file={args.comment_file}\n")
    print(f"ragdiag gate: {verdict} (exit code {code}); comment Markdown in {args.comment_file}", file=sys.stderr)
    number = pull_request_number(os.environ.get("GITHUB_EVENT_PATH"))
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    if token and number is not None and repo and not args.no_comment:
        api = os.environ.get("GITHUB_API_URL") or DEFAULT_API
        print(_post(api, repo, number, token, comment, marker, args.api_timeout, args.comment_file), file=sys.stderr)
    if code == 3 and not args.strict:
        return 0  # inconclusive: reported, not blocking
    return code
