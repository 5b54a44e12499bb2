"""Attention-block pruning scan for the distilled student LM.

1. adapt the student on the smoke corpus for a few steps,
2. measure eval loss with each layer's attention block skipped,
3. propose the blocks whose removal costs less than --budget nats.
"""
import argparse
import json
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from attn_skip import skip_attention

VOCAB = 512


def student_config(n_layers):
    return LlamaConfig(
        vocab_size=VOCAB, hidden_size=96, intermediate_size=256, num_hidden_layers=n_layers,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
        bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=True,
    )


def smoke_batch(gen, batch, half_len):
    # repeated random spans: the second half is only predictable through attention
    first = torch.randint(3, VOCAB, (batch, half_len), generator=gen)
    return torch.cat([first, first], dim=1)


def adapt(model, steps, gen, batch=16, half_len=24, lr=3e-3):
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for step in range(steps):
        ids = smoke_batch(gen, batch, half_len)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 50 == 0 or step == steps - 1:
            print(f"  adapt step {step:4d} loss {loss.item():.3f}", flush=True)
    model.eval()


@torch.inference_mode()
def eval_loss(forward, batches):
    total = 0.0
    for ids in batches:
        total += forward(input_ids=ids, labels=ids).loss.item()
    return total / len(batches)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--adapt-steps", type=int, default=200)
    ap.add_argument("--eval-batches", type=int, default=8)
    ap.add_argument("--budget", type=float, default=0.05, help="max allowed eval-loss increase (nats)")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--out", default="prune_plan.json")
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = LlamaForCausalLM(student_config(args.layers))
    print(f"adapting student ({sum(p.numel() for p in model.parameters()) / 1e6:.2f}M params)")
    adapt(model, args.adapt_steps, gen)

    eval_gen = torch.Generator().manual_seed(1234)
    batches = [smoke_batch(eval_gen, 16, 24) for _ in range(args.eval_batches)]

    forward = model if args.no_compile else torch.compile(model)
    t0 = time.perf_counter()
    base = eval_loss(forward, batches)
    print(f"baseline eval loss {base:.4f}  ({time.perf_counter() - t0:.1f}s incl. compile)")

    results = []
    for layer in range(args.layers):
        t0 = time.perf_counter()
        with skip_attention({layer}):
            loss = eval_loss(forward, batches)
        delta = loss - base
        results.append({"layer": layer, "loss": loss, "delta": delta, "prune": delta < args.budget})
        print(f"skip attn layer {layer}: loss {loss:.4f}  delta {delta:+.4f}  "
              f"{'PRUNE' if delta < args.budget else 'keep'}  ({time.perf_counter() - t0:.2f}s)")

    plan = [r["layer"] for r in results if r["prune"]]
    print(f"proposed attention blocks to drop: {plan} ({len(plan)}/{args.layers})")
    with open(args.out, "w") as f:
        json.dump({"baseline": base, "budget": args.budget, "layers": results, "drop": plan}, f, indent=2)


if __name__ == "__main__":
    main()
