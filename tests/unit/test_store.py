"""Tests for ragdiag.index.store: caching, stamps and staleness, and surviving crashes and corruption.

Every test here uses :class:`HashEncoder` (a hash-seeded FAKE, for plumbing
only); ``test_real_encoder_second_embed_computes_nothing`` (in
``tests/model/test_store_real_model.py``) uses the real all-MiniLM-L6-v2.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import warnings
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragdiag import PIPELINE_VERSION
from ragdiag.index.chunking import chunk_corpus, parse_strategies
from ragdiag.index.store.staleness import CurrentState, format_status_table
from ragdiag.index.store.stamps import IndexStamp
from ragdiag.index.store import Store
from ragdiag.index.store.glue import current_stamps, record_evaluation
from ragdiag.index.store.keys import resolve_root, text_sha256

from _store_writer import texts_range  # noqa: E402
from fakes import HashEncoder  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).parents[1] / "helpers" / "_store_writer.py"


def expected(encoder: HashEncoder, texts) -> np.ndarray:
    return np.stack([encoder.vector(t) for t in texts]) if texts else np.zeros((0, encoder.stamp.dim), np.float32)


def db_rows(store: Store, sql: str, params=()):
    with sqlite3.connect(store.path) as conn:
        return conn.execute(sql, params).fetchall()


def raw_update(store: Store, sql: str, params=()) -> None:
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute(sql, params)
    conn.close()


def flip(data: bytes, at: int) -> bytes:
    b = bytearray(data)
    b[at] ^= 0xFF
    return bytes(b)


def spawn(root: Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, str(WRITER), str(root), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)


# ---------------------------------------------------------------------------
# location
# ---------------------------------------------------------------------------


def test_root_explicit_beats_env_beats_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGDIAG_CACHE", raising=False)
    assert resolve_root() == tmp_path / ".ragdiag-cache"
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "env-cache"))
    assert resolve_root() == tmp_path / "env-cache"
    with Store() as store:
        assert store.root == tmp_path / "env-cache" and store.path.exists()
    assert resolve_root(tmp_path / "explicit") == tmp_path / "explicit"
    with Store(tmp_path / "explicit") as store:
        assert store.root == tmp_path / "explicit"
        assert (store.root / ".gitignore").read_text().strip().endswith("*")


# ---------------------------------------------------------------------------
# embeddings
# ---------------------------------------------------------------------------


def test_embed_computes_once_then_reuses_in_input_order(tmp_path):
    enc = HashEncoder()
    texts = ["alpha", "beta", "gamma", "beta"]  # "beta" twice: computed once
    with Store(tmp_path) as store:
        first = store.embed(enc, texts)
        assert (first.computed, first.reused, first.repaired) == (3, 0, 0)
        assert enc.encoded == 3
        np.testing.assert_array_equal(first.vectors, expected(enc, texts))
        assert first.vectors.dtype == np.float32 and first.vectors.shape == (4, 16)

        again = store.embed(enc, ["gamma", "alpha", "delta"])
        assert (again.computed, again.reused) == (1, 2)
        assert enc.encoded == 4  # only "delta"
        np.testing.assert_array_equal(again.vectors, expected(enc, ["gamma", "alpha", "delta"]))

    with Store(tmp_path) as reopened:  # persisted across instances
        third = reopened.embed(enc, texts)
        assert (third.computed, third.reused) == (0, 3)
        np.testing.assert_array_equal(third.vectors, first.vectors)


def test_embed_empty_input(tmp_path):
    with Store(tmp_path) as store:
        r = store.embed(HashEncoder(dim=8), [])
    assert r.vectors.shape == (0, 8) and (r.computed, r.reused) == (0, 0)


def test_embed_progress_counts_only_computed_texts_across_batches(tmp_path):
    enc = HashEncoder()
    calls = []
    with Store(tmp_path) as store:
        store.embed(enc, texts_range(0, 100))
        store.embed(enc, texts_range(0, 400), progress=lambda d, n: calls.append((d, n)), commit_every=128)
    # 300 missing texts in batches of 128, 128, 44 -> progress runs 1..300 of 300
    assert calls[-1] == (300, 300)
    assert all(n == 300 for _, n in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert enc.calls == 1 + 3


def test_embed_computes_the_longest_texts_first_across_committed_parts(tmp_path):
    """An encoder that counts tokens gets every missing text longest first, not sorted only inside each part."""

    class Counting(HashEncoder):
        def __init__(self):
            super().__init__()
            self.seen: list[str] = []

        def count_tokens(self, texts):
            return np.array([len(t.split()) for t in texts])

        def encode(self, texts, *, progress=None):
            self.seen.extend(texts)
            return super().encode(texts, progress=progress)

    enc = Counting()
    texts = [" ".join(["w"] * n) + f" t{i}" for i, n in enumerate([3, 9, 1, 7, 5, 2, 8, 4])]
    with Store(tmp_path) as store:
        got = store.embed(enc, texts, commit_every=3)
    assert [len(t.split()) for t in enc.seen] == [10, 9, 8, 6, 5, 4, 3, 2]
    assert enc.calls == 3  # still committed in parts of 3
    np.testing.assert_array_equal(got.vectors, expected(enc, texts))  # in input order


def test_an_encoder_that_keeps_workers_up_gets_one_session_for_all_parts_of_an_embed(tmp_path):
    """FAKE session encoder (plumbing; Ray's pool is tests/ray/test_ray_engine.py): every committed part of one
    embed runs inside one ``encoding_session``, in parts of its ``texts_per_commit`` unless the caller says;
    nothing stored, nothing to encode: no session."""
    from contextlib import contextmanager

    from ragdiag.index.encoder.protocols import EncodesInSessions

    class Sessions(HashEncoder):
        texts_per_commit = 40

        def __init__(self):
            super().__init__()
            self.log: list[str] = []
            self.open = False

        @contextmanager
        def encoding_session(self):
            self.log.append("open")
            self.open = True
            try:
                yield self
            finally:
                self.open = False
                self.log.append("close")

        def encode(self, texts, *, progress=None):
            self.log.append(f"encode {len(texts)} {'in' if self.open else 'OUTSIDE'}")
            return super().encode(texts, progress=progress)

    enc = Sessions()
    assert isinstance(enc, EncodesInSessions) and not isinstance(HashEncoder(), EncodesInSessions)
    with Store(tmp_path) as store:
        got = store.embed(enc, texts_range(0, 100))
        assert enc.log == ["open", "encode 40 in", "encode 40 in", "encode 20 in", "close"]
        np.testing.assert_array_equal(got.vectors, expected(enc, texts_range(0, 100)))
        enc.log.clear()
        store.embed(enc, texts_range(100, 150), commit_every=30)
        assert enc.log == ["open", "encode 30 in", "encode 20 in", "close"]
        enc.log.clear()
        assert store.embed(enc, texts_range(0, 150)).computed == 0
        assert enc.log == []


def test_the_session_is_closed_when_an_embed_fails(tmp_path):
    """FAKE (plumbing): a part that fails ends the session (Ray's actors are killed), and the parts before it stay."""
    from contextlib import contextmanager

    class FailsThird(HashEncoder):
        texts_per_commit = 10

        def __init__(self):
            super().__init__()
            self.closed = 0

        @contextmanager
        def encoding_session(self):
            try:
                yield self
            finally:
                self.closed += 1

        def encode(self, texts, *, progress=None):
            if self.calls == 2:
                raise RuntimeError("the third part fails")
            return super().encode(texts, progress=progress)

    enc = FailsThird()
    with Store(tmp_path) as store:
        with pytest.raises(RuntimeError, match="third part"):
            store.embed(enc, texts_range(0, 50))
        assert enc.closed == 1
        assert store.embed(HashEncoder(), texts_range(0, 50)).reused == 20


def test_other_model_or_precision_is_never_served(tmp_path):
    fp32, bf16 = HashEncoder(), HashEncoder(precision="bf16")
    retrained = HashEncoder(weights="fake-weights-2")
    texts = texts_range(0, 20)
    with Store(tmp_path) as store:
        store.embed(fp32, texts)
        for other in (bf16, retrained):
            r = store.embed(other, texts)
            assert (r.computed, r.reused) == (20, 0)
            np.testing.assert_array_equal(r.vectors, expected(other, texts))
            assert not np.array_equal(r.vectors, expected(fp32, texts))
        r = store.embed(fp32, texts)
        assert r.computed == 0
        np.testing.assert_array_equal(r.vectors, expected(fp32, texts))


def test_encoder_returning_a_wrong_shape_is_rejected_and_nothing_cached(tmp_path):
    class Broken(HashEncoder):
        def encode(self, texts, *, progress=None):
            return super().encode(texts)[:, :-1]

    with Store(tmp_path) as store:
        with pytest.raises(ValueError, match="shape"):
            store.embed(Broken(), ["a"])
        assert db_rows(store, "SELECT count(*) FROM vectors") == [(0,)]


def test_fetching_5000_vectors_reads_them_in_a_few_batched_queries(tmp_path):
    # Speed is measured in benchmarks/; what makes it fast is checked here: no encoding and
    # a bounded number of batched SELECTs (not one query per vector).
    enc = HashEncoder(dim=384)
    texts = texts_range(0, 5000)
    with Store(tmp_path) as store:
        store.embed(enc, texts)
        selects = []
        store._conn.set_trace_callback(lambda sql: selects.append(sql) if sql.startswith("SELECT") else None)
        calls = enc.calls
        r = store.embed(enc, texts)
        store._conn.set_trace_callback(None)
    assert r.reused == 5000 and r.computed == 0 and enc.calls == calls
    vector_selects = [s for s in selects if "FROM vectors" in s]
    assert 1 <= len(vector_selects) <= 20, len(vector_selects)


def test_one_store_shared_by_threads(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    enc = HashEncoder()
    with Store(tmp_path) as store, ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda k: store.embed(enc, texts_range(k * 50, k * 50 + 200)).vectors, range(8)))
    for k, vectors in enumerate(results):
        np.testing.assert_array_equal(vectors, expected(enc, texts_range(k * 50, k * 50 + 200)))


# ---------------------------------------------------------------------------
# damaged entries are detected and recomputed, never served
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        "flip a byte of the vector",
        "truncate the vector",
        "change the checksum",
        "change the dimension",
        "store text instead of bytes",
    ],
)
def test_damaged_vector_entry_is_recomputed(tmp_path, damage):
    enc = HashEncoder()
    texts = ["one", "two", "three"]
    with Store(tmp_path) as store:
        store.embed(enc, texts)
        key = text_sha256("two")
        (data,) = db_rows(store, "SELECT data FROM vectors WHERE text_sha=?", (key,))[0]
        sql, params = {
            "flip a byte of the vector": ("UPDATE vectors SET data=? WHERE text_sha=?", (flip(data, 17), key)),
            "truncate the vector": ("UPDATE vectors SET data=? WHERE text_sha=?", (data[:-4], key)),
            "change the checksum": ("UPDATE vectors SET crc=crc+1 WHERE text_sha=?", (key,)),
            "change the dimension": ("UPDATE vectors SET dim=8, data=? WHERE text_sha=?", (data[:32], key)),
            "store text instead of bytes": ("UPDATE vectors SET data='not a vector' WHERE text_sha=?", (key,)),
        }[damage]
        raw_update(store, sql, params)
        assert store.verify(repair=False).bad == 1

        before = enc.encoded
        r = store.embed(enc, texts)
        assert (r.computed, r.reused, r.repaired) == (1, 2, 1)
        assert enc.encoded == before + 1
        np.testing.assert_array_equal(r.vectors, expected(enc, texts))
        # the entry was overwritten with a good one
        assert store.verify().bad == 0
        assert store.embed(enc, texts).computed == 0


