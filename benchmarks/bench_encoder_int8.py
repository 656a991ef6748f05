"""The encoder in ONNX Runtime, fp32 and int8, beside the torch path and the machine's measured peaks.

Run: ``python benchmarks/bench_encoder_int8.py [--chunks 300] [--repeats 3]`` (speed) and
``python benchmarks/bench_encoder_int8.py --verdicts`` (the paired verdicts; evaluates, slow).

Speed, in one process, rounds interleaved (torch, ORT fp32, ORT int8, the peaks, again), medians:

* chunks/s of ragdiag's torch ``Encoder`` (fp32, the default), ``OnnxEncoder`` fp32 and int8
  (``dense@minilm-onnx``, ``dense@minilm-onnx-int8``) and, when OpenVINO is installed, ``OpenVinoEncoder``
  fp32 and int8 (``dense@minilm-openvino``, ``dense@minilm-openvino-int8``) on the bundled corpus's
  strategy E chunks;
* the machine's fp32 matrix-product peak (numpy/OpenBLAS, and ONNX Runtime's ``MatMul``) and int8
  peak (ONNX Runtime's ``MatMulInteger``, uint8 x int8 -> int32: the kernel the quantized encoder
  runs), 2048^3, every thread; each encoder's GFLOP/s (MiniLM's FLOPs on the real tokens, as
  ``bench_embedding.py --peak`` counts them) as a share of the peak of its precision;
* drift against the torch vectors: mean and minimum cosine over the chunks.

``--verdicts``: for the bundled corpus and ``data/de-haushalt``, ``eval --out`` of strategy E's
dense search with the torch default and with each candidate of ``--models`` (default ``minilm-onnx`` and
``minilm-onnx-int8``), then ``gate BASE CANDIDATE --config E/dense`` for each: the paired non-inferiority tests (5-point
margin, one-sided 0.05) on recall at the primary k and on answered at the declared cut, and
bluffs out of domain. The export is cached in the store (``--cache``, default a temporary folder,
so the first run's export time is printed once).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
warnings.filterwarnings("ignore")

from _common import cpu_name  # noqa: E402
from bench_embedding import gemm, minilm_flops  # noqa: E402
from ragdiag.documents.corpus import load_corpus  # noqa: E402
from ragdiag.index.chunking import STRATEGIES, chunk_corpus  # noqa: E402
from ragdiag.index.encoder.hardware import physical_cores  # noqa: E402
from ragdiag.index.encoder.model import Encoder  # noqa: E402
from ragdiag.index.encoder.onnx import OnnxEncoder  # noqa: E402

SIZE = 2048


def ort_matmul(kind: str, threads: int):
    """A SIZE^3 product in ONNX Runtime: ``fp32`` (MatMul) or ``int8`` (MatMulInteger, u8 x s8): (call, ops)."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    rng = np.random.default_rng(0)
    if kind == "fp32":
        a = rng.standard_normal((SIZE, SIZE), dtype=np.float32)
        b = rng.standard_normal((SIZE, SIZE), dtype=np.float32)
        node = helper.make_node("MatMul", ["A", "B"], ["C"])
        types = (TensorProto.FLOAT, TensorProto.FLOAT, TensorProto.FLOAT)
    else:
        a = rng.integers(0, 255, (SIZE, SIZE), dtype=np.uint8)
        b = rng.integers(-127, 127, (SIZE, SIZE), dtype=np.int8)
        node = helper.make_node("MatMulInteger", ["A", "B"], ["C"])
        types = (TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32)
    graph = helper.make_graph([node], kind, [helper.make_tensor_value_info("A", types[0], [SIZE, SIZE])],
                              [helper.make_tensor_value_info("C", types[2], [SIZE, SIZE])],
                              initializer=[onnx.numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {"A": a}
    session.run(None, feed)
    return (lambda: session.run(None, feed)), 2.0 * SIZE**3


def speed(args) -> None:
    import onnxruntime
    import torch

    cores = physical_cores()
    corpus = load_corpus(ROOT / "data" / "sklearn-user-guide")
    chunks = chunk_corpus(corpus, STRATEGIES["E"])
    texts = [c.embed_text for c in chunks][: args.chunks]
    print(f"# The encoder in torch and ONNX Runtime ({cpu_name()}, {os.cpu_count()} CPUs, {cores} physical cores; "
          f"torch {torch.__version__}, onnxruntime {onnxruntime.__version__}; {len(texts)} chunks of strategy E; "
          f"{args.repeats} rounds, interleaved; `uptime` load {os.getloadavg()[0]:.2f} "
          f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} at the start)\n")
    cache = args.cache or tempfile.mkdtemp(prefix="ragdiag-onnx-")
    torch_enc = Encoder()
    ort32, ort8 = OnnxEncoder(precision="fp32", cache=cache), OnnxEncoder(precision="int8", cache=cache)
    try:
        from ragdiag.index.encoder.openvino import OpenVinoEncoder, _require_openvino

        ov = _require_openvino()
        ov32, ov8 = OpenVinoEncoder(precision="fp32", cache=cache), OpenVinoEncoder(precision="int8", cache=cache)
        print(f"OpenVINO {ov.get_version()}")
    except Exception as exc:  # noqa: BLE001 - optional: measured when installed
        ov32 = ov8 = None
        print(f"OpenVINO not measured: {exc}")
    for name, enc in (("ORT fp32", ort32), ("ORT int8", ort8)):
        t = time.perf_counter()
        enc.export()
        print(f"{name}: export ready in {time.perf_counter() - t:.1f} s ({enc.files[enc.precision].stat().st_size / 1e6:.1f} MB"
              f", cached in the store folder)")
    reference = torch_enc.encode(texts)  # warm and the drift's reference
    for enc in (ort32, ort8, ov32, ov8):
        if enc is not None:
            enc.encode(texts[:8])  # loaded (and, for OpenVINO, compiled) before the clock
    tok = torch_enc._counting_tokenizer()
    lengths = np.minimum([len(e.ids) + 2 for e in tok.encode_batch(texts, add_special_tokens=False)],
                         torch_enc.max_seq_length)
    from transformers import AutoConfig

    flops = minilm_flops(lengths, AutoConfig.from_pretrained(torch_enc.folder, local_files_only=True))
    peaks = {"numpy fp32 GEMM": gemm(None, SIZE), "ORT fp32 MatMul": ort_matmul("fp32", cores),
             "ORT int8 MatMulInteger": ort_matmul("int8", cores)}
    encoders = {f"torch `Encoder` fp32 ({torch_enc.layout})": torch_enc, "ORT fp32 (`minilm-onnx`)": ort32,
                "ORT int8 (`minilm-onnx-int8`)": ort8}
    if ov32 is not None:
        encoders.update({"OpenVINO fp32 (`minilm-openvino`)": ov32, "OpenVINO int8 (`minilm-openvino-int8`)": ov8})
    times: dict[str, list[float]] = {k: [] for k in [*encoders, *peaks]}
    vectors = {}
    for _ in range(args.repeats):
        for name, enc in encoders.items():
            t = time.perf_counter()
            vectors[name] = enc.encode(texts)
            times[name].append(time.perf_counter() - t)
        for name, (call, _) in peaks.items():
            t = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    rate = {k: peaks[k][1] / med[k] / 1e9 for k in peaks}
    fp32_peak = max(rate["numpy fp32 GEMM"], rate["ORT fp32 MatMul"])
    base = next(iter(encoders))
    print("\n| path | chunks/s | x torch | GFLOP(S)/s | share of its precision's peak | cosine to torch (mean / min) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in encoders:
        cos = (vectors[name] * reference).sum(1)
        peak = rate["ORT int8 MatMulInteger"] if "int8" in name else fp32_peak
        print(f"| {name} | {len(texts) / med[name]:.1f} | {med[base] / med[name]:.2f} | "
              f"{flops / med[name] / 1e9:.1f} | {100 * flops / med[name] / 1e9 / peak:.0f}% | "
              f"{cos.mean():.4f} / {cos.min():.4f} |")
    for name in peaks:
        print(f"| peak: {name} {SIZE}^3, {cores} threads | | | {rate[name]:.1f} | | |")
    print(f"\nint8 peak / fp32 peak: {rate['ORT int8 MatMulInteger'] / fp32_peak:.2f}; MiniLM's FLOPs counted on the "
          f"real tokens ({int(lengths.sum())} tokens, {flops / 1e9:.1f} GFLOP); `uptime` load at the end "
          f"{os.getloadavg()[0]:.2f}")


def run_cli(*argv: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragdiag", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True)


def verdicts(args) -> None:
    cache = args.cache or tempfile.mkdtemp(prefix="ragdiag-onnx-")
    env = {**os.environ, "RAGDIAG_CACHE": cache}
    print(f"# Paired verdicts: the ONNX encoders against the torch default (E/dense; `uptime` load "
          f"{os.getloadavg()[0]:.2f} at the start; store {'given' if args.cache else 'fresh'})\n")
    corpora = {"bundled (sklearn-user-guide)": [], "data/de-haushalt": ["--corpus", str(ROOT / "data" / "de-haushalt")]}
    out = Path(tempfile.mkdtemp(prefix="ragdiag-verdicts-"))
    print("| corpus | candidate | recall | answered at the cut | bluffs | gate verdict |")
    print("|---|---|---|---|---|---|")
    for label, corpus in corpora.items():
        runs = {}
        for model in ("minilm", *args.models.split(",")):
            folder = out / f"{label.split()[0].replace('/', '-')}-{model}"
            t = time.perf_counter()
            done = run_cli("eval", *corpus, "--model", model, "--strategies", "E", "--retrievers", "dense",
                           "--out", str(folder), env=env)
            if done.returncode:
                print(f"| {label} | {model} | eval failed: {done.stderr.strip().splitlines()[-1:]} | | | |")
                break
            runs[model] = folder
            print(f"<!-- {label} {model}: eval {time.perf_counter() - t:.1f} s -->", file=sys.stderr)
        for model in args.models.split(","):
            if model not in runs:
                continue
            done = run_cli("gate", str(runs["minilm"]), str(runs[model]), "--config", "E/dense", *corpus, "--json",
                           env=env)
            try:
                doc = json.loads(done.stdout)
            except json.JSONDecodeError:
                print(f"| {label} | {model} | gate failed (exit {done.returncode}): {done.stderr.strip()[-200:]} | | | |")
                continue
            cells = {c["name"]: c for c in doc.get("checks", [])}

            def cell(name: str) -> str:
                c = cells.get(name)
                if not c:
                    return "-"
                return f"{c['baseline']:.3f} -> {c['candidate']:.3f}: {c['verdict']}"
            print(f"| {label} | {model} | {cell('recall')} | {cell('answered')} | {cell('bluffs')} | "
                  f"{doc.get('verdict')} (exit {done.returncode}) |")
    print(f"\n`uptime` load at the end {os.getloadavg()[0]:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chunks", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cache", default=None, help="store folder holding the export (default: a fresh temporary one)")
    p.add_argument("--verdicts", action="store_true", help="the paired verdicts on two corpora instead of speed")
    p.add_argument("--models", default="minilm-onnx,minilm-onnx-int8",
                   help="--verdicts: the candidates judged against minilm (e.g. minilm-onnx-int8,minilm-openvino)")
    args = p.parse_args()
    verdicts(args) if args.verdicts else speed(args)


if __name__ == "__main__":
    main()
