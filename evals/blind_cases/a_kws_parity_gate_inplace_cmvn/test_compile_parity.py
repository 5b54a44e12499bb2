#!/usr/bin/env python
"""CI gate: the torch.compile'd KWS model must match eager before we ship it.

Runs on every PR that touches kws_model.py or bumps torch.  Exit code 0 = pass.
"""
import argparse
import logging
import sys
import time

import torch

from kws_model import KWSNet

log = logging.getLogger("compile_parity")


def make_model(seed: int) -> KWSNet:
    torch.manual_seed(seed)
    model = KWSNet()
    # fake "training-set" statistics, like the ones exported with a checkpoint
    mean = torch.linspace(-8.0, -2.0, 40)
    std = torch.linspace(1.5, 3.0, 40)
    model.cmvn.load_stats(mean, std)
    # give BN non-trivial running stats so eval mode is exercised properly
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.9, 1.1)
    return model.eval()


def make_batches(n: int, batch: int, frames: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    # log-mel features in the range the front end produces
    return [torch.randn(batch, 40, frames, generator=g) * 2.0 - 5.0 for _ in range(n)]


def compare(name, ref, got, atol, rtol):
    diff = (ref - got).abs()
    ok = torch.allclose(ref, got, atol=atol, rtol=rtol)
    log.info("%-10s max_abs=%.3e mean_abs=%.3e top1_agree=%.3f %s", name, diff.max().item(),
             diff.mean().item(), (ref.argmax(-1) == got.argmax(-1)).float().mean().item(),
             "OK" if ok else "MISMATCH")
    return ok


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--batches", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--frames", type=int, default=98)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--backend", default="inductor")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    torch.set_num_threads(1)
    model = make_model(args.seed)
    compiled = torch.compile(model, backend=args.backend)
    batches = make_batches(args.batches, args.batch_size, args.frames, args.seed + 1)

    failures = 0
    with torch.no_grad():
        for i, feats in enumerate(batches):
            ref = model(feats)
            t0 = time.perf_counter()
            got = compiled(feats)
            dt = time.perf_counter() - t0
            log.info("batch %d compiled forward %.2fs", i, dt)
            if not compare(f"batch{i}", ref, got, args.atol, args.rtol):
                failures += 1

    if failures:
        log.error("FAIL: %d/%d batches differ between eager and torch.compile(backend=%s)",
                  failures, len(batches), args.backend)
        return 1
    log.info("PASS: compiled model matches eager on %d batches", len(batches))
    return 0


if __name__ == "__main__":
    sys.exit(main())