def test_verify_repairs_by_removing_bad_entries(tmp_path):
    enc = HashEncoder()
    with Store(tmp_path) as store:
        store.embed(enc, texts_range(0, 10))
        raw_update(store, "UPDATE vectors SET crc=crc+1 WHERE text_sha IN (?, ?)",
                   (text_sha256("text 000001"), text_sha256("text 000002")))
        result = store.verify()
        assert (result.vectors, result.bad, result.removed) == (10, 2, 2)
        assert store.verify().vectors == 8
        assert store.embed(enc, texts_range(0, 10)).computed == 2


def _flip_file(path: Path, offsets, value: int = 0xA5) -> None:
    data = bytearray(path.read_bytes())
    for off in offsets:
        data[off % len(data)] ^= value
    path.write_bytes(bytes(data))


def _fill(root: Path, enc: HashEncoder, n: int = 300) -> Store:
    store = Store(root)
    store.embed(enc, texts_range(0, n))
    store.close()  # the WAL is folded into the file: damage hits the real thing
    assert not store.path.with_name(store.path.name + "-wal").exists()
    return store


def test_unreadable_database_file_is_moved_aside_and_store_starts_fresh(tmp_path):
    enc = HashEncoder()
    store = _fill(tmp_path, enc)
    with open(store.path, "r+b") as f:
        f.write(b"this is not an sqlite file at all" * 4)
    with pytest.warns(RuntimeWarning, match="moved aside"):
        reopened = Store(tmp_path)
    with reopened:
        (aside,) = reopened.quarantined
        assert aside.name.startswith("ragdiag.sqlite.corrupt-") and aside.exists()
        r = reopened.embed(enc, texts_range(0, 300))
        assert (r.computed, r.reused) == (300, 0)
        np.testing.assert_array_equal(r.vectors, expected(enc, texts_range(0, 300)))
        assert reopened.verify().bad == 0


