"""``ragdiag ci`` against a hostile GitHub API: the token stays on its host, and time and memory stay bounded.

Every fake API here is a real HTTP server on 127.0.0.1 (port 0), each
answering one way a broken or hostile endpoint can: a redirect to another
port, an error, a ``null``, an object, a deeply nested or truncated answer, a
comment without an id, a huge answer, a drip-fed one, endless pages. The
posting code (``ragdiag.cli.ci._post``, what ``cmd_ci`` calls) must come back
within its timeout with one ``::warning::`` line that never holds the token;
the gate's own exit code is checked end to end at the bottom (slow).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ragdiag.cli import ci

TOKEN = "ghs_secret_token_value_0123456789"
MARKER = ci.comment_marker("C/dense")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answer):
        """``answer(handler, method)`` writes the whole answer; every request is kept in ``requests``."""
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.requests: list[tuple[str, str, str | None]] = []  # method, path, Authorization

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _any(self, method):
        self.server.requests.append((method, self.path, self.headers.get("Authorization")))
        length = int(self.headers.get("Content-Length") or 0)
        self.body = json.loads(self.rfile.read(length)) if length else None
        try:
            self.server.answer(self, method)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up: what it should do
            pass

    def do_GET(self):
        self._any("GET")

    def do_POST(self):
        self._any("POST")

    def do_PATCH(self):
        self._any("PATCH")

    def json(self, status: int, body, headers: dict | None = None) -> None:
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        for k, v in {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def serve():
    servers = []

    def start(answer) -> Server:
        server = Server(answer)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def post(api: str, timeout: float = 5.0) -> tuple[str, float]:
    start = time.monotonic()
    line = ci._post(api, "octo/kb", 7, TOKEN, f"{MARKER}\nbody", MARKER, timeout, "ragdiag-comment.md")
    return line, time.monotonic() - start


def _warning(line: str, *words: str) -> None:
    assert line.startswith("::warning::ragdiag could not post the pull-request comment ("), line
    assert "\n" not in line and TOKEN not in line and len(line) < 500
    for w in words:
        assert w in line, line


def _comments(items):
    def answer(h, method):
        if method == "GET" and h.path.startswith("/repos/octo/kb/issues/7/comments"):
            return h.json(200, items)
        if method == "GET" and h.path == "/user":
            return h.json(403, {"message": "Resource not accessible by integration"})
        if method == "POST":
            return h.json(201, {"id": 99, "body": h.body["body"], "user": {"login": ci.BOT_LOGIN}})
        if method == "PATCH":
            return h.json(200, {"id": int(h.path.rsplit("/", 1)[1]), "body": h.body["body"]})
        return h.json(404, {"message": "Not Found"})
    return answer


def test_a_redirect_to_another_port_never_receives_the_token(serve):
    elsewhere = serve(_comments([]))
    api = serve(lambda h, m: h.json(302, {}, {"Location": f"{elsewhere.url}{h.path}"}))
    line, took = post(api.url)
    _warning(line, "another host", elsewhere.url.replace("http://", "http://").rsplit(":", 1)[1])
    assert elsewhere.requests == []  # not followed at all: no header to strip, nothing sent there
    assert api.requests == [("GET", "/repos/octo/kb/issues/7/comments?per_page=100&page=1", f"Bearer {TOKEN}")]
    for code in (301, 303, 307, 308):  # every redirect kind
        api.answer = lambda h, m, code=code: h.json(code, {}, {"Location": f"{elsewhere.url}/x"})
        _warning(post(api.url)[0], f"answered {code} towards another host")
    assert elsewhere.requests == []


def test_a_redirect_on_the_same_host_is_followed_with_the_token(serve):
    inner = _comments([])

    def answer(h, method):
        if h.path.startswith("/old/") and method == "GET":  # a renamed repository: reading is redirected
            return h.json(301, {}, {"Location": h.path[len("/old"):]})
        h.path = h.path.removeprefix("/old")
        return inner(h, method)

    api = serve(answer)
    line, _ = post(f"{api.url}/old")
    assert line == "created comment 99 on pull request #7"
    assert all(auth == f"Bearer {TOKEN}" for _, _, auth in api.requests)


@pytest.mark.parametrize("status, body, words", [
    (500, {"message": "boom"}, ["HTTP Error 500"]),
    (200, None, ["not a list of comments"]),
    (200, {"comments": []}, ["not a list of comments"]),
    (200, [1, 2], ["not a list of comments"]),
    (200, b"[" * 200_000 + b"]" * 200_000, ["not JSON"]),
    (200, b'[{"id": 1, "bo', ["not JSON"]),
    (200, b"\xff\xfe", ["not JSON"]),
], ids=["500", "null", "object", "numbers", "nested", "truncated", "not-utf8"])
def test_a_broken_list_answer_is_a_warning(serve, status, body, words):
    api = serve(lambda h, m: h.json(status, body))
    _warning(post(api.url)[0], *words)


def test_a_new_comment_without_an_id_is_a_warning(serve):
    inner = _comments([])
    api = serve(lambda h, m: h.json(201, {"body": "x"}) if m == "POST" else inner(h, m))
    _warning(post(api.url)[0], "no comment id")


def test_only_our_own_users_comment_with_the_marker_first_is_updated(serve):
    items = [{"id": 1, "body": f"{MARKER}\nplanted by someone", "user": {"login": "mallory"}},
             {"id": 2, "body": f"quoting it: {MARKER}", "user": {"login": ci.BOT_LOGIN}},
             {"id": 3, "body": f"{MARKER}\nours", "user": {"login": ci.BOT_LOGIN}}]
    api = serve(_comments(items))
    line, _ = post(api.url)
    assert line == "updated comment 3 on pull request #7"
    assert [(m, p) for m, p, _ in api.requests if m != "GET"] == [("PATCH", "/repos/octo/kb/issues/comments/3")]
    # only someone else's: a new comment, theirs untouched
    api.answer = _comments(items[:2])
    api.requests.clear()
    assert post(api.url)[0] == "created comment 99 on pull request #7"
    assert [m for m, _, _ in api.requests] == ["GET", "GET", "POST"]  # the list, /user, then a new one


def test_a_personal_token_is_matched_by_its_own_login(serve):
    items = [{"id": 5, "body": f"{MARKER}\nx", "user": {"login": ci.BOT_LOGIN}},
             {"id": 6, "body": f"{MARKER}\nx", "user": {"login": "alice"}}]
    inner = _comments(items)
    api = serve(lambda h, m: h.json(200, {"login": "alice"}) if h.path == "/user" else inner(h, m))
    assert post(api.url)[0] == "updated comment 6 on pull request #7"


def test_endless_pages_stop_at_the_page_limit(serve):
    page = [{"id": i + 1, "body": "note", "user": {"login": "octocat"}} for i in range(100)]
    api = serve(lambda h, m: h.json(200, page))
    line, took = post(api.url, timeout=30)
    _warning(line, f"more than {100 * ci.MAX_PAGES} comments")
    assert len(api.requests) == ci.MAX_PAGES and all(m == "GET" for m, _, _ in api.requests)


def _drip(h, method):
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.end_headers()
    h.wfile.write(b"[")
    for _ in range(200):  # 40 s if nobody stops reading
        h.wfile.write(b" ")
        h.wfile.flush()
        time.sleep(0.2)  # the fake's own pace: what a slow endpoint does, not a wait in the test


def _drip_headers(h, method):
    h.wfile.write(b"HTTP/1.1 200 OK\r\n")
    for i in range(200):
        h.wfile.write(f"X-Slow-{i}: 1\r\n".encode())
        h.wfile.flush()
        time.sleep(0.2)


@pytest.mark.parametrize("answer", [_drip, _drip_headers], ids=["body", "headers"])
def test_a_drip_fed_answer_stops_at_the_timeout(serve, answer):
    api = serve(answer)
    line, took = post(api.url, timeout=1.5)
    _warning(line)
    assert "in time" in line or "within 1.5 s" in line
    assert took < 20.0  # the drip lasts 40 s; on a busy machine the client's thread may wait seconds for its turn


def test_a_huge_answer_is_not_read_into_memory(serve):
    def endless(h, method):  # no Content-Length: the client only learns the size by reading
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Connection", "close")
        h.end_headers()
        chunk = b"[" + b"0," * 32767
        for _ in range(2000):  # up to 128 MB if nobody stops reading
            h.wfile.write(chunk)

    api = serve(endless)
    tracemalloc.start()
    try:
        line, _ = post(api.url, timeout=30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    _warning(line, f"over the {ci.MAX_ANSWER} bytes read")
    assert peak < 3 * ci.MAX_ANSWER
    declared = serve(lambda h, m: (h.send_response(200), h.send_header("Content-Length", str(1_500_000_000)),
                                   h.end_headers()))
    _warning(post(declared.url)[0], "1500000000 bytes")


@pytest.mark.parametrize("api", ["file:///etc/passwd", "ftp://127.0.0.1/x"])
def test_an_api_address_other_than_http_is_refused(api):
    _warning(post(api)[0], "not http(s)")


# ---- end to end: `ragdiag ci` in a child process, as the action runs it ----

@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from _blind import evaluate

    tmp = tmp_path_factory.mktemp("runs")
    return {"base": evaluate(tmp, tmp / "baseline"), "blind": evaluate(tmp, tmp / "blind", blind=True)}


def _ci(tmp: Path, api: str | None, *argv: str) -> tuple[int, str, Path]:
    from _blind import child_env

    event = tmp / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    env = child_env(tmp, GITHUB_STEP_SUMMARY=str(tmp / "summary.md"), GITHUB_OUTPUT=str(tmp / "output.txt"),
                    GITHUB_EVENT_PATH=str(event), GITHUB_REPOSITORY="octo/kb")
    if api:
        env.update(GITHUB_API_URL=api, GITHUB_TOKEN=TOKEN)
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "ci", *argv], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr, tmp / "summary.md"


@pytest.mark.slow  # two evaluations, three gates in child processes: about 20 s
def test_ci_keeps_the_gates_exit_code_and_never_shows_the_token(runs, serve, tmp_path):
    elsewhere = serve(_comments([]))
    api = serve(lambda h, m: h.json(302, {}, {"Location": f"{elsewhere.url}{h.path}"}))
    base, blind = str(runs["base"]), str(runs["blind"])
    code, out, summary = _ci(tmp_path, api.url, "--baseline", base, "--candidate", blind, "--config", "C/dense",
                             "--api-timeout", "5")
    assert code == 1, out  # the gate's own verdict: fail
    assert "::warning::ragdiag could not post the pull-request comment (the API answered 302 towards another" in out
    assert elsewhere.requests == [] and TOKEN not in out and "Traceback" not in out
    for written in (summary, tmp_path / "output.txt", tmp_path / "ragdiag-comment.md", tmp_path / "ragdiag-gate.xml"):
        assert TOKEN not in written.read_text()


@pytest.mark.slow
def test_ci_refuses_a_comment_file_among_its_inputs(runs, tmp_path):
    summary_json = runs["base"] / "summary.json"
    before = summary_json.read_bytes()
    for target in (summary_json, runs["blind"] / "new.md"):
        code, out, _ = _ci(tmp_path, None, "--baseline", str(runs["base"]), "--candidate", str(runs["blind"]),
                           "--config", "C/dense", "--comment-file", str(target))
        assert code == 2 and len(out.strip().splitlines()) == 1 and "--comment-file" in out, out
    assert summary_json.read_bytes() == before and not (runs["blind"] / "new.md").exists()
    mine = tmp_path / "notes.md"
    mine.write_text("my own notes\n")
    code, out, _ = _ci(tmp_path, None, "--baseline", str(runs["base"]), "--candidate", str(runs["base"]),
                       "--config", "C/dense", "--comment-file", str(mine))
    assert code == 2 and "refusing to overwrite" in out and mine.read_text() == "my own notes\n"


@pytest.mark.slow
def test_a_comment_holds_no_line_of_an_input_file(runs, tmp_path):
    """A run folder whose per_query.csv links to a secret: the gate cannot compare, and the comment says so
    without the file's first line (the job's log, which the gate's message goes to, is the runner's own)."""
    import shutil

    run = tmp_path / "linked"
    shutil.copytree(runs["blind"], run)
    secret = tmp_path / "environ"
    secret.write_text("AWS_SECRET=hunter2-very-secret,other\n1,2\n")
    (run / "per_query.csv").unlink()
    os.symlink(secret, run / "per_query.csv")
    code, out, summary = _ci(tmp_path, None, "--baseline", str(runs["base"]), "--candidate", str(run),
                             "--config", "C/dense")
    assert code == 2, out
    comment = (tmp_path / "ragdiag-comment.md").read_text()
    assert comment.startswith(f"{MARKER}\n## ragdiag gate: could not compare") and "hunter2" not in comment
    assert "reason is in the job's log" in comment
