"""Every path a served visitor can cause to be read or written passes one access check; no saved edit is lost.

The derived paths (the ground truth beside a chosen corpus folder, a model folder), locked mode without any
path field on any page, two editors saving at once, and a save that keeps the file's mode and symlink.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from apptest import APP, app, ok as _ok, serve_tiny, texts, write_tiny_corpus

ROOT = Path(__file__).resolve().parents[2]
GT_PAGE = str(ROOT / "app_pages" / "ground_truth.py")
REFUSED = "is not one this dashboard serves"
# every page of the navigation (collection.py is the only page when the operator serves a collection instead)
PAGES = [p.name for p in sorted((ROOT / "app_pages").glob("*.py")) if p.name != "collection.py"]


def _gt_page(session: dict | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(GT_PAGE, default_timeout=60)
    for k, v in (session or {}).items():
        at.session_state[k] = v
    return _ok(at.run())


@pytest.fixture
def kb2(tmp_path, monkeypatch):
    """The operator's corpus ``tiny`` (no configured truth file) and a second allowed corpus ``kb2``."""
    root, truth = write_tiny_corpus(tmp_path)
    kb2 = tmp_path / "kb2"
    shutil.copytree(root, kb2)
    monkeypatch.setenv("RAGDIAG_CORPUS", str(root))
    monkeypatch.delenv("RAGDIAG_TRUTH", raising=False)
    monkeypatch.delenv("RAGDIAG_LOCKED", raising=False)
    monkeypatch.setenv("RAGDIAG_ROOTS", str(kb2))
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    return {"root": root, "truth": truth, "kb2": kb2, "base": tmp_path}


# ----- the library's rule ---------------------------------------------------------------------------------

def test_the_truth_beside_a_visitors_corpus_passes_the_access_check(tmp_path):
    from ragdiag.present.serving import Access, AccessError

    kb, kb2 = tmp_path / "kb", tmp_path / "kb2"
    acc = Access.from_env({"RAGDIAG_CORPUS": str(kb), "RAGDIAG_ROOTS": str(kb2)})
    # kb2.truth.json is beside kb2, outside every root: never the file written
    with pytest.raises(AccessError, match=REFUSED):
        acc.truth_target(kb2, tmp_path / "kb2.truth.json")
    # the operator's own truth file may be edited whatever corpus is open
    assert acc.truth_target(kb2, tmp_path / "kb.truth.json") == tmp_path / "kb.truth.json"
    assert acc.truth_target(kb, tmp_path / "kb2" / "typed.json") == tmp_path / "kb.truth.json"
    # a truth file under an allowed root beside an allowed corpus is writable
    acc2 = Access.from_env({"RAGDIAG_CORPUS": str(kb), "RAGDIAG_ROOTS": str(tmp_path)})
    assert acc2.truth_target(kb2, tmp_path / "kb2.truth.json") == tmp_path / "kb2.truth.json"


def test_a_model_name_passes_the_access_check_and_is_no_oracle(tmp_path):
    from ragdiag.present.serving import Access, AccessError

    model = tmp_path / "allowed" / "model"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    env = {"RAGDIAG_CORPUS": str(tmp_path / "kb"), "RAGDIAG_ROOTS": str(tmp_path / "allowed"),
           "RAGDIAG_MODELS": "org/listed"}
    acc = Access.from_env(env)
    assert acc.model("minilm") == "minilm" and acc.model("org/listed") == "org/listed"
    assert acc.model(str(model)) == str(model)
    answers = set()
    for name in ("/etc", "/nonexistent", str(tmp_path), "../../etc", "org/not-cached", "a\0b"):
        with pytest.raises(AccessError) as exc:
            acc.model(name)
        answers.add(str(exc.value))
    assert len(answers) == 1
    locked = Access.from_env({**env, "RAGDIAG_LOCKED": "1"})
    assert locked.model("org/listed") == "org/listed"
    with pytest.raises(AccessError):
        locked.model(str(model))  # locked: no folder at all, even an allowed one


# ----- the Ground truth page ---------------------------------------------------------------------------------

