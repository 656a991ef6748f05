"""Load nothing that is not needed: light imports, a lazy encoder, device selection.

The subprocess tests check ``sys.modules`` of a fresh interpreter: importing
the library loads none of torch, transformers, streamlit or pandas, and a warm
``eval`` (every vector and score already in the store) never imports torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragdiag.index.encoder.hardware import DEVICE_ENV, physical_cores, select_device
from ragdiag.index.encoder.model import Encoder

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "sentence_transformers", "streamlit", "pandas")


def _loaded_after(code: str, env: dict | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; return which HEAVY modules it left in sys.modules (and its stdout)."""
    probe = code + "\nimport sys, json\nprint('@@' + json.dumps({m: m in sys.modules for m in %r}))\n" % (HEAVY,)
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("@@"))
    return {"modules": json.loads(line[2:]), "stdout": proc.stdout, "stderr": proc.stderr}


def test_import_ragdiag_loads_no_heavy_library():
    got = _loaded_after("import ragdiag")
    assert not any(got["modules"].values()), got["modules"]


def test_library_modules_load_no_torch_at_import():
    got = _loaded_after("import ragdiag.cli, ragdiag.index.encoder, ragdiag.evaluation.evaluate, ragdiag.index.store, ragdiag.index.snapshot, "
                        "ragdiag.evaluation.progressive, ragdiag.index.audit, ragdiag.present.per_query")
    assert not any(got["modules"][m] for m in ("torch", "transformers", "streamlit", "pandas")), got["modules"]


# ----- device selection ----------------------------------------------------------