def _mangle_schema(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA writable_schema=ON")
    with conn:
        conn.execute(sql)
    conn.close()


@pytest.mark.parametrize("check", [True, False], ids=["quick_check", "no quick_check"])
@pytest.mark.parametrize(
    "damage",
    ["header: unsupported file format", "schema: no such column", "schema: undecodable name"],
)
def test_damaged_header_or_schema_is_moved_aside(tmp_path, damage, check):
    # Each of these once escaped as an exception (found by flipping random bytes).
    enc = HashEncoder()
    store = _fill(tmp_path, enc, n=50)
    if damage.startswith("header"):
        _flip_file(store.path, [18, 19], 0x0F)  # file format write/read versions 2 -> 13
    elif damage == "schema: no such column":
        _mangle_schema(store.path, "UPDATE sqlite_master SET sql=replace(sql, 'value', 'valu') WHERE name='meta'")
    else:
        _mangle_schema(store.path, "UPDATE sqlite_master SET name=CAST(x'6d65ac' AS TEXT) WHERE name='meta'")
    with pytest.warns(RuntimeWarning, match="moved aside"), Store(tmp_path, check=check) as reopened:
        assert len(reopened.quarantined) == 1
        r = reopened.embed(enc, texts_range(0, 50))
        np.testing.assert_array_equal(r.vectors, expected(enc, texts_range(0, 50)))


def test_truncated_database_file_never_crashes_or_serves_wrong_vectors(tmp_path):
    enc = HashEncoder()
    store = _fill(tmp_path, enc)
    size = store.path.stat().st_size
    with open(store.path, "r+b") as f:
        f.truncate(size // 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with Store(tmp_path) as reopened:
            r = reopened.embed(enc, texts_range(0, 300))
            assert r.reused < 300  # half the pages are gone: detected one way or another
            np.testing.assert_array_equal(r.vectors, expected(enc, texts_range(0, 300)))
            assert reopened.verify().bad == 0


def test_corruption_found_after_open_is_handled_without_crashing(tmp_path):
    enc = HashEncoder()
    store = _fill(tmp_path, enc)
    # Break the pages past the schema and the small tables (page 10 on), and skip the
    # open-time check: the damage is met while reading vectors.
    page = int.from_bytes(store.path.read_bytes()[16:18], "big")
    _flip_file(store.path, range(page * 9, store.path.stat().st_size, 97))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with Store(tmp_path, check=False) as reopened:
            assert reopened.quarantined == []
            r = reopened.embed(enc, texts_range(0, 300))
            assert len(reopened.quarantined) == 1
            np.testing.assert_array_equal(r.vectors, expected(enc, texts_range(0, 300)))
            assert r.computed == 300
            assert reopened.embed(enc, texts_range(0, 300)).computed == 0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(offsets=st.lists(st.integers(min_value=0, max_value=10**7), min_size=1, max_size=12),
       value=st.integers(min_value=1, max_value=255))
@example(offsets=[18], value=1)  # the header's write-version byte: SQLite then says "readonly database"
def test_random_byte_flips_in_the_file_never_serve_a_wrong_vector(offsets, value):
    enc = HashEncoder()
    texts = texts_range(0, 120)
    with tempfile.TemporaryDirectory() as tmp:
        store = _fill(Path(tmp), enc, n=120)
        _flip_file(store.path, offsets, value)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with Store(tmp) as reopened:
                r = reopened.embed(enc, texts)
                np.testing.assert_array_equal(r.vectors, expected(enc, texts))
                assert r.computed + r.reused == 120
                reopened.verify()
                assert reopened.verify().bad == 0


# ---------------------------------------------------------------------------
# crashes and concurrent writers
# ---------------------------------------------------------------------------


def test_writer_killed_inside_a_transaction_leaves_only_committed_batches(tmp_path):
    # Batches of 500: the first commits, the kill lands after 250 inserts of the second.
    proc = spawn(tmp_path, "--stop", "2000", "--commit-every", "500", "--die-after-inserts", "750")
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    enc = HashEncoder(dim=32)
    texts = texts_range(0, 2000)
    with Store(tmp_path) as store:
        assert store.verify().vectors == 500
        r = store.embed(enc, texts)
        assert (r.reused, r.computed, r.repaired) == (500, 1500, 0)
        np.testing.assert_array_equal(r.vectors, expected(enc, texts))
        assert store.verify().bad == 0


@pytest.mark.parametrize("seed", [1, 2])
def test_writer_killed_at_a_random_moment(tmp_path, seed):
    # "Random" by a seeded draw of how many texts the writer has encoded when it is killed
    # (it reports its progress), so the kill lands mid-batch, reproducibly, on any machine speed.
    target = random.Random(seed).randrange(450, 2400)
    proc = spawn(tmp_path, "--stop", "30000", "--commit-every", "400", "--print-progress")
    assert proc.stdout.readline().strip() == "ready"
    for line in proc.stdout:
        if int(line.split()[1]) >= target:
            break
    still_running = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert still_running, "the writer finished before it was killed: give it more to write"
    enc = HashEncoder(dim=32)
    texts = texts_range(0, 30000)
    with Store(tmp_path) as store:
        check = store.verify(repair=False)
        assert check.bad == 0 and check.vectors % 400 == 0  # whole batches only
        r = store.embed(enc, texts, commit_every=10000)
        assert r.reused == check.vectors and r.computed == 30000 - check.vectors
        np.testing.assert_array_equal(r.vectors, expected(enc, texts))


def test_two_writers_at_once_agree_with_a_single_process(tmp_path):
    root = tmp_path / "shared"
    a = spawn(root, "--start", "0", "--stop", "3000", "--out", str(tmp_path / "a.npy"))
    b = spawn(root, "--start", "1500", "--stop", "4500", "--out", str(tmp_path / "b.npy"))
    outs = [p.communicate(timeout=120) for p in (a, b)]
    assert a.returncode == 0 and b.returncode == 0, outs
    computed = [int(o[0].split()[-2]) for o in outs]
    assert 4500 <= sum(computed) <= 6000  # the overlap may be computed by both, never lost

    enc = HashEncoder(dim=32)
    with Store(tmp_path / "single") as single:
        reference = single.embed(enc, texts_range(0, 4500)).vectors
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), reference[:3000])
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), reference[1500:])
    with Store(root) as shared:
        check = shared.verify(repair=False)
        assert (check.vectors, check.bad) == (4500, 0)
        r = shared.embed(enc, texts_range(0, 4500))
        assert r.computed == 0
        np.testing.assert_array_equal(r.vectors, reference)


