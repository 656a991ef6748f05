"""The action's own shell steps (``action.yml``), run as a runner runs them, without GitHub.

Each ``run:`` block is taken from ``action.yml`` and run with bash in a
workspace that is a git checkout, its ``env:`` filled from the inputs and the
earlier steps' outputs the way GitHub fills ``${{ ... }}``. The one step that
is not shell, downloading the baseline artifact, is played by copying main's
accepted run to the folder the "Find the baseline" step named. The threat: a
pull request that commits its own ``ragdiag-baseline/`` must still be gated
against main's baseline.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from _blind import REPO, child_env, evaluate

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = {s.get("name", s.get("uses", "")): s for s in ACTION["runs"]["steps"]}
EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def _value(expr: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]], temp: Path) -> str:
    if expr.startswith("inputs."):
        name = expr[len("inputs."):]
        return inputs.get(name, str(ACTION["inputs"][name].get("default", "")))
    if m := re.fullmatch(r"steps\.(\w+)\.outputs\.([\w-]+)", expr):
        return outputs.get(m[1], {}).get(m[2], "")
    if expr == "runner.temp":
        return str(temp)
    if expr == "github.token":
        return ""
    raise AssertionError(f"the test does not know ${{{{ {expr} }}}}")


def _run_step(name: str, ws: Path, inputs: dict[str, str], outputs: dict, env: dict[str, str]):
    """Run the step ``name`` of action.yml in ``ws``; its outputs go to ``outputs[id]``; (exit, stdout)."""
    step = STEPS[name]
    temp = ws.parent / "runner-temp"
    temp.mkdir(exist_ok=True)
    out_file = ws.parent / f"output-{step.get('id', 'x')}.txt"
    out_file.write_text("")
    step_env = {k: EXPR.sub(lambda m: _value(m[1], inputs, outputs, temp), str(v))
                for k, v in (step.get("env") or {}).items()}
    proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=ws, capture_output=True, text=True, timeout=300,
                          env={**env, **step_env, "GITHUB_OUTPUT": str(out_file), "RUNNER_TEMP": str(temp)})
    if step.get("id"):
        outputs[step["id"]] = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
    return proc.returncode, proc.stdout + proc.stderr


def _env(tmp: Path) -> dict[str, str]:
    bin_dir = tmp / ".bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "ragdiag").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m ragdiag "$@"\n')
    (bin_dir / "ragdiag").chmod(0o755)
    env = child_env(tmp)
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"
    return env


def _checkout(tmp: Path, planted: Path | None) -> Path:
    """A git checkout of a pull request; with ``planted``, it commits that run as ``ragdiag-baseline/``."""
    ws = tmp / "ws"
    ws.mkdir()
    git = ["git", "-c", "user.name=pr", "-c", "user.email=pr@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=ws, check=True)
    (ws / "README.md").write_text("kb\n")
    if planted is not None:
        shutil.copytree(planted, ws / "ragdiag-baseline")
    subprocess.run([*git, "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "pr"], cwd=ws, check=True)
    return ws


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    return {"main": evaluate(tmp, tmp / "main-baseline"), "blind": evaluate(tmp, tmp / "blind", blind=True)}


@pytest.mark.slow  # two evaluations and one gate in child processes: about 15 s
def test_a_baseline_planted_by_the_pull_request_is_ignored_and_the_regression_fails(runs, tmp_path):
    # the pull request regresses C/dense and commits its own regressed run as ragdiag-baseline/
    ws = _checkout(tmp_path, planted=runs["blind"])
    env = _env(tmp_path)
    inputs = {"config": "C/dense", "candidate": str(runs["blind"]), "token": ""}
    outputs: dict[str, dict[str, str]] = {}
    assert _run_step("Check the inputs", ws, inputs, outputs, env)[0] == 0
    code, log = _run_step("Find the baseline", ws, inputs, outputs, env)
    assert code == 0, log
    where = outputs["where"]
    assert where["artifact"] == "ragdiag-baseline" and "is ignored" in log
    path = Path(where["path"])
    assert not path.is_relative_to(ws) and not path.exists()  # outside the workspace, emptied
    # the download step (not shell): main's push runs only, no fork, into the folder named above
    download = STEPS["Download the baseline artifact"]["with"]
    assert download["event"] == "push" and download["allow_forks"] is False
    assert download["path"] == "${{ steps.where.outputs.path }}"
    shutil.copytree(runs["main"], path)
    code, log = _run_step("Gate", ws, inputs, outputs, env)
    assert code == 1, log  # gated against main's baseline: the destroyed needles fail it
    assert "ragdiag gate: fail (exit code 1)" in log


def test_an_explicit_baseline_path_the_checkout_holds_is_refused(tmp_path):
    fake_run = tmp_path / "fake-run"
    fake_run.mkdir()
    (fake_run / "summary.json").write_text("{}")  # stands in for a run: the step refuses before reading it
    ws = _checkout(tmp_path, planted=fake_run)
    env = _env(tmp_path)
    outputs: dict[str, dict[str, str]] = {}
    for planted in ("ragdiag-baseline", "ragdiag-baseline/sub", "./ragdiag-baseline"):
        code, log = _run_step("Find the baseline", ws, {"baseline-path": planted}, outputs, env)
        assert code == 2 and len(log.strip().splitlines()) == 1, log
        assert log.startswith(f"::error::ragdiag action: input baseline-path is '{planted}'")
    # a folder an earlier step made (untracked) is taken as it is
    (ws / "ragdiag-previous").mkdir()
    code, log = _run_step("Find the baseline", ws, {"baseline-path": "ragdiag-previous"}, outputs, env)
    assert code == 0 and outputs["where"] == {"artifact": "", "path": "ragdiag-previous"}, log


@pytest.mark.parametrize("inputs, field", [
    ({"mode": "gates"}, "mode"),
    ({"mode": ""}, "mode"),
    ({"strict": "yes"}, "strict"),
    ({"strict": "1"}, "strict"),
    ({"margin": "5"}, "margin"),
    ({"margin": "0.05; rm -rf ~"}, "margin"),
    ({"config": ""}, "config"),
    ({"config": "E/hybrid\n::set-output name=x::y"}, "config"),
    ({"python-version": "2.7"}, "python-version"),
    ({"baseline": "../elsewhere"}, "baseline"),
    ({"mode": "baseline", "baseline": ""}, "baseline"),
    ({"mode": "baseline", "baseline-path": "x"}, "baseline-path"),
    ({"mode": "baseline", "candidate": "x"}, "candidate"),
])
def test_a_bad_input_is_one_line_and_exit_2(tmp_path, inputs, field):
    code, log = _run_step("Check the inputs", tmp_path, {"config": "E/hybrid", **inputs}, {}, _env(tmp_path))
    assert code == 2 and len(log.strip().splitlines()) == 1, log
    assert log.startswith(f"::error::ragdiag action: input {field} is ")


@pytest.mark.parametrize("strict, expected", [("true", "true"), ("True", "true"), ("TRUE", "true"),
                                              ("false", "false"), ("False", "false")])
def test_strict_is_read_in_any_case(tmp_path, strict, expected):
    outputs: dict[str, dict[str, str]] = {}
    code, log = _run_step("Check the inputs", tmp_path, {"config": "E/hybrid", "strict": strict}, outputs,
                          _env(tmp_path))
    assert code == 0 and outputs["check"] == {"strict": expected}, log
    assert STEPS["Gate"]["env"]["STRICT"] == "${{ steps.check.outputs.strict }}"


@pytest.mark.parametrize("inputs", [{}, {"mode": "baseline"}, {"margin": "0"}, {"margin": ".1"},
                                    {"python-version": "3.x"}, {"python-version": "3.12"},
                                    {"python-version": "3.13t"}, {"config": "E/hybrid+rerank"}])
def test_good_inputs_pass_the_check(tmp_path, inputs):
    code, log = _run_step("Check the inputs", tmp_path, {"config": "E/hybrid", **inputs}, {}, _env(tmp_path))
    assert code == 0 and log == "", log
