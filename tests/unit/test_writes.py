"""Every write whole or not at all (``ragdiag.core.files``), and every output path checked before the work.

The disk-full test runs each writer twice into one folder: once with room (the previous files), then with the
folder's disk full. Where this machine lets the test mount a small tmpfs (root on Linux) the disk is really full;
elsewhere every write raises ``ENOSPC`` by injection at the one place bytes reach a file
(:func:`ragdiag.core.files._write_fd`). Either way: exit 2 with one line, every previous file byte for byte as it
was, no temporary file left.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ragdiag.core import files
from ragdiag.core.files import TMP_SUFFIX, OutputError, atomic_write, check_output, clean_stale_temps, write_all

from heldout import make_heldout, run


# --- the helper, unit by unit --------------------------------------------------------------------------------------
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_atomic_write_replaces_whole_and_keeps_the_mode(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    path.chmod(0o640)
    atomic_write(path, "new text")
    assert path.read_text() == "new text" and stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_link_stays_a_link_and_its_target_is_rewritten(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    atomic_write(link, "new")
    assert link.is_symlink() and target.read_text() == "new"


def test_temp_files_of_dead_writers_are_cleaned_and_live_ones_kept(tmp_path):
    dead = tmp_path / f".out.txt.{_dead_pid()}.abcd1234{TMP_SUFFIX}"
    live = tmp_path / f".out.txt.{os.getppid()}.abcd1234{TMP_SUFFIX}"  # a running process: its save is underway
    dead.write_text("half")
    live.write_text("half")
    atomic_write(tmp_path / "out.txt", "x")
    assert not dead.exists() and live.exists()
    assert clean_stale_temps(tmp_path) == []


def test_write_all_is_all_or_nothing(tmp_path, monkeypatch):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    write_all({a: "a1", b: "b1"})
    calls = []

    def second_fails(fd, data):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        os.write(fd, data)

    monkeypatch.setattr(files, "_write_fd", second_fails)
    with pytest.raises(OutputError, match="no space left on device; nothing partial was left, none of the 2"):
        write_all({a: "a2", b: "b2"})
    assert a.read_text() == "a1" and b.read_text() == "b1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


@pytest.mark.parametrize("case, message", [
    ("missing folder", "does not exist; create it first"),
    ("a folder", "which is a folder"),
    ("an input", "is one of this command's inputs"),
    ("someone else's file", "refusing to overwrite it (pass --force"),
    ("a FIFO", "named pipe (FIFO), not a regular file"),
    ("a link to /dev/null", "character device, not a regular file"),
])
def test_check_output_refuses_before_the_work(tmp_path, case, message):
    path = {"missing folder": tmp_path / "no" / "out.md", "a folder": tmp_path,
            "an input": tmp_path / "summary.json", "someone else's file": tmp_path / "notes.md",
            "a FIFO": tmp_path / "fifo", "a link to /dev/null": tmp_path / "null"}[case]
    (tmp_path / "summary.json").write_text("{}")
    (tmp_path / "notes.md").write_text("mine")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "null").symlink_to("/dev/null")
    with pytest.raises(OutputError, match=re.escape(message)):
        check_output(path, what="--markdown", inputs=[tmp_path / "summary.json"])
    assert (tmp_path / "notes.md").read_text() == "mine"


def test_check_output_replaces_with_force_or_when_ours(tmp_path):
    mine = tmp_path / "gate.md"
    mine.write_text("## ragdiag gate: ✅ pass\n")
    assert check_output(mine, ours=lambda p: p.read_text().startswith("## ragdiag gate:")) == mine
    other = tmp_path / "notes.md"
    other.write_text("mine")
    assert check_output(other, force=True) == other
    assert not list(tmp_path.glob(f"*{TMP_SUFFIX}")) and not list(tmp_path.glob(f".*{TMP_SUFFIX}"))


def test_a_truth_backup_keeps_the_original_mode_and_killed_saves_are_cleaned(tmp_path):
    from ragdiag.authoring.save import backup_path, open_truth, save_truth

    path = tmp_path / "kb.truth.json"
    path.write_text(json.dumps({"questions": [], "ood": []}))
    path.chmod(0o640)
    orphans = [tmp_path / f".kb.truth.json.{_dead_pid()}.0000{TMP_SUFFIX}",
               tmp_path / ".kb.truth.json.x1y2z3.tmp"]  # an earlier ragdiag's mkstemp name
    for o in orphans:
        o.write_text("half a save")
    opened = open_truth(path)
    save_truth(path, {"questions": [], "ood": [{"id": "o1", "query": "q"}]}, expected_sha256=opened.sha256)
    assert stat.S_IMODE(backup_path(path).stat().st_mode) == 0o640
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert not any(o.exists() for o in orphans)


# --- the gate's outputs ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def heldout(tmp_path_factory):
    """The held-out corpus, its truth and one `eval --out` folder (FAKE encoder: plumbing)."""
    from ragdiag.cli.parser import main

    tmp = tmp_path_factory.mktemp("writes")
    folder, truth = make_heldout(tmp)
    env = os.environ.get("RAGDIAG_ENCODER")
    os.environ["RAGDIAG_ENCODER"] = "fakes:fake_encoder"
    try:
        assert main([str(a) for a in ("eval", "--corpus", folder, "--truth", truth, "--no-cache", "--strategies",
                                      "C", "--retrievers", "dense", "--out", tmp / "run")]) == 0
    finally:
        os.environ.pop("RAGDIAG_ENCODER") if env is None else os.environ.__setitem__("RAGDIAG_ENCODER", env)
    return {"folder": folder, "truth": truth, "run": tmp / "run"}


def _one_line(err: str) -> str:
    """The one ``error:`` line of stderr (progress bars and notes aside), and no traceback."""
    lines = [ln for ln in re.split(r"[\r\n]", err) if ln.startswith("error")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_gate_refuses_to_overwrite_the_baseline_or_a_foreign_file_before_comparing(heldout, tmp_path, capsys):
    r = heldout["run"]
    before = (r / "summary.json").read_bytes()
    code, out, err = run(capsys, "gate", r, r, "--config", "C/dense", "--junit", r / "summary.json")
    assert code == 2 and "one of this command's inputs" in _one_line(err) and out == ""
    assert (r / "summary.json").read_bytes() == before
    notes = tmp_path / "notes.md"
    notes.write_text("mine")
    code, out, err = run(capsys, "gate", r, r, "--config", "C/dense", "--markdown", notes)
    assert code == 2 and "refusing to overwrite" in _one_line(err) and notes.read_text() == "mine"
    code, out, err = run(capsys, "gate", r, r, "--config", "C/dense", "--markdown", tmp_path / "no" / "g.md")
    assert code == 2 and "does not exist" in _one_line(err) and out == ""  # before the comparison
    # its own earlier file is replaced; another one with --force
    assert run(capsys, "gate", r, r, "--config", "C/dense", "--markdown", tmp_path / "g.md")[0] == 0
    assert run(capsys, "gate", r, r, "--config", "C/dense", "--markdown", tmp_path / "g.md")[0] == 0
    assert run(capsys, "gate", r, r, "--config", "C/dense", "--markdown", notes, "--force")[0] == 0
    assert notes.read_text().startswith("## ragdiag gate:")


def test_control_characters_and_markup_in_queries_keep_junit_readable_and_markdown_inert(tmp_path, capsys):
    """A query with control characters (``truth check`` accepts them) and an image link as an id."""
    from ragdiag.cli.parser import main

    def hostile(qs):
        qs[0]["id"] = "![x](http://attacker.example/p.png)"
        qs[0]["queries"]["course"] = "how many eggs\x1b[31m\x00\x07 does a queen bee lay\x0c"
        return qs

    folder, truth = make_heldout(tmp_path, questions=hostile)
    os.environ["RAGDIAG_ENCODER"] = "fakes:fake_encoder"
    try:
        assert main([str(a) for a in ("eval", "--corpus", folder, "--truth", truth, "--no-cache", "--strategies",
                                      "A,C", "--retrievers", "dense", "--out", tmp_path / "run")]) == 0
    finally:
        os.environ.pop("RAGDIAG_ENCODER")
    capsys.readouterr()
    xml, md = tmp_path / "g.xml", tmp_path / "g.md"
    code, out, err = run(capsys, "gate", tmp_path / "run", tmp_path / "run", "--config", "C/dense",
                         "--candidate-config", "A/dense", "--junit", xml, "--markdown", md)
    assert code == 1
    root = ET.fromstring(xml.read_text(encoding="utf-8"))  # parses: no control character left
    text = "".join(root.itertext())
    assert "queen bee lay" in text and "\x1b" not in text and "\x00" not in text
    page = md.read_text(encoding="utf-8")
    assert "![x](http" not in page and "\\[x\\]" in page
    assert not any(ord(c) < 32 and c not in "\n" for c in page)


# --- a full disk ------------------------------------------------------------------------------------------------------
def _mount_tmpfs(folder: Path) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0:
        return False
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
                          capture_output=True).returncode == 0


def _fill(folder: Path) -> None:
    """Use every free byte of ``folder``'s file system (a real full disk)."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        for size in (1 << 20, 1 << 12, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)


