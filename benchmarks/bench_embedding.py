"""Embedding and reranking speed: ragdiag's encoder path vs sentence-transformers defaults.

Run: ``python benchmarks/bench_embedding.py [--repeats 3] [--chunks 300]``

Measured side by side in one process, medians of ``--repeats`` runs:

* chunk embedding throughput on the bundled corpus (strategy E's embedded texts,
  the first ``--chunks``): ``SentenceTransformer.encode`` with its defaults
  (batch 32, sorted by characters) vs ``ragdiag.index.encoder.Encoder`` (sorted by
  wordpieces, small batches), per precision this CPU supports;
* drift of each precision against fp32 over the ground-truth queries: mean
  cosine of chunk vectors and top-10 overlap of dense retrieval;
* query embedding latency (one query at a time);
* reranking one query's 25 pairs: ``CrossEncoder.predict`` defaults vs
  ragdiag's ``CrossEncoderScorer`` on the same architecture (a randomly
  initialised MiniLM-L6 cross-encoder built locally: speed only, the scores
  mean nothing), and MaxSim on MiniLM token embeddings.

``--peak`` measures instead, in one run, the encoder against the machine:
numpy's (and torch's) fp32 GEMM peak on 2048 x 2048 x 2048 (before and after
the encoders, on every core and on one), the encoder's chunks/s and GFLOP/s
(MiniLM's FLOPs counted per token: per layer the Q, K, V and output
projections, 2 x 4 x 384 x 384, and the feed-forward, 2 x 2 x 384 x 1536; plus
the attention scores and their weighting of V, 2 x 2 x L x 384 per token of a
sequence of L), ``SentenceTransformer.encode``'s chunks/s, and where the time
goes: tokenisation (timed), padding (the tokens the batches pad to, over the
real ones) and, from the torch profiler on one thread, the matrix products
(``aten::addmm``/``mm``/``linear``), attention and everything else.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
warnings.filterwarnings("ignore")

from _common import cpu_name, timed  # noqa: E402
from ragdiag.index.chunking import STRATEGIES, chunk_corpus  # noqa: E402
from ragdiag.documents.corpus import load_corpus  # noqa: E402
from ragdiag.index.encoder.model import Encoder
from ragdiag.index.encoder.hardware import bf16_supported
from ragdiag.index.encoder.resolve import offline  # noqa: E402
from ragdiag.documents.truth import default_truth_path, load_truth  # noqa: E402


def top10_overlap(q: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ta = np.argsort(-(q @ a.T), axis=1)[:, :10]
    tb = np.argsort(-(q @ b.T), axis=1)[:, :10]
    return float(np.mean([len(set(x) & set(y)) / 10 for x, y in zip(ta, tb)]))


def clocked(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process: user + sys of every thread) of one call."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def gemm(threads: int | None, size: int = 2048):
    """A size^3 fp32 product in numpy (OpenBLAS) on ``threads`` threads (None: all): (call, FLOPs)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)

    def run():
        with threadpool_limits(threads, user_api="blas"):
            a @ b
    run()  # warm
    return run, 2.0 * size**3


def minilm_flops(lengths, config) -> float:
    """FLOPs of MiniLM (any BERT) on sequences of ``lengths`` tokens: projections, feed-forward, attention."""
    h, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    per_token = layers * (2 * 4 * h * h + 2 * 2 * h * f)
    lengths = np.asarray(lengths, dtype=np.float64)
    return float(per_token * lengths.sum() + layers * 2 * 2 * h * (lengths**2).sum())


def padded_lengths(lengths: np.ndarray, order: np.ndarray, batch: int) -> np.ndarray:
    """Each sequence's length once its batch (``order`` cut every ``batch``) is padded to its longest."""
    out = np.zeros(len(lengths))
    for b in range(0, len(order), batch):
        idx = order[b : b + batch]
        out[idx] = lengths[idx].max()
    return out