# ---------------------------------------------------------------------------
# pair scores
# ---------------------------------------------------------------------------


def _fake_scores(query: str):
    def compute(texts):
        compute.calls.append(list(texts))
        return np.array([len(t) + len(query) / 100 for t in texts])

    compute.calls = []
    return compute


def test_scores_cached_per_scorer_and_query(tmp_path):
    texts = ["a", "bb", "ccc"]
    with Store(tmp_path) as store:
        c = _fake_scores("q")
        r = store.scores("ce:fake:1", "q", texts, c)
        np.testing.assert_array_equal(r.scores, [1.01, 2.01, 3.01])  # len(text) + len("q")/100
        assert (r.computed, r.reused) == (3, 0)
        r = store.scores("ce:fake:1", "q", ["ccc", "dddd"], c)
        assert (r.computed, r.reused) == (1, 1) and c.calls[-1] == ["dddd"]
        np.testing.assert_array_equal(r.scores, [3.01, 4.01])
        # another query or another scorer is another key
        assert store.scores("ce:fake:1", "qq", texts, _fake_scores("qq")).computed == 3
        assert store.scores("ce:fake:2", "q", texts, _fake_scores("q")).computed == 3
        # the ScoreCache form used by RerankRetriever
        np.testing.assert_array_equal(store.scores("ce:fake:1", "q", texts, c).scores, [1.01, 2.01, 3.01])