@pytest.fixture(params=["tmpfs", "injected"])
def full_disk(request, tmp_path, monkeypatch):
    """A folder and a function that makes its disk full: a real tmpfs where it can be mounted, else injection."""
    folder = tmp_path / "disk"
    if request.param == "tmpfs":
        if not _mount_tmpfs(folder):
            pytest.skip("cannot mount a tmpfs here (not root on Linux); the injected variant covers it")
        request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(folder)], capture_output=True))
        return folder, lambda: _fill(folder)
    folder.mkdir()

    def inject():
        def full(fd, data):
            raise OSError(errno.ENOSPC, "No space left on device")
        monkeypatch.setattr(files, "_write_fd", full)
    return folder, inject


def _snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "filler"}


WRITERS = ["threshold --export", "eval --out", "gate --markdown --junit", "report --out", "truth save"]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_full_disk_leaves_every_previous_file_and_nothing_partial(heldout, full_disk, capsys, monkeypatch,
                                                                    writer):
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    disk, make_full = full_disk
    corpus = ["--corpus", heldout["folder"], "--truth", heldout["truth"], "--no-cache"]
    argv = {
        "threshold --export": ["threshold", "C/dense", "--max-bluff", "0.4", *corpus, "--export",
                               disk / "thresholds.yaml"],
        "eval --out": ["eval", *corpus, "--strategies", "C", "--retrievers", "dense,bm25", "--out", disk / "run"],
        "gate --markdown --junit": ["gate", heldout["run"], heldout["run"], "--config", "C/dense", "--markdown",
                                    disk / "gate.md", "--junit", disk / "gate.xml"],
        "report --out": ["report", *corpus, "--strategies", "C", "--retrievers", "dense", "--no-cost", "--out",
                         disk / "report.html"],
    }.get(writer)
    if argv is None:  # the ground-truth editor's save
        from ragdiag.authoring.save import open_truth, save_truth

        path = disk / "kb.truth.json"
        save_truth(path, {"questions": [], "ood": [{"id": "o1", "query": "first"}]}, expected_sha256=None)
        save_truth(path, {"questions": [], "ood": [{"id": "o1", "query": "second"}]},
                   expected_sha256=open_truth(path).sha256)
        before = _snapshot(disk)
        make_full()
        with pytest.raises(OutputError, match="no space left on device"):
            save_truth(path, {"questions": [], "ood": [{"id": "o1", "query": "third"}]},
                       expected_sha256=open_truth(path).sha256)
    else:
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        before = _snapshot(disk)
        assert before
        make_full()
        code, out, err = run(capsys, *argv)
        assert code == 2 and "no space left on device" in _one_line(err), err
    assert _snapshot(disk) == before
    assert not [p for p in disk.rglob("*") if TMP_SUFFIX in p.name or p.name.endswith(".tmp")]