def peak(texts: list[str], repeats: int) -> None:
    """The encoder against the machine's GEMM peak, and the breakdown (see the module doc)."""
    import os

    import torch
    from sentence_transformers import SentenceTransformer
    from torch.profiler import ProfilerActivity, profile

    from ragdiag.index.encoder.hardware import physical_cores

    cores = physical_cores()
    n = len(texts)
    load = os.getloadavg()
    print(f"# The encoder against this machine's GEMM peak ({cpu_name()}, {os.cpu_count()} CPUs, {cores} physical "
          f"cores; torch {torch.__version__}, numpy {np.__version__}; {n} chunks of strategy E; {repeats} rounds; "
          f"load {load[0]:.1f} at the start)\n")
    enc = Encoder()
    enc._load()
    config = enc.model.config
    tok = enc.tokenizer
    t_tok = clocked(lambda: tok(texts, truncation=True, max_length=enc.max_seq_length))[0]
    lengths = np.array([len(i) for i in tok(texts, truncation=True, max_length=enc.max_seq_length)["input_ids"]])
    ours_pad = padded_lengths(lengths, enc._length_order(texts), enc.batch_size)
    st = SentenceTransformer(str(enc.folder), device="cpu", local_files_only=True)
    st_pad = padded_lengths(lengths, np.argsort([-len(x) for x in texts], kind="stable"), 32)
    useful = minilm_flops(lengths, config)
    one = Encoder(threads=1, passes=1)
    one.encode(texts[:4])
    gemm_all, gemm_one = gemm(None), gemm(1)

    def threads(k: int, call):
        """``call`` with torch's global thread count at ``k`` (the one-pass encoder and ST run on it)."""
        return lambda: (torch.set_num_threads(k), call())
    paths = {  # name: (call, FLOPs, padded lengths or None, the GEMM measured beside it)
        "numpy GEMM 2048^3, every thread": (gemm_all[0], gemm_all[1], None, None),
        f"ragdiag `Encoder` ({enc.layout})": (lambda: enc.encode(texts), useful, ours_pad,
                                              "numpy GEMM 2048^3, every thread"),
        "`SentenceTransformer.encode` (batch 32, sorted by characters; "
        f"{cores} torch threads)": (threads(cores, lambda: st.encode(texts, normalize_embeddings=True)), useful,
                                    st_pad, "numpy GEMM 2048^3, every thread"),
        "numpy GEMM 2048^3, one thread": (gemm_one[0], gemm_one[1], None, None),
        "ragdiag `Encoder` (1 pass x 1 thread)": (threads(1, lambda: one.encode(texts)), useful, ours_pad,
                                                  "numpy GEMM 2048^3, one thread"),
    }
    # Rounds: every path once per round, each encoder right after its GEMM, so a change of the machine's load
    # between rounds moves both; the peak is the best round, the encoder's share the median of its rounds.
    got = {name: [] for name in paths}
    for _ in range(repeats):
        for name, (call, _, _, _) in paths.items():
            got[name].append(clocked(call))
    print("| path | chunks/s (median) | padded tokens / real | useful GFLOP per wall s | per CPU s | "
          "share of the GEMM beside it: wall | CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (_, flops, pad, beside) in paths.items():
        wall = np.array([w for w, _ in got[name]])
        cpu = np.array([c for _, c in got[name]])
        if beside is None:
            print(f"| {name} | | | {flops / wall.min() / 1e9:.1f} (best) | {flops / cpu.min() / 1e9:.1f} (best) | | |")
            continue
        gw = np.array([w for w, _ in got[beside]])
        gc = np.array([c for _, c in got[beside]])
        gflop = paths[beside][1]
        share_w = np.median((flops / wall) / (gflop / gw))
        share_c = np.median((flops / cpu) / (gflop / gc))
        print(f"| {name} | {n / np.median(wall):.1f} | {pad.sum() / lengths.sum():.3f} | "
              f"{flops / np.median(wall) / 1e9:.1f} | {flops / np.median(cpu) / 1e9:.1f} | "
              f"{100 * share_w:.0f}% | {100 * share_c:.0f}% |")
    peak_one = gemm_one[1] / min(w for w, _ in got["numpy GEMM 2048^3, one thread"]) / 1e9
    print(f"\nMiniLM-L6 ({config.num_hidden_layers} layers, {config.hidden_size} hidden, {config.intermediate_size} "
          f"feed-forward): {minilm_flops([1], config) / 1e6:.1f} MFLOP per token plus attention; these {n} chunks "
          f"hold {lengths.sum():,} tokens (mean {lengths.mean():.0f}, max {lengths.max()}), "
          f"{useful / 1e9:.1f} GFLOP of useful work. Tokenising them all: {t_tok:.2f} s.")

    # The model's own products in isolation, one thread: the ceiling of its GEMM time.
    rows = int(enc.batch_size * np.median(ours_pad))
    h, f = config.hidden_size, config.intermediate_size
    torch.set_num_threads(1)
    print(f"\nThe model's matrix products alone, one thread, torch ``linear`` (a batch of {enc.batch_size} x {int(np.median(ours_pad))} "
          f"tokens = {rows} rows):\n")
    print("| product | GFLOP/s | of one thread's numpy 2048^3 peak |\n|---|---:|---:|")
    for name, k, m in (("Q, K, V, output projections", h, h), ("feed-forward in", h, f), ("feed-forward out", f, h),
                       ("2048 x 2048 x 2048 (torch)", 2048, 2048)):
        r = 2048 if k == 2048 else rows
        # As nn.Linear holds it: weight (out x in), the product x @ weight.T plus the bias.
        x, w, bias = torch.randn(r, k), torch.randn(m, k), torch.randn(m)
        linear = torch.nn.functional.linear
        linear(x, w, bias)
        secs = min(timed(lambda: linear(x, w, bias), 1)[0] for _ in range(max(3, repeats)))
        rate = 2.0 * r * k * m / secs / 1e9
        print(f"| {name} ({r} x {k} x {m}) | {rate:.1f} | {100 * rate / peak_one:.0f}% |")
    torch.set_num_threads(cores)

    # Where one thread's time goes: the torch profiler's self time per operator, grouped.
    sub = texts[: min(n, 96)]
    torch.set_num_threads(1)
    one.encode(sub)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        t = time.perf_counter()
        one.encode(sub)
        wall = time.perf_counter() - t
    groups = {"matrix products (addmm, mm, linear)": ("aten::addmm", "aten::mm", "aten::linear", "aten::matmul"),
              "attention (scaled dot product, bmm, softmax)": ("attention", "aten::bmm", "aten::baddbmm", "softmax"),
              "layer norm, GELU, adds, embeddings, pooling": ()}
    spent = dict.fromkeys(groups, 0.0)
    for ev in prof.key_averages():
        name = ev.key
        group = next((g for g, keys in groups.items() if keys and any(k in name for k in keys)),
                     "layer norm, GELU, adds, embeddings, pooling")
        if name.startswith("aten::") or "attention" in name:
            spent[group] += ev.self_cpu_time_total / 1e6
    sub_len = lengths[: len(sub)]
    t_tok_sub = t_tok * len(sub) / n
    gemm_flops = minilm_flops(sub_len, config) - config.num_hidden_layers * 4 * config.hidden_size * float(
        (sub_len.astype(np.float64) ** 2).sum())
    print(f"\nWhere one thread's time goes ({len(sub)} chunks, {wall:.2f} s under the profiler; tokenisation timed "
          f"apart, all {n} chunks in {t_tok:.2f} s):\n")
    print("| part | seconds | share | GFLOP/s |\n|---|---:|---:|---:|")
    total = sum(spent.values()) + t_tok_sub
    print(f"| tokenisation (fast tokenizer, scaled to {len(sub)} chunks) | {t_tok_sub:.2f} | {100 * t_tok_sub / total:.0f}% | |")
    for g, secs in spent.items():
        rate = ""
        if g.startswith("matrix"):
            rate = f"{gemm_flops / secs / 1e9:.1f} ({100 * gemm_flops / secs / 1e9 / peak_one:.0f}% of one thread's peak)"
        print(f"| {g} | {secs:.2f} | {100 * secs / total:.0f}% | {rate} |")
    top = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:8]
    print("\nThe profile's largest operators (self time): " +
          ", ".join(f"{e.key} {e.self_cpu_time_total / 1e6:.2f} s" for e in top))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--chunks", type=int, default=300)
    ap.add_argument("--peak", action="store_true", help="the encoder against this machine's GEMM peak, and the breakdown")
    args = ap.parse_args()
    offline()
    if args.peak:
        corpus = load_corpus()
        peak([c.embed_text for c in chunk_corpus(corpus, STRATEGIES["E"])][: args.chunks], args.repeats)
        return
    import torch
    from sentence_transformers import CrossEncoder, SentenceTransformer

    corpus = load_corpus()
    truth = load_truth(default_truth_path(corpus.root), corpus)
    texts = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES["E"])][: args.chunks]
    queries = [q.text for q in truth.queries]
    n = len(texts)
    print(f"# Embedding and reranking ({cpu_name()}, {torch.get_num_threads()} threads, torch {torch.__version__}; "
          f"{n} chunks of strategy E, median of {args.repeats})\n")

    enc = Encoder()
    st = SentenceTransformer(str(enc.folder), device="cpu", local_files_only=True)
    t_st, v_st = timed(lambda: st.encode(texts, normalize_embeddings=True), args.repeats)
    t_ours, v32 = timed(lambda: enc.encode(texts), args.repeats)
    qv = enc.encode(queries)
    rows = [("SentenceTransformer.encode (defaults)", "fp32", t_st, v_st)]
    rows.append(("ragdiag Encoder (token-sorted, batch 16)", "fp32", t_ours, v32))
    if bf16_supported():
        enc16 = Encoder(precision="bf16")
        t16, v16 = timed(lambda: enc16.encode(texts), args.repeats)
        rows.append(("ragdiag Encoder (token-sorted, batch 16)", "bf16", t16, v16))
    print("| path | precision | chunks/s | ms/chunk | speed-up vs defaults | mean cosine vs fp32 | top-10 overlap vs fp32 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, prec, t, v in rows:
        cos = float(np.mean(np.sum(v * v32, axis=1)))
        print(f"| {name} | {prec} | {n / t:.1f} | {1e3 * t / n:.1f} | {t_st / t:.2f}x | {cos:.6f} | "
              f"{top10_overlap(qv, v32, v):.3f} |")
    if not bf16_supported():
        print("\nThis CPU has no native bfloat16 (AVX512-BF16/AMX): the bf16 setting is unavailable here, fp32 is the default.")

    one = queries[:20]
    t_q, _ = timed(lambda: [enc.encode([q]) for q in one], args.repeats)
    t_qst, _ = timed(lambda: [st.encode([q], normalize_embeddings=True) for q in one], args.repeats)
    print("\n| query embedding | ms/query |\n|---|---:|")
    print(f"| ragdiag Encoder.encode([q]) | {1e3 * t_q / len(one):.1f} |")
    print(f"| SentenceTransformer.encode([q]) | {1e3 * t_qst / len(one):.1f} |")

    # Rerankers: 25 pairs of one query, as in rerank-ce / rerank-maxsim.
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from ragdiag.retrieval.rerank import CrossEncoderScorer, MaxSimScorer

    head = texts[:25]
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        cfg = BertConfig.from_pretrained(enc.folder, num_labels=1)
        BertForSequenceClassification(cfg).save_pretrained(tmp)
        AutoTokenizer.from_pretrained(enc.folder).save_pretrained(tmp)
        ce = CrossEncoder(tmp, device="cpu", local_files_only=True)
        ours = CrossEncoderScorer(tmp)
        qs = queries[:8]
        t_ce, _ = timed(lambda: [ce.predict([(q, t) for t in head]) for q in qs], args.repeats)
        t_ours_ce, _ = timed(lambda: [ours.score(q, head) for q in qs], args.repeats)
        same = max(float(np.max(np.abs(ce.predict([(q, t) for t in head]) - ours.score(q, head)))) for q in qs[:2])
    ms = MaxSimScorer(enc)
    t_ms, _ = timed(lambda: (ms.forget(), [ms.score(q, head) for q in queries[:8]]), args.repeats)
    print("\n| reranking 25 pairs | ms/query | speed-up |\n|---|---:|---:|")
    print(f"| CrossEncoder.predict (defaults), MiniLM-L6 architecture | {1e3 * t_ce / 8:.0f} | 1.00x |")
    print(f"| ragdiag CrossEncoderScorer, same model (max abs diff {same:.1e}) | {1e3 * t_ours_ce / 8:.0f} | "
          f"{t_ce / t_ours_ce:.2f}x |")
    print(f"| ragdiag MaxSim on MiniLM token embeddings (cold, chunk tokens computed) | {1e3 * t_ms / 8:.0f} | |")


if __name__ == "__main__":
    main()