def test_saving_never_writes_the_truth_beside_a_visitors_corpus(kb2):
    """Corpus kb2 (allowed), truth the operator's: Save writes the operator's file, never kb2.truth.json."""
    at = _gt_page({"corpus_path": str(kb2["kb2"]), "truth_path": str(kb2["truth"])})
    at.text_area(key="gt_ood_text").input("What is the capital of Mongolia?").run()
    _ok(at.button(key="gt_add_ood").click().run())
    _ok(at.button(key="gt_save").click().run())
    assert sorted(p.name for p in kb2["base"].iterdir() if p.name.startswith(("kb2", ".kb2"))) == ["kb2"]
    assert [o["id"] for o in json.loads(kb2["truth"].read_text())["ood"]][-1] == "o03"


def test_an_empty_truth_field_with_a_visitors_corpus_is_refused(kb2):
    at = _gt_page({"corpus_path": str(kb2["kb2"]), "truth_path": ""})
    assert any(REFUSED in e.value for e in at.error)
    assert not [b for b in at.button if b.key == "gt_save"]
    assert not (kb2["base"] / "kb2.truth.json").exists()


@pytest.fixture
def configured(tmp_path, monkeypatch):
    root, truth = write_tiny_corpus(tmp_path)
    monkeypatch.setenv("RAGDIAG_CORPUS", str(root))
    monkeypatch.setenv("RAGDIAG_TRUTH", str(truth))
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    for k in ("RAGDIAG_ROOTS", "RAGDIAG_LOCKED"):
        monkeypatch.delenv(k, raising=False)
    return truth


def _add_ood(at, text: str):
    at.text_area(key="gt_ood_text").input(text).run()
    return _ok(at.button(key="gt_add_ood").click().run())


def test_two_editors_saving_at_once_lose_nothing(configured):
    """Two sessions open the file, both add an out-of-domain query (both shown o03); both end up in the file."""
    truth = configured
    alice, bob = _gt_page(), _gt_page()
    _add_ood(alice, "Which espresso machine has the best steam wand?")
    _add_ood(bob, "How do I renew a fishing licence?")
    _ok(alice.button(key="gt_save").click().run())
    _ok(bob.button(key="gt_save").click().run())
    assert any("changed on disk" in e.value for e in bob.error)
    _ok(bob.button(key="gt_merge").click().run())
    assert any("o03 was added on disk too: yours is now o04" in i.value for i in bob.info)
    _ok(bob.button(key="gt_save").click().run())
    ood = {o["id"]: o["query"] for o in json.loads(truth.read_text())["ood"]}
    assert ood["o03"] == "Which espresso machine has the best steam wand?"
    assert ood["o04"] == "How do I renew a fishing licence?"


# ----- saving keeps the file what it was ------------------------------------------------------------------

def test_merge_renumbers_an_id_both_sides_added():
    from ragdiag.authoring.save import merge

    base = {"questions": [], "ood": [{"id": "o01", "query": "x"}]}
    mine = {"questions": [], "ood": [*base["ood"], {"id": "o02", "query": "mine"}]}
    theirs = {"questions": [], "ood": [*base["ood"], {"id": "o02", "query": "theirs"}]}
    merged, conflicts = merge(base, mine, theirs)
    assert merged["ood"] == [*base["ood"], {"id": "o02", "query": "theirs"}, {"id": "o03", "query": "mine"}]
    assert conflicts == []
    # the same entry added by both is one entry, not renumbered
    assert merge(base, theirs, theirs)[0] == theirs


def test_save_keeps_the_mode_and_the_symlink(tmp_path):
    from ragdiag.authoring.save import open_truth, save_truth

    real = tmp_path / "data" / "kb.truth.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"questions": [], "ood": []}))
    os.chmod(real, 0o644)
    link = tmp_path / "kb.truth.json"
    link.symlink_to(real)
    opened = open_truth(link)
    save_truth(link, {"questions": [], "ood": [{"id": "o01", "kind": "far", "query": "q"}]},
               expected_sha256=opened.sha256)
    assert link.is_symlink() and link.resolve() == real
    assert stat.S_IMODE(real.stat().st_mode) == 0o644
    assert json.loads(real.read_text())["ood"][0]["id"] == "o01"
    new = tmp_path / "new.truth.json"
    save_truth(new, {"questions": [], "ood": []}, expected_sha256=None)
    assert stat.S_IMODE(new.stat().st_mode) & 0o044 == 0o044 & ~_umask()  # as open() would create it