def test_a_new_eval_out_folder_on_a_full_disk_is_not_left_behind(heldout, full_disk, capsys, monkeypatch):
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    disk, make_full = full_disk
    make_full()
    code, out, err = run(capsys, "eval", "--corpus", heldout["folder"], "--truth", heldout["truth"], "--no-cache",
                         "--strategies", "C", "--retrievers", "dense", "--out", disk / "new" / "run")
    assert code == 2 and "no space left on device" in _one_line(err)
    assert sorted(p.name for p in disk.iterdir()) in ([], ["filler"])


def test_the_editor_says_a_full_disk_in_one_line_without_the_server_path(tmp_path, monkeypatch):
    """The Ground truth page's save on a full disk: 'Not saved', the file name only, the file as it was."""
    import streamlit as st

    from ragdiag.authoring.save import open_truth
    from ui import truth_editor

    path = tmp_path / "kb.truth.json"
    path.write_text(json.dumps({"questions": [], "ood": []}))
    before = path.read_bytes()
    state = {"base": open_truth(path), "data": {"questions": [], "ood": [{"id": "o1", "query": "q"}]}}

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "_write_fd", full)
    monkeypatch.setattr(st, "session_state", {})
    truth_editor.save(path, state)
    kind, text = truth_editor.pop_message()
    assert kind == "error" and text.startswith("Not saved: cannot write ") and "no space left on device" in text
    assert str(tmp_path) not in text and "its folder/kb.truth.prev.json" in text  # the backup is written first
    assert path.read_bytes() == before


def test_a_link_to_a_device_is_never_replaced(tmp_path):
    """An output that is a link to /dev/null: refused, the device left alone (root could otherwise replace it)."""
    link = tmp_path / "summary.json"
    link.symlink_to("/dev/null")
    with pytest.raises(OutputError, match="character device, not a regular file"):
        write_all({tmp_path / "a.txt": "a", link: "{}"})
    assert Path("/dev/null").is_char_device() and not (tmp_path / "a.txt").exists()


def test_a_save_killed_mid_write_leaves_the_file_and_its_temp_is_cleaned_next_time(tmp_path):
    """``kill -9`` while the bytes are being written: the file is as it was; the next write removes the orphan."""
    target = tmp_path / "kb.truth.json"
    target.write_text('{"questions": [], "ood": []}\n')
    before = target.read_bytes()
    script = ("import os, sys, time\n"
              "from ragdiag.core import files\n"
              "def stuck(fd, data):\n"
              "    os.write(fd, data[:10])\n"
              "    print('writing', flush=True)\n"
              "    time.sleep(600)\n"
              "files._write_fd = stuck\n"
              f"files.atomic_write({str(target)!r}, 'x' * 100000)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2],
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    try:
        assert proc.stdout.readline().strip() == "writing"  # the signal: it is mid-write
    finally:
        proc.kill()
        proc.wait()
    orphans = list(tmp_path.glob(f".kb.truth.json.*{TMP_SUFFIX}"))
    assert len(orphans) == 1 and target.read_bytes() == before
    atomic_write(target, "{}\n")
    assert not list(tmp_path.glob(f".*{TMP_SUFFIX}")) and target.read_text() == "{}\n"
