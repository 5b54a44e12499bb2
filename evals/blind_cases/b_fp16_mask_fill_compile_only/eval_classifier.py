"""Offline evaluation of the ticket-routing classifier.

Runs the (optionally compiled) model over a held-out set in reduced precision and,
with --check-parity, compares against the plain eager model on the same batches.
"""
import argparse
import logging
import time

import torch
import torch.nn.functional as F

from model import TextClassifier

log = logging.getLogger("eval")


def make_eval_set(n, max_len, vocab, num_classes, seed=0):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(max_len // 4, max_len + 1, (n,), generator=g)
    ids = torch.randint(1, vocab, (n, max_len), generator=g)
    ids[torch.arange(max_len)[None, :] >= lengths[:, None]] = 0  # right padding
    labels = torch.randint(0, num_classes, (n,), generator=g)
    return ids, labels


def batches(ids, labels, bs):
    for i in range(0, ids.shape[0] - bs + 1, bs):
        yield ids[i:i + bs], labels[i:i + bs]


@torch.no_grad()
def evaluate(model, ids, labels, bs):
    correct, total, loss_sum, t0 = 0, 0, 0.0, time.perf_counter()
    for x, y in batches(ids, labels, bs):
        logits = model(x).float()
        loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
        correct += (logits.argmax(-1) == y).sum().item()
        total += y.numel()
    return {"acc": correct / total, "loss": loss_sum / total, "sec": time.perf_counter() - t0}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dtype", default="float16", choices=["float32", "float16", "bfloat16"])
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--num-samples", type=int, default=128)
    p.add_argument("--max-len", type=int, default=64)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--check-parity", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    dtype = getattr(torch, args.dtype)
    model = TextClassifier(max_len=args.max_len).eval().to(dtype)
    ids, labels = make_eval_set(args.num_samples, args.max_len, 5000, 5, seed=args.seed)
    log.info("eval set: %d samples, dtype=%s", ids.shape[0], dtype)

    runner = model if args.no_compile else torch.compile(model)
    metrics = evaluate(runner, ids, labels, args.batch_size)
    log.info("%s: acc=%.4f loss=%.4f time=%.1fs",
             "eager" if args.no_compile else "compiled", metrics["acc"], metrics["loss"], metrics["sec"])

    if args.check_parity and not args.no_compile:
        ref = evaluate(model, ids, labels, args.batch_size)
        log.info("eager reference: acc=%.4f loss=%.4f", ref["acc"], ref["loss"])
        diff = abs(ref["loss"] - metrics["loss"])
        log.info("loss diff eager vs compiled: %.3e", diff)
        if diff > 1e-2:
            raise SystemExit("parity check failed")
    log.info("done")


if __name__ == "__main__":
    main()