def test_damaged_score_is_recomputed(tmp_path):
    with Store(tmp_path) as store:
        store.scores("s", "q", ["a", "b"], _fake_scores("q"))
        (data,) = db_rows(store, "SELECT data FROM scores WHERE text_sha=?", (text_sha256("b"),))[0]
        raw_update(store, "UPDATE scores SET data=? WHERE text_sha=?", (flip(data, 7), text_sha256("b")))
        c = _fake_scores("q")
        r = store.scores("s", "q", ["a", "b"], c)
        assert (r.computed, r.reused, r.repaired) == (1, 1, 1) and c.calls == [["b"]]
        np.testing.assert_array_equal(r.scores, [1.01, 1.01])


def test_nan_scores_round_trip(tmp_path):
    with Store(tmp_path) as store:
        store.scores("s", "q", ["a"], lambda t: np.array([np.nan]))
        r = store.scores("s", "q", ["a"], lambda t: pytest.fail("recomputed"))
        assert r.reused == 1 and np.isnan(r.scores[0])


# ---------------------------------------------------------------------------
# stamps, status, clearing
# ---------------------------------------------------------------------------


def _stamp(enc: HashEncoder, *, corpus="c" * 64, root="/corpus", strategy="E", n=3, extractors=("markdown/1",),
           pipeline=PIPELINE_VERSION) -> IndexStamp:
    return IndexStamp.build(enc.stamp, corpus_sha256=corpus, corpus_root=root,
                            chunking={"strategy": strategy, "size": 512, "overlap": 0}, n_chunks=n,
                            extractor_versions=extractors, pipeline_version=pipeline)


