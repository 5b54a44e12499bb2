"""Evaluate one checkpoint at several attention soft-cap settings.

usage: python sweep_eval.py [--compile] [--caps 0,30,10,5,2] [--batches 8]
"""
import argparse
import logging
import math
import os
import time

import torch

from tinylm import TinyLM, TinyLMConfig

log = logging.getLogger("sweep")


def make_eval_batches(n_batches, batch_size, seq_len, vocab, seed=1234):
    # Synthetic held-out stream: a noisy repeating-pattern language, fixed seed.
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        base = torch.randint(0, vocab, (batch_size, 1), generator=g)
        steps = torch.randint(1, 7, (batch_size, 1), generator=g)
        seq = (base + steps * torch.arange(seq_len + 1)[None]) % vocab
        noise = torch.rand(seq.shape, generator=g) < 0.15
        seq = torch.where(noise, torch.randint(0, vocab, seq.shape, generator=g), seq)
        batches.append((seq[:, :-1].contiguous(), seq[:, 1:].contiguous()))
    return batches


@torch.no_grad()
def evaluate(model, batches):
    total, count = 0.0, 0
    for x, y in batches:
        _, loss = model(x, y)
        total += loss.item() * y.numel()
        count += y.numel()
    mean = total / count
    return mean, math.exp(mean)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--caps", default="0,30,10,5,2")
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    cfg = TinyLMConfig()
    model = TinyLM(cfg).eval()
    log.info("torch %s, params %.2fM", torch.__version__, sum(p.numel() for p in model.parameters()) / 1e6)

    runner = torch.compile(model) if args.compile else model
    batches = make_eval_batches(args.batches, args.batch_size, args.seq_len, cfg.vocab_size)

    results = []
    for cap in [c.strip() for c in args.caps.split(",")]:
        os.environ["TINYLM_ATTN_SOFTCAP"] = cap
        t0 = time.perf_counter()
        loss, ppl = evaluate(runner, batches)
        dt = time.perf_counter() - t0
        log.info("softcap=%-4s loss=%.6f ppl=%.3f (%.1fs)", cap, loss, ppl, dt)
        results.append((cap, loss, ppl))

    print("\nsoftcap   loss       ppl")
    for cap, loss, ppl in results:
        print(f"{cap:>7}   {loss:.6f}   {ppl:.3f}")


if __name__ == "__main__":
    main()
