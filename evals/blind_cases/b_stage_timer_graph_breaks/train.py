"""Pretraining loop for the small char-level LM used in the tokenizer ablations.

    python train.py --compile --profile-stages
"""
import argparse
import logging
import math
import time

import torch

from model import TinyLM
from profiling import TIMER

log = logging.getLogger("train")


def synthetic_corpus(n_tokens, vocab, seed):
    # stand-in for the packed .bin shards: repeated random "words" so the loss goes down
    g = torch.Generator().manual_seed(seed)
    words = torch.randint(0, vocab, (256, 8), generator=g)
    picks = torch.randint(0, 256, (n_tokens // 8 + 1,), generator=g)
    return words[picks].flatten()[:n_tokens].contiguous()


def get_batch(data, batch_size, block, g):
    ix = torch.randint(0, len(data) - block - 1, (batch_size,), generator=g)
    x = torch.stack([data[i:i + block] for i in ix])
    y = torch.stack([data[i + 1:i + block + 1] for i in ix])
    return x, y


def lr_at(step, warmup, total, base):
    if step < warmup:
        return base * (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1 + math.cos(math.pi * p))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--block", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--profile-stages", action="store_true",
                    help="accumulate per-stage wall time for the dashboard")
    ap.add_argument("--log-every", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1337)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(args.seed)
    TIMER.enabled = args.profile_stages
    data = synthetic_corpus(200_000, 512, args.seed)
    model = TinyLM(max_len=args.block)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1, betas=(0.9, 0.95))
    fwd = torch.compile(model) if args.compile else model
    g = torch.Generator().manual_seed(args.seed + 1)

    warm = 5
    t_steady = 0.0
    t_first = None
    for step in range(args.steps):
        for pg in opt.param_groups:
            pg["lr"] = lr_at(step, 10, args.steps, args.lr)
        x, y = get_batch(data, args.batch_size, args.block, g)
        t0 = time.perf_counter()
        _, loss = fwd(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        if step == 0:
            t_first = dt
        if step >= warm:
            t_steady += dt
        if step % args.log_every == 0 or step == args.steps - 1:
            log.info("step %4d | loss %.4f | %.1f ms", step, loss.item(), dt * 1000)

    n = args.steps - warm
    log.info("first step (incl. compile): %.1f s", t_first)
    log.info("steady-state: %.1f ms/step, %.0f tok/s", 1000 * t_steady / n,
             n * args.batch_size * args.block / t_steady)
    if args.profile_stages:
        log.info("stage ms/call: %s", {k: round(v, 3) for k, v in TIMER.summary().items()})


if __name__ == "__main__":
    main()
