"""CI gate: the compiled forecaster must match eager before we ship a new torch.

Runs the same sequence of midnight-aligned context windows through an eager
model and a torch.compile'd copy (separate state, identical initial weights and
buffers) and compares forecasts and buffers step by step.
"""
import argparse
import copy
import logging
import sys
import time

import torch

from load_model import LoadForecaster

log = logging.getLogger("compile_parity")


def synthetic_windows(n_batches, batch_size, context_len, seed):
    g = torch.Generator().manual_seed(seed)
    hours = torch.arange(context_len, dtype=torch.float32)
    daily = 0.6 * torch.sin(2 * torch.pi * (hours % 24) / 24 - 1.2)
    weekly = 0.15 * torch.sin(2 * torch.pi * hours / (24 * 7))
    for _ in range(n_batches):
        level = 1.0 + 0.3 * torch.rand(batch_size, 1, generator=g)
        noise = 0.05 * torch.randn(batch_size, context_len, generator=g)
        yield level + daily + weekly + noise


def compare(name, ref, got, rtol, atol):
    diff = (ref - got).abs().max().item()
    ok = torch.allclose(ref, got, rtol=rtol, atol=atol)
    return ok, f"{name}: max|diff|={diff:.3e} {'ok' if ok else 'MISMATCH'}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batches", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--context-days", type=int, default=7)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    eager = LoadForecaster(context_days=args.context_days).eval()
    compiled_src = copy.deepcopy(eager)
    compiled = torch.compile(compiled_src)

    failures = 0
    t0 = time.perf_counter()
    with torch.no_grad():
        for step, ctx in enumerate(
            synthetic_windows(args.batches, args.batch_size, eager.context_len, args.seed)
        ):
            ref = eager(ctx.clone())
            got = compiled(ctx.clone())
            checks = [
                compare("forecast", ref, got, args.rtol, args.atol),
                compare("profile", eager.season.profile, compiled_src.season.profile, args.rtol, args.atol),
                compare("windows_seen", eager.season.windows_seen, compiled_src.season.windows_seen, 0, 0),
            ]
            for ok, msg in checks:
                log.info("step %d %s", step, msg)
                failures += 0 if ok else 1
    log.info("gate finished in %.1fs", time.perf_counter() - t0)
    if failures:
        log.error("compile parity gate FAILED (%d mismatching checks)", failures)
        return 1
    log.info("compile parity gate passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