def _umask() -> int:
    u = os.umask(0)
    os.umask(u)
    return u


# ----- every text input of every page, served -------------------------------------------------------------

@pytest.fixture
def served(tmp_path, monkeypatch):
    root, truth = serve_tiny(tmp_path, monkeypatch, "RAGDIAG_ROOTS", "RAGDIAG_LOCKED", "RAGDIAG_MODELS")
    return {"root": root, "truth": truth, "base": tmp_path}


#: Text inputs that take no path: (page, key) -> what they take.
NOT_A_PATH = {
    ("inspector.py", "search"): "a search over the truth's queries",
    ("ground_truth.py", "gt_new_id"): "an id",
    ("truth_review.py", "gt_rq_text"): "the question of the draft under review",
}
#: Text inputs that name something on the server, each refused outside the roots.
PATH_INPUTS = {("*", "corpus_path"), ("*", "truth_path"), ("external.py", "run_path"), ("variants.py", "vextra")}


def _inputs(at) -> set[str]:
    return {t.key for t in at.text_input} | {t.key for t in at.sidebar.text_input}


@pytest.mark.model
@pytest.mark.parametrize("locked", [False, True], ids=["unlocked", "locked"])
def test_every_text_input_of_every_page(served, monkeypatch, locked):
    """Locked: no text input of any page takes a path. Unlocked: each one that does refuses /etc the same way."""
    if locked:
        monkeypatch.setenv("RAGDIAG_LOCKED", "1")
    seen = {}
    for page in PAGES:
        at = app(f"app_pages/{page}")
        keys = _inputs(at)
        if page == "ground_truth.py" and not locked:  # phrasing boxes: one per phrasing name, and the id
            keys = {k for k in keys if not k.startswith(("gt_new_", "gt_ed_"))} | ({"gt_new_id"} & keys)
        seen[page] = keys
        paths = {k for k in keys if ("*", k) in PATH_INPUTS or (page, k) in PATH_INPUTS}
        others = keys - paths
        assert all((page, k) in NOT_A_PATH for k in others if k != "gt_new_id"), (page, others)
        if locked:
            assert not paths, (page, paths)
            continue
        for key in paths - {"corpus_path", "truth_path"} if page != "overview.py" else paths:
            answers = set()
            for path in ("/etc", "/nonexistent", "/etc/hostname"):
                at.text_input(key=key).set_value(path).run()
                assert not at.exception, [e.value for e in at.exception]
                answers.add(tuple(e.value for e in at.error))
                at.text_input(key=key).set_value("").run()
            assert len(answers) == 1 and REFUSED in " ".join(answers.pop()), (page, key)
    if not locked:  # the unlocked inputs seen are the ones this test knows
        assert {"corpus_path", "truth_path"} <= seen["overview.py"] and "run_path" in seen["external.py"]
        assert "vextra" in seen["variants.py"]


def test_the_ground_truth_page_reads_the_file_like_the_loader(configured):
    """A duplicate key is an error (never "the last one wins"), a BOM is accepted, a JSON error is called JSON."""
    truth = configured
    text = truth.read_text()
    truth.write_text(text.replace('"query": ', '"query": "first", "query": ', 1))
    at = _gt_page()
    assert any("duplicate key 'query'" in e.value for e in at.error), [e.value for e in at.error]
    assert not [b for b in at.button if b.key == "gt_save"]
    truth.write_bytes(b"\xef\xbb\xbf" + text.encode())
    at = _gt_page()
    assert not at.error and [b for b in at.button if b.key == "gt_save"]
    truth.write_text('{"questions": [,]}')
    at = _gt_page()
    assert any("is not valid JSON" in e.value and "YAML" not in e.value for e in at.error)
