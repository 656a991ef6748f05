"""``ragdiag ci``, the GitHub Action's entry point, run as GitHub runs it, without GitHub.

GitHub's variables (``GITHUB_STEP_SUMMARY``, ``GITHUB_OUTPUT``,
``GITHUB_EVENT_PATH``, ``GITHUB_REPOSITORY``, ``GITHUB_API_URL``,
``GITHUB_TOKEN``) point at temp files and at a local fake of the REST
endpoint: a real HTTP server on 127.0.0.1 that keeps the pull request's
comments in memory and answers the three calls GitHub documents (list a
pull request's comments, create one, update one), checking the token.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import yaml

from _blind import REPO, child_env, evaluate

TOKEN = "ghs_test_token"


class FakeGitHub(ThreadingHTTPServer):
    """Issue comments of one repository, as the REST API serves them (pages of ``per_page``)."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.comments: dict[int, list[dict]] = {}
        self.calls: list[tuple[str, str]] = []
        self.next_id = 1000

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: FakeGitHub

    def log_message(self, *args):  # quiet
        pass

    def _reply(self, status: int, body) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self, method: str) -> None:
        url = urlparse(self.path)
        self.server.calls.append((method, url.path))
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._reply(401, {"message": "Bad credentials"})
        parts = url.path.strip("/").split("/")  # repos/OWNER/REPO/issues/...
        if parts[:3] != ["repos", "octo", "kb"] or parts[3] != "issues":
            return self._reply(404, {"message": "Not Found"})
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        if method == "GET" and len(parts) == 6 and parts[5] == "comments":
            q = parse_qs(url.query)
            per, page = int(q.get("per_page", ["30"])[0]), int(q.get("page", ["1"])[0])
            items = self.server.comments.get(int(parts[4]), [])
            return self._reply(200, items[(page - 1) * per: page * per])
        if method == "POST" and len(parts) == 6 and parts[5] == "comments":
            self.server.next_id += 1
            comment = {"id": self.server.next_id, "body": body["body"], "user": {"login": "github-actions[bot]"}}
            self.server.comments.setdefault(int(parts[4]), []).append(comment)
            return self._reply(201, comment)
        if method == "PATCH" and len(parts) == 6 and parts[4] == "comments":
            for items in self.server.comments.values():
                for c in items:
                    if c["id"] == int(parts[5]):
                        c["body"] = body["body"]
                        return self._reply(200, c)
            return self._reply(404, {"message": "Not Found"})
        return self._reply(404, {"message": "Not Found"})

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_PATCH(self):
        self._route("PATCH")


@pytest.fixture
def github():
    server = FakeGitHub()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def gate_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    return {"base": evaluate(tmp, tmp / "baseline"), "blind": evaluate(tmp, tmp / "blind", blind=True), "tmp": tmp}


def _ci(tmp: Path, github: FakeGitHub | None, *argv: str, number: int = 7, token: str = TOKEN):
    """Run ``python -m ragdiag ci ARGV`` with GitHub's variables; return (exit, files written, stderr)."""
    files = {name: tmp / name for name in ("summary.md", "output.txt", "event.json")}
    files["event.json"].write_text(json.dumps({"action": "synchronize", "number": number,
                                               "pull_request": {"number": number}}))
    env = child_env(tmp, GITHUB_STEP_SUMMARY=str(files["summary.md"]), GITHUB_OUTPUT=str(files["output.txt"]),
                    GITHUB_EVENT_PATH=str(files["event.json"]), GITHUB_REPOSITORY="octo/kb",
                    GITHUB_EVENT_NAME="pull_request")
    if github is not None:
        env.update(GITHUB_API_URL=github.url, GITHUB_TOKEN=token)
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "ci", *argv], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=300)
    return proc.returncode, files, proc.stderr


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


