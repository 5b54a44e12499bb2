"""CI gate: torch.compile'd VibNet must match eager on the validation split.

Usage: python parity_gate.py [--batches N] [--atol 1e-4] [--rtol 1e-4]
"""
import argparse
import logging
import random
import sys
import time

import numpy as np
import torch

from vibdata import CLASSES, make_loader
from vibnet import VibNet

log = logging.getLogger("parity_gate")


def quick_train(model, steps, seed):
    torch.manual_seed(seed)
    loader = make_loader("train", n_per_class=24, batch_size=20)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    model.train()
    it = iter(loader)
    for step in range(steps):
        try:
            x, y = next(it)
        except StopIteration:
            it = iter(loader)
            x, y = next(it)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            log.info("warm-up train step %d loss %.4f", step, loss.item())
    model.eval()
    return model


@torch.no_grad()
def run_pass(fn, loader, max_batches, seed):
    # same seeds for both passes so the comparison is apples to apples
    torch.manual_seed(seed)
    random.seed(seed)
    logits, labels = [], []
    for i, (x, y) in enumerate(loader):
        if i >= max_batches:
            break
        logits.append(fn(x))
        labels.append(y)
    return torch.cat(logits), torch.cat(labels)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=6)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train-steps", type=int, default=40)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    log.info("torch %s", torch.__version__)

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    model = quick_train(VibNet(n_classes=len(CLASSES)), args.train_steps, args.seed)
    compiled = torch.compile(model)

    val_loader = make_loader("val", n_per_class=16, batch_size=16)

    t0 = time.perf_counter()
    eager_logits, labels = run_pass(model, val_loader, args.batches, args.seed)
    t1 = time.perf_counter()
    comp_logits, labels_c = run_pass(compiled, val_loader, args.batches, args.seed)
    t2 = time.perf_counter()
    log.info("eager pass %.2fs, compiled pass %.2fs (incl. compile)", t1 - t0, t2 - t1)

    assert torch.equal(labels, labels_c), "label order differs between passes"
    diff = (eager_logits - comp_logits).abs()
    acc_e = (eager_logits.argmax(1) == labels).float().mean().item()
    acc_c = (comp_logits.argmax(1) == labels).float().mean().item()
    log.info("val acc eager %.3f compiled %.3f", acc_e, acc_c)
    log.info("max |eager - compiled| = %.3e  mean = %.3e", diff.max().item(), diff.mean().item())
    for b in range(0, eager_logits.shape[0], 16):
        log.info("  batch %d max diff %.3e", b // 16, diff[b:b + 16].max().item())

    ok = torch.allclose(eager_logits, comp_logits, atol=args.atol, rtol=args.rtol)
    if not ok:
        log.error("PARITY GATE FAILED (atol=%g rtol=%g)", args.atol, args.rtol)
        sys.exit(1)
    log.info("PARITY GATE PASSED")


if __name__ == "__main__":
    main()
