"""Per-window perplexity scoring with a small Llama-architecture nucleotide LM.

Used to flag low-complexity / contaminated regions before pretraining.
Run `python score_windows.py --compare` to benchmark eager vs torch.compile.
"""
import argparse
import time

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

from genome_data import NucleotideTokenizer, batches, packed_windows, synthetic_contigs

WINDOW = 4096


def build_model(vocab_size: int) -> LlamaForCausalLM:
    # Production loads our trained checkpoint; the architecture is identical.
    cfg = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=128,
        intermediate_size=344,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=WINDOW,
        rope_theta=50_000.0,
        tie_word_embeddings=True,
        attn_implementation="sdpa",
    )
    torch.manual_seed(1234)
    return LlamaForCausalLM(cfg).eval()


def window_nll(model, batch) -> torch.Tensor:
    out = model(**batch)
    logits = out.logits[:, :-1].float()
    targets = batch["input_ids"][:, 1:]
    nll = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")
    return nll.view(targets.shape).mean(dim=1)


def timed_pass(model, data):
    t0 = time.perf_counter()
    scores = [window_nll(model, b) for b in data]
    return time.perf_counter() - t0, torch.cat(scores)


def compare(model, data, rounds: int = 4):
    compiled = torch.compile(model)
    n_tok = sum(b["input_ids"].numel() for b in data)
    best = {"eager": float("inf"), "compiled": float("inf")}
    scores = {}
    with torch.inference_mode():
        for label, m in (("eager", model), ("compiled", compiled)):
            t0 = time.perf_counter()
            window_nll(m, data[0])
            print(f"[{label:8s}] first call {time.perf_counter() - t0:6.1f}s")
        # alternate so both modes see the same machine load
        for _ in range(rounds):
            for label, m in (("eager", model), ("compiled", compiled)):
                dt, scores[label] = timed_pass(m, data)
                best[label] = min(best[label], dt)
    for label in ("eager", "compiled"):
        print(f"[{label:8s}] {len(data)} batches best-of-{rounds} {best[label]:6.2f}s | {n_tok / best[label]:8.0f} tok/s")
    print(f"speedup (compiled / eager): {best['eager'] / best['compiled']:.2f}x")
    print(f"max |nll diff|: {(scores['eager'] - scores['compiled']).abs().max().item():.2e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--batch-size", type=int, default=2)
    ap.add_argument("--n-batches", type=int, default=3)
    args = ap.parse_args()

    tok = NucleotideTokenizer()
    contigs = synthetic_contigs(n_contigs=12, min_len=2_000, max_len=6_000)
    windows = packed_windows(contigs, tok, WINDOW)
    data = list(batches(windows, args.batch_size, tok.pad_id))[: args.n_batches]
    print(f"torch {torch.__version__} | threads {torch.get_num_threads()} | "
          f"{len(data)} batches x {args.batch_size} windows x {WINDOW} tokens")

    model = build_model(len(tok))
    if args.compare:
        compare(model, data)
    else:
        m = torch.compile(model) if args.compile else model
        with torch.inference_mode():
            dt, scores = timed_pass(m, data)
        print(f"{'compiled' if args.compile else 'eager'}: {dt:.2f}s, mean window NLL {scores.mean().item():.4f}")


if __name__ == "__main__":
    main()