@pytest.mark.slow  # two child processes a run (ci, then gate), seven runs: about 30 s
def test_writes_summary_outputs_and_comment_file_then_one_sticky_comment(gate_runs, github, tmp_path):
    base, blind = str(gate_runs["base"]), str(gate_runs["blind"])
    github.comments[7] = [{"id": 1, "body": "LGTM, a human", "user": {"login": "octocat"}}]
    # a long pull request: 120 comments of others push ours onto the second page later on
    github.comments[7] += [{"id": 2 + i, "body": f"note {i}", "user": {"login": "octocat"}} for i in range(120)]

    code, files, err = _ci(tmp_path, github, "--baseline", base, "--candidate", base, "--config", "C/dense")
    assert code == 0, err
    summary = files["summary.md"].read_text()
    assert summary.startswith("## ragdiag gate: ✅ pass") and "| destroyed | 0 | 0 | ✅ pass |" in summary
    assert _outputs(files["output.txt"]) == {"verdict": "pass", "exit-code": "0",
                                             "comment-file": "ragdiag-comment.md"}
    comment = (tmp_path / "ragdiag-comment.md").read_text()
    assert comment.splitlines()[0] == "<!-- ragdiag-gate C/dense -->" and comment.endswith(summary.rstrip("\n") + "\n")
    ours = [c for c in github.comments[7] if "ragdiag-gate" in c["body"]]
    assert len(ours) == 1 and ours[0]["body"] == comment
    assert ("POST", "/repos/octo/kb/issues/7/comments") in github.calls
    assert "created comment" in err
    assert (tmp_path / "ragdiag-gate.xml").is_file()

    # the next push regresses: the same comment is updated, no second one
    github.calls.clear()
    code, files, err = _ci(tmp_path, github, "--baseline", base, "--candidate", blind, "--config", "C/dense")
    assert code == 1, err
    ours = [c for c in github.comments[7] if "ragdiag-gate" in c["body"]]
    assert len(ours) == 1 and ours[0]["id"] == 1001  # the one the first push created (the fake numbers from 1001)
    assert "❌ fail" in ours[0]["body"] and "how many eggs does a queen bee lay" in ours[0]["body"]
    # two pages read, who the token writes as (a workflow token cannot read /user: github-actions[bot]), the update
    assert github.calls == [("GET", "/repos/octo/kb/issues/7/comments"), ("GET", "/repos/octo/kb/issues/7/comments"),
                            ("GET", "/user"), ("PATCH", "/repos/octo/kb/issues/comments/1001")]
    assert github.comments[7][0]["body"] == "LGTM, a human"
    assert _outputs(files["output.txt"])["verdict"] == "fail"  # appended: the last line wins in GitHub
    assert files["summary.md"].read_text().count("## ragdiag gate") == 2


@pytest.mark.slow
def test_without_a_token_nothing_is_posted_and_a_refused_post_is_a_warning(gate_runs, github, tmp_path):
    base = str(gate_runs["base"])
    code, files, err = _ci(tmp_path, None, "--baseline", base, "--candidate", base, "--config", "C/dense")
    assert code == 0 and github.calls == [] and (tmp_path / "ragdiag-comment.md").is_file()
    # a pull request from a fork gets a token the API refuses: a warning, the gate's verdict stands
    code, files, err = _ci(tmp_path, github, "--baseline", base, "--candidate", base, "--config", "C/dense",
                           token="ghs_read_only")
    assert code == 0 and "::warning::ragdiag could not post the pull-request comment (HTTP Error 401" in err
    assert github.calls == [("GET", "/repos/octo/kb/issues/7/comments")] and not github.comments


@pytest.mark.slow
def test_could_not_compare_is_exit_2_with_the_reason_in_the_summary(gate_runs, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    code, files, err = _ci(tmp_path, None, "--baseline", str(gate_runs["base"]), "--candidate", str(other),
                           "--config", "C/dense")
    assert code == 2
    assert _outputs(files["output.txt"])["verdict"] == "error"
    summary = files["summary.md"].read_text()
    assert summary.startswith("## ragdiag gate: could not compare") and "summary.json" in summary
    code, _, err = _ci(tmp_path, None, "--baseline", str(tmp_path / "absent"), "--config", "C/dense")
    assert code == 2 and "not a folder" in err and "Traceback" not in err


def test_action_runs_ragdiag_ci_with_its_inputs():
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["name"] and action["description"] and action["branding"]
    assert {"corpus", "truth", "config", "baseline", "margin", "strict", "python-version"} <= set(action["inputs"])
    assert {"verdict", "exit-code"} <= set(action["outputs"])
    assert action["runs"]["using"] == "composite"
    script = "\n".join(s.get("run", "") for s in action["runs"]["steps"])
    assert "ragdiag ci" in script and "pip install" in script
    workflow = yaml.safe_load((REPO / "examples" / "github-actions-ragdiag-gate.yml").read_text())
    uses = [s.get("uses", "") for job in workflow["jobs"].values() for s in job["steps"]]
    assert sum(u.endswith("/ragdiag@main") for u in uses) == 3, uses  # baseline: gate then evaluate; the PR gate
