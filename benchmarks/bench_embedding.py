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
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
warnings.filterwarnings("ignore")

from ragdiag.index.chunking import STRATEGIES, chunk_corpus  # noqa: E402
from ragdiag.documents.corpus import load_corpus  # noqa: E402
from ragdiag.index.encoder.model import Encoder
from ragdiag.index.encoder.hardware import bf16_supported
from ragdiag.index.encoder.resolve import offline  # noqa: E402
from ragdiag.documents.truth import default_truth_path, load_truth  # noqa: E402


def timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def top10_overlap(q: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ta = np.argsort(-(q @ a.T), axis=1)[:, :10]
    tb = np.argsort(-(q @ b.T), axis=1)[:, :10]
    return float(np.mean([len(set(x) & set(y)) / 10 for x, y in zip(ta, tb)]))


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--chunks", type=int, default=300)
    args = ap.parse_args()
    offline()
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