def test_index_stamp_carries_everything_and_round_trips(tmp_path):
    enc = HashEncoder()
    s = _stamp(enc)
    assert s.encoder == enc.stamp and s.as_dict().items() >= enc.stamp.as_dict().items()
    assert (s.pipeline_version, s.extractor_versions, s.corpus_root) == (PIPELINE_VERSION, ("markdown/1",), "/corpus")
    assert s.created.endswith("+00:00")
    assert IndexStamp.from_dict(s.as_dict()) == s
    assert s.key == replace(s, n_chunks=99, created="x").key
    for change in ({"weights_sha256": "0" * 64}, {"precision": "bf16"}, {"dim": 8}, {"max_seq_length": 128},
                   {"pooling": "cls"}, {"pipeline_version": "2"}, {"extractor_versions": ("markdown/2",)},
                   {"corpus_sha256": "d" * 64}, {"chunking": {"strategy": "F"}}):
        assert replace(s, **change).key != s.key, change
    with pytest.raises(ValueError, match="JSON"):
        _stamp(enc).__class__(**{**s.as_dict(), "chunking": {"f": object()}})
    with pytest.raises(ValueError, match="n_chunks"):
        replace(s, n_chunks=-1)


def test_record_index_counts_what_is_held_and_upserts(tmp_path):
    enc = HashEncoder()
    texts = ["c1", "c2", "c3", "c4"]
    with Store(tmp_path) as store:
        store.embed(enc, texts[:3])
        recorded = store.record_index(_stamp(enc, n=4), texts=texts)  # declared 4, holds 3
        assert recorded.n_chunks == 3
        assert store.indexes() == [recorded]
        store.embed(enc, texts)
        again = store.record_index(_stamp(enc, n=4), texts=texts)
        assert again.n_chunks == 4 and store.indexes() == [again]  # same key: replaced, not added
        store.record_index(_stamp(enc, strategy="A", n=4))  # no texts: the declared count is kept
        assert sorted(s.chunking["strategy"] for s in store.indexes()) == ["A", "E"]


