"""CI gate: the compiled detector must match eager before we ship the compiled artifact.

Usage: python parity_gate.py [--batches N] [--atol A] [--rtol R]
"""
import argparse
import logging
import math
import sys

import torch

from baro_model import InfrasoundDetector

log = logging.getLogger("parity_gate")
FS = 20
T = 60 * FS


def synth_batch(batch_size: int, gen: torch.Generator) -> torch.Tensor:
    """Realistic-looking raw station data: slow baseline + microbarom + occasional N-wave."""
    t = torch.arange(T, dtype=torch.float32) / FS
    base_p = 101325.0 + 800.0 * (torch.rand(batch_size, 1, generator=gen) - 0.5)
    drift = 0.02 * t * torch.randn(batch_size, 1, generator=gen)
    microbarom = 0.15 * torch.sin(2 * math.pi * 0.2 * t + 6.28 * torch.rand(batch_size, 1, generator=gen))
    noise = 0.05 * torch.randn(batch_size, T, generator=gen)
    onset = torch.randint(100, T - 200, (batch_size, 1), generator=gen)
    amp = (torch.rand(batch_size, 1, generator=gen) < 0.4).float() * (0.5 + torch.rand(batch_size, 1, generator=gen))
    tt = (torch.arange(T)[None, :] - onset).float() / FS
    nwave = amp * torch.where((tt >= 0) & (tt < 2.0), 1.0 - tt, torch.zeros_like(tt))
    pressure = base_p + drift + microbarom + noise + nwave
    temp = 12.0 + 3.0 * torch.rand(batch_size, 1, generator=gen) + 0.01 * torch.randn(batch_size, T, generator=gen)
    wind = 2.0 + 2.0 * torch.rand(batch_size, 1, generator=gen) + 0.3 * torch.randn(batch_size, T, generator=gen)
    hum = 40.0 + 40.0 * torch.rand(batch_size, 1, generator=gen) + 0.2 * torch.randn(batch_size, T, generator=gen)
    return torch.stack([pressure, temp, wind, hum], dim=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batches", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--rtol", type=float, default=1e-4)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")

    torch.manual_seed(0)
    model = InfrasoundDetector().eval()
    compiled = torch.compile(model)
    gen = torch.Generator().manual_seed(1234)

    worst = 0.0
    failed = 0
    with torch.no_grad():
        for b in range(args.batches):
            raw = synth_batch(args.batch_size, gen)
            ref = model(raw)
            out = compiled(raw)
            diff = (out - ref).abs().max().item()
            ok = torch.allclose(out, ref, atol=args.atol, rtol=args.rtol)
            worst = max(worst, diff)
            failed += not ok
            log.info("batch %d: max|compiled-eager| = %.3e  %s", b, diff, "ok" if ok else "MISMATCH")
    log.info("worst diff %.3e over %d batches (atol=%g rtol=%g)", worst, args.batches, args.atol, args.rtol)
    if failed:
        log.error("parity gate FAILED on %d/%d batches", failed, args.batches)
        sys.exit(1)
    log.info("parity gate passed")


if __name__ == "__main__":
    main()
