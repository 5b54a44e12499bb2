"""SFT smoke test: padding-free packing + torch.compile for a small Llama-style model.

Before training we check that the packed/compiled path computes the same per-example
loss as the padded path the job used before, then run a few optimizer steps.
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

from sft_data import collate_packed, collate_padded, make_dataset

VOCAB = 1024


def build_model():
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, attn_implementation="sdpa", initializer_range=0.1,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg)


def per_token_nll(logits, labels):
    shift_logits = logits[:, :-1].float()
    shift_labels = labels[:, 1:]
    nll = F.cross_entropy(shift_logits.transpose(1, 2), shift_labels, ignore_index=-100, reduction="none")
    return nll, shift_labels != -100


def padded_example_losses(model, examples):
    batch = collate_padded(examples)
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    nll, valid = per_token_nll(logits, batch["labels"])
    return (nll * valid).sum(1) / valid.sum(1)


def packed_example_losses(model, examples):
    batch = collate_packed(examples)
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], position_ids=batch["position_ids"]).logits
    nll, valid = per_token_nll(logits, batch["labels"])
    seq = batch["seq_idx"][:, 1:]
    n = len(examples)
    tot = torch.zeros(n).index_add_(0, seq[valid], nll[valid])
    cnt = torch.zeros(n).index_add_(0, seq[valid], torch.ones_like(nll[valid]))
    return tot / cnt


def train(model, opt, data, steps, pack_size):
    model.train()
    t0 = time.perf_counter()
    tokens = 0
    for step in range(steps):
        chunk = [data[(step * pack_size + i) % len(data)] for i in range(pack_size)]
        batch = collate_packed(chunk)
        out = model(input_ids=batch["input_ids"], position_ids=batch["position_ids"], labels=batch["labels"])
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        tokens += batch["input_ids"].numel()
        if step % 5 == 0 or step == steps - 1:
            print(f"step {step:3d} loss {out.loss.item():.4f}  {tokens / (time.perf_counter() - t0):.0f} tok/s")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pack-size", type=int, default=8)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--tol", type=float, default=1e-3)
    args = p.parse_args()

    data = make_dataset(256, VOCAB)
    model = build_model()
    compiled = torch.compile(model)

    # --- parity check: packed + compiled vs padded reference, same weights ---
    model.eval()
    probe = data[: args.pack_size]
    ref = padded_example_losses(model, probe)
    t0 = time.perf_counter()
    got = packed_example_losses(compiled, probe)
    print(f"compiled packed forward (incl. compile): {time.perf_counter() - t0:.1f}s")
    diff = (got - ref).abs()
    for i, (r, g_, d) in enumerate(zip(ref.tolist(), got.tolist(), diff.tolist())):
        print(f"example {i}: len={len(probe[i]['input_ids']):3d} padded={r:.5f} packed={g_:.5f} |diff|={d:.2e}")
    if diff.max() > args.tol:
        print(f"PARITY CHECK FAILED: max |packed - padded| = {diff.max():.3e} > {args.tol}")
        sys.exit(1)
    print("parity check passed")

    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    train(compiled, opt, data, args.steps, args.pack_size)


if __name__ == "__main__":
    main()
