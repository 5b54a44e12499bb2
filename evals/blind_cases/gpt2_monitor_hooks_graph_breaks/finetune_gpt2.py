"""Fine-tune a small GPT-2 on synthetic token data with activation monitoring.

We attach forward hooks to every transformer block *before* compiling, so
that they are part of the compiled model (we know hooks added after
torch.compile are not picked up). The hooks feed our activation-health
logger, which only prints at DEBUG level.

    python finetune_gpt2.py               # eager
    python finetune_gpt2.py --compile     # torch.compile
"""
import argparse
import logging
import time

import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
log = logging.getLogger("act_monitor")

VOCAB, SEQ, BATCH = 2048, 64, 8


def attach_activation_monitor(model):
    """Warn about exploding activations; per-block details at DEBUG level."""

    def make_hook(name):
        def hook(module, inputs, output):
            hidden = output[0] if isinstance(output, tuple) else output
            log.debug(f"{name}: absmax={hidden.abs().max().item():.3f} "
                      f"rms={hidden.pow(2).mean().sqrt().item():.3f}")
        return hook

    for i, block in enumerate(model.transformer.h):
        block.register_forward_hook(make_hook(f"block{i}"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=128, n_layer=6, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(cfg)
    attach_activation_monitor(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    fwd = torch.compile(model) if args.compile else model

    data = torch.randint(0, VOCAB, (args.steps, BATCH, SEQ))
    times = []
    for step in range(args.steps):
        t0 = time.perf_counter()
        ids = data[step]
        logits = fwd(input_ids=ids).logits
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t0)
        if step % 10 == 0 or step == args.steps - 1:
            log.info(f"step {step:3d} loss {loss.item():.4f} step {times[-1]*1000:.0f} ms")
    steady = sorted(times[10:])[len(times[10:]) // 2]
    log.info(f"{'compiled' if args.compile else 'eager'}: median step after warmup "
             f"{steady*1000:.1f} ms (first step {times[0]:.1f} s)")


if __name__ == "__main__":
    main()