def test_status_names_every_reason(tmp_path):
    enc = HashEncoder()
    with Store(tmp_path) as store:
        base = store.record_index(_stamp(enc))
        old_weights = store.record_index(_stamp(HashEncoder(weights="fake-weights-0"), strategy="A"))
        old_precision = store.record_index(_stamp(HashEncoder(precision="bf16"), strategy="B"))
        old_pipeline = store.record_index(_stamp(enc, strategy="C", pipeline="0"))
        old_extractor = store.record_index(_stamp(enc, strategy="D", extractors=("markdown/0",)))
        old_corpus = store.record_index(_stamp(enc, strategy="F", corpus="0" * 64))
        other_root = store.record_index(_stamp(enc, root="/elsewhere"))
        partial = store.record_index(_stamp(enc, strategy="G", n=2))

        current = [_stamp(enc, strategy=k) for k in "ABCDEFG"]
        by_key = {st.stamp.key: st for st in store.status(current)}
        assert len(by_key) == 8

    assert not by_key[base.key].stale and by_key[base.key].unchecked == ()
    assert by_key[old_weights.key].reasons == ("model weights changed",)
    assert by_key[old_precision.key].reasons == ("precision bf16 -> fp32",)
    assert by_key[old_pipeline.key].reasons == (f"pipeline version 0 -> {PIPELINE_VERSION}",)
    assert by_key[old_extractor.key].reasons == ("extractor markdown 0 -> 1",)
    assert by_key[old_corpus.key].reasons == ("corpus changed",)
    assert by_key[partial.key].reasons == ("holds 2 chunks, the corpus now gives 3",)
    assert not by_key[other_root.key].stale and by_key[other_root.key].unchecked == ("corpus",)

    table = format_status_table(list(by_key.values()))
    assert "model weights changed" in table and "STALE" in table and "not checked: corpus" in table
    assert table.splitlines()[-1] == "8 indexes, 6 stale"
    assert format_status_table([]) == "no indexes in the store"


def test_status_against_an_explicit_current_state(tmp_path):
    enc = HashEncoder()
    with Store(tmp_path) as store:
        s = store.record_index(_stamp(enc, extractors=("markdown/1", "pdf/3")))
        state = CurrentState(encoders=(enc.stamp,), corpora={"/corpus": "c" * 64},
                             extractor_versions=("markdown/1", "docx/1"))
        (st,) = store.status(state)
        assert st.stamp == s and st.reasons == ("extractor pdf no longer current",)
        (st,) = store.status(CurrentState(encoders=HashEncoder(model="other/model").stamp))
        assert st.reasons == ("model fake/hash-encoder -> other/model",)
        assert set(st.unchecked) == {"corpus", "extractors"}


def test_status_without_a_current_state_judges_only_the_pipeline(tmp_path):
    enc = HashEncoder()
    with Store(tmp_path) as store:
        store.record_index(_stamp(enc))
        store.record_index(_stamp(enc, strategy="A", pipeline="0"))
        by_strategy = {st.stamp.chunking["strategy"]: st for st in store.status(None)}
    assert not by_strategy["E"].stale
    assert set(by_strategy["E"].unchecked) == {"model", "corpus", "extractors"}
    assert by_strategy["A"].reasons == (f"pipeline version 0 -> {PIPELINE_VERSION}",)


def test_current_stamps_and_record_evaluation_on_the_bundled_corpus(tmp_path, corpus):
    enc = HashEncoder()
    current = current_stamps(corpus, enc)
    assert [s.chunking["name"] for s in current] == list("ABCDEF")
    assert {(s.corpus_root, s.corpus_sha256, s.extractor_versions) for s in current} == {
        (os.path.abspath(corpus.root), corpus.sha256, ("markdown/1",))}
    indexes = {}
    for strategy in parse_strategies(None):
        chunks = chunk_corpus(corpus, strategy)
        indexes[strategy.name] = SimpleNamespace(strategy=strategy, chunks=chunks)
    evaluation = SimpleNamespace(corpus=corpus, indexes=indexes,
                                 encoder_stamp={**enc.stamp.as_dict(), "pipeline_version": PIPELINE_VERSION})
    with Store(tmp_path) as store:
        store.embed(enc, [c.embed_text for c in indexes["E"].chunks])  # only E's vectors are held
        recorded = {s.chunking["name"]: s for s in record_evaluation(store, evaluation)}
        assert recorded["E"].n_chunks == len(indexes["E"].chunks)
        assert recorded["A"].n_chunks == 0  # declared by the evaluation, but not held
        by_name = {st.stamp.chunking["name"]: st for st in store.status(current)}
        assert not by_name["E"].stale and by_name["E"].unchecked == ()
        assert by_name["A"].reasons == (f"holds 0 chunks, the corpus now gives {len(indexes['A'].chunks)}",)
        other = store.status(current_stamps(corpus, HashEncoder(precision="bf16")))
        assert all(st.stale and "precision fp32 -> bf16" in st.reasons for st in other)


