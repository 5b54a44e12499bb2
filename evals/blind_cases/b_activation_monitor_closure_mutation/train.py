"""Train a small ViT on synthetic CIFAR-shaped data with activation monitoring."""
import argparse
import logging
import math
import time

import torch
import torch.nn.functional as F

from monitor import attach_activation_monitor, summarize
from vit import ViT

log = logging.getLogger("train")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--log-every", type=int, default=5)
    p.add_argument("--rms-alarm", type=float, default=50.0, help="abort if any block RMS exceeds this")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def synthetic_batch(bs, gen):
    y = torch.randint(0, 10, (bs,), generator=gen)
    x = torch.randn(bs, 3, 32, 32, generator=gen) * 0.5
    x[:, y % 3] += (y.float() / 10.0).view(-1, 1, 1)  # weak class signal
    return x, y


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    model = ViT(dim=64, depth=args.depth)
    watched = [f"blocks.{i}" for i in range(args.depth)] + ["norm"]
    calls, rms = attach_activation_monitor(model, watched)
    if args.compile:
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 10) * 0.5 * (1 + math.cos(math.pi * s / args.steps))
    )

    t_start = time.perf_counter()
    for step in range(1, args.steps + 1):
        x, y = synthetic_batch(args.batch_size, gen)
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()

        if step % args.log_every == 0:
            acc = (logits.argmax(-1) == y).float().mean().item()
            log.info("step %d loss %.4f acc %.3f lr %.2e", step, loss.item(), acc, sched.get_last_lr()[0])
            log.info("activations: %s", summarize(calls, rms))
            hot = [n for n, v in rms.items() if float(v) > args.rms_alarm]
            if hot:
                raise RuntimeError(f"activation RMS alarm in {hot}")

    log.info("finished %d steps in %.1fs", args.steps, time.perf_counter() - t_start)
    missing = [n for n, c in calls.items() if c != args.steps]
    if missing:
        raise RuntimeError(
            f"activation monitor saw wrong call counts for {missing}: {calls} (expected {args.steps} each)"
        )
    log.info("monitor ok: %s", summarize(calls, rms))


if __name__ == "__main__":
    main()