def test_select_device_prefers_cuda_when_torch_sees_it(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    assert select_device(lambda: True) == "cuda"
    assert select_device(lambda: False) == "cpu"


def test_select_device_falls_back_to_cpu_on_a_broken_cuda(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)

    def broken() -> bool:
        raise RuntimeError("CUDA driver version is insufficient")

    assert select_device(broken) == "cpu"


def test_select_device_env_overrides(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert select_device(lambda: True) == "cpu"
    monkeypatch.setenv(DEVICE_ENV, "CUDA:1")
    assert select_device(lambda: False) == "cuda:1"
    monkeypatch.setenv(DEVICE_ENV, "tpu")
    with pytest.raises(ValueError, match="cpu, cuda or cuda:N"):
        select_device(lambda: False)


def test_physical_cores_counts_cores_not_threads():
    n = physical_cores()
    assert 1 <= n <= (os.cpu_count() or 1)
    if hasattr(os, "sched_getaffinity"):
        assert n <= len(os.sched_getaffinity(0))


@pytest.mark.parametrize("preset, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_torch_loads_with_sleeping_openmp_workers_unless_the_operator_chose(preset, expected):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if preset:
        env["OMP_WAIT_POLICY"] = preset
    code = ("import os\nfrom ragdiag.index.encoder.hardware import import_torch\nimport_torch()\n"
            "from ragdiag.analyses.cost import machine\n"
            "print('policy', os.environ['OMP_WAIT_POLICY'], machine()['omp_wait_policy'])")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"policy {expected} {expected}" in proc.stdout


def test_machine_reports_no_torch_settings_when_torch_never_loaded():
    got = _loaded_after("from ragdiag.analyses.cost import machine\nm = machine()\n"
                        "print('keys', 'torch_threads' in m, 'omp_wait_policy' in m)")
    assert not got["modules"]["torch"] and "keys False False" in got["stdout"]


def test_encoder_rejects_an_unknown_device():
    with pytest.raises(ValueError, match="device must be"):
        Encoder(device="tpu")


# ----- the lazy encoder (real model files) -------------------------------------------


@pytest.mark.model
def test_encoder_stamp_and_token_counts_need_no_torch():
    code = ("from ragdiag.index.encoder import Encoder\n"
            "e = Encoder()\n"
            "s = e.stamp\n"
            "print(s.dim, s.max_seq_length, s.pooling, e.count_tokens(['Support vector machines.'])[0], e.loaded)")
    got = _loaded_after(code)
    assert not got["modules"]["torch"] and not got["modules"]["transformers"], got["modules"]
    assert "384 256 mean 6 False" in got["stdout"]


@pytest.mark.model
def test_lazy_encoder_matches_the_loaded_model(corpus):
    """The stamp read from files equals the loaded model's; tokenizers' counts equal transformers'."""
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus

    enc = Encoder()
    before = enc.stamp
    assert not enc.loaded
    texts = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES["E"])][:400]
    prefix = [len(t) // 3 for t in texts]
    fast = enc.token_layout(texts, prefix)
    assert not enc.loaded  # counting loaded no model
    enc.encode(texts[:2])
    assert enc.loaded and enc.device == "cpu" or enc.device.startswith("cuda")
    assert enc.dim == enc.model.config.hidden_size and enc.stamp == before

    class TransformersOnly(Encoder):
        def _counting_tokenizer(self):
            return None  # force the transformers tokenizer path (a model folder without tokenizer.json)

    slow = TransformersOnly().token_layout(texts, prefix)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)


@pytest.mark.model
def test_warm_eval_never_imports_torch(tiny_folder, tmp_path):
    """A second eval whose every vector and MaxSim score is stored imports neither torch nor transformers."""
    cache = tmp_path / "cache"
    argv = ["eval", "--corpus", str(tiny_folder), "--cache", str(cache), "--strategies", "C,E",
            "--retrievers", "dense,bm25,hybrid,rerank-maxsim"]
    code = f"from ragdiag.cli.parser import main\nrc = main({argv!r})\nassert rc == 0, rc"
    cold = _loaded_after(code)
    assert cold["modules"]["torch"]  # the first run had to embed
    warm = _loaded_after(code)
    assert not warm["modules"]["torch"] and not warm["modules"]["transformers"], warm["modules"]
    assert "embedded 0 of" in warm["stderr"]

    def tables(out: str) -> str:
        return out.split("@@")[0]

    assert tables(warm["stdout"]) == tables(cold["stdout"])  # the same tables, from the store


@pytest.mark.model
def test_the_first_eval_of_the_bundled_corpus_from_an_empty_store_loads_no_model(tmp_path):
    """A new user's first table: the store seeded from the shipped index, which holds every vector and MaxSim score
    the six strategies' dense, BM25, hybrid and reranked runs need, made with the libraries installed here."""
    argv = ["eval", "--cache", str(tmp_path / "cache"), "--retrievers", "dense,bm25,hybrid,rerank-maxsim"]
    got = _loaded_after(f"from ragdiag.cli.parser import main\nrc = main({argv!r})\nassert rc == 0, rc",
                        env={"RAGDIAG_NO_SNAPSHOT": ""})
    assert "seeded the store from the shipped index" in got["stderr"], got["stderr"][-3000:]
    assert "no chunk re-embedded" in got["stderr"]
    assert not got["modules"]["torch"] and not got["modules"]["transformers"], got["modules"]


def test_a_model_missing_from_the_hf_cache_is_unavailable_without_importing_the_hub(tmp_path):
    code = (f"import os\nos.environ['HF_HUB_CACHE'] = {str(tmp_path)!r}\n"
            "from ragdiag.index.encoder import resolve_model_dir, ModelUnavailable\n"
            "try:\n    resolve_model_dir('cross-encoder/ms-marco-MiniLM-L-6-v2', kind='cross-encoder')\n"
            "except ModelUnavailable as exc:\n    print('UNAVAILABLE', exc)\n"
            "import sys\nprint('HUB', 'huggingface_hub' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "UNAVAILABLE cross-encoder 'cross-encoder/ms-marco-MiniLM-L-6-v2' is not available offline" in proc.stdout
    assert "HUB False" in proc.stdout, proc.stdout + proc.stderr


# ----- CPU forward passes at once ---------------------------------------------------


@pytest.mark.parametrize("kwargs", [{"passes": 0}, {"passes": 1.5}, {"threads": 0}, {"threads": "2"}])
def test_encoder_rejects_bad_thread_counts(kwargs):
    with pytest.raises(ValueError, match="whole number >= 1"):
        Encoder(**kwargs)


@pytest.mark.model
def test_passes_at_once_give_the_one_pass_vectors_in_order(corpus):
    """Two single-thread passes at once: the same vectors, wordpiece vectors, order and progress as one pass."""
    import threading

    from ragdiag.index.chunking import STRATEGIES, chunk_corpus
    from ragdiag.index.store.stamps import run_stamp

    texts = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES["C"])][:70]
    one, two = Encoder(passes=1, threads=2), Encoder(passes=2, threads=2)
    assert one.layout is None and two.layout is None  # nothing loaded yet
    sinks = {}, {}
    progress = [], []
    ref = one.encode(texts, token_sink=lambda i, t: sinks[0].__setitem__(i, t),
                     progress=lambda d, n: progress[0].append((d, n)))
    got = two.encode(texts, token_sink=lambda i, t: sinks[1].__setitem__(i, t),
                     progress=lambda d, n: progress[1].append((d, n)))
    if two.device != "cpu":
        pytest.skip("one pass on a GPU")
    assert (one.layout, two.layout) == ("cpu: 1 pass x 2 threads", "cpu: 2 passes x 1 thread")
    assert np.allclose(got, ref, atol=1e-6) and np.min(np.sum(got * ref, axis=1)) > 0.99999
    assert sorted(sinks[1]) == list(range(len(texts)))
    for i in range(len(texts)):
        np.testing.assert_allclose(sinks[1][i], sinks[0][i], atol=1e-5)
    assert progress[1] == progress[0] and progress[1][-1] == (len(texts), len(texts))
    assert run_stamp(two)["device_layout"] == "cpu: 2 passes x 1 thread"
    # the thread that loaded the model keeps every core for its own one-batch work; each pass has one thread
    # (torch would otherwise give a pass thread the global count on first use: 2 passes x 2 threads on 2 cores)
    assert two._torch.get_num_threads() == 2
    assert [f.result() for f in [two._pool.submit(two._torch.get_num_threads) for _ in range(4)]] == [1] * 4

    # two callers sharing one encoder (the dashboard's job and a page) each get their own texts' vectors
    out = {}
    callers = [threading.Thread(target=lambda k=k: out.__setitem__(k, two.encode(texts[k::2]))) for k in (0, 1)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    np.testing.assert_allclose(out[0], ref[0::2], atol=1e-6)
    np.testing.assert_allclose(out[1], ref[1::2], atol=1e-6)