def test_clear_everything(tmp_path):
    enc = HashEncoder(dim=128)
    with Store(tmp_path) as store:
        store.embed(enc, texts_range(0, 2000))
        store.scores("s", "q", ["a"], _fake_scores("q"))
        store.record_index(_stamp(enc))
        result = store.clear()
        assert (result.removed_indexes, result.removed_vectors, result.removed_scores) == (1, 2000, 1)
        assert result.freed_bytes > 2000 * 128 * 4 * 0.8
        assert "freed" in str(result)
        assert store.indexes() == [] and store.verify().vectors == 0
        assert store.embed(enc, ["a"]).computed == 1


def test_clear_stale_keeps_current_and_frees_the_rest(tmp_path):
    new, old = HashEncoder(dim=64), HashEncoder(dim=64, weights="fake-weights-0")
    shared, only_old_corpus = texts_range(0, 100), texts_range(100, 150)
    with Store(tmp_path) as store:
        # an index of the old model, an index of the old corpus with the new model, the current index
        store.embed(old, shared)
        store.record_index(_stamp(old, n=100), texts=shared)
        store.embed(new, shared + only_old_corpus)
        store.record_index(_stamp(new, corpus="0" * 64, n=150), texts=shared + only_old_corpus)
        current = store.record_index(_stamp(new, n=100), texts=shared)
        store.embed(new, ["a query"])  # query vectors of the current model are not in any index
        store.scores("s", "q", ["a"], _fake_scores("q"))

        with pytest.raises(ValueError, match="current"):
            store.clear(stale_only=True)
        before = store.size_bytes()
        result = store.clear(stale_only=True, current=[_stamp(new, n=100)])
        # the old model's 100 vectors, and the 50 texts only the old corpus had
        assert (result.removed_indexes, result.removed_vectors, result.removed_scores) == (2, 150, 0)
        # what the files shrank by, as the store measures them; 150 float32 vectors of HashEncoder's 16 dims
        # are 9,600 bytes, so the database shrinks once its freed pages are given back
        assert result.freed_bytes == before - store.size_bytes() > 0
        assert store.indexes() == [current]
        r = store.embed(new, shared + ["a query"])
        assert r.computed == 0
        assert store.embed(new, only_old_corpus).computed == 50
        assert store.embed(old, shared).computed == 100
        assert store.scores("s", "q", ["a"], _fake_scores("q")).reused == 1


def test_corrupt_catalogue_row_is_skipped_and_cleared(tmp_path):
    enc = HashEncoder()
    with Store(tmp_path) as store:
        store.record_index(_stamp(enc, strategy="A"))
        good = store.record_index(_stamp(enc, strategy="B"))
        raw_update(store, "UPDATE indexes SET stamp=replace(stamp, '\"A\"', '\"Z\"') WHERE key != ?", (good.key,))
        assert store.indexes() == [good]
        assert store.verify(repair=False).bad == 1
        result = store.clear(stale_only=True, current=[good])
        assert result.removed_indexes == 1
        assert db_rows(store, "SELECT count(*) FROM indexes") == [(1,)]


def test_score_cache_view_get_put(tmp_path):
    """The get/put view used by rerankers: NaN where nothing is stored, then what was put."""
    with Store(tmp_path / "cache") as store:
        cache = store.score_cache()
        got = cache.get("ms:fake:1", "q", ["a", "b"])
        assert np.isnan(got).all()
        cache.put("ms:fake:1", "q", ["b"], np.array([0.5]))
        got = cache.get("ms:fake:1", "q", ["a", "b", "b"])
        assert np.isnan(got[0]) and got[1] == 0.5 and got[2] == 0.5
        assert np.isnan(cache.get("ms:fake:1", "other query", ["b"])).all()
