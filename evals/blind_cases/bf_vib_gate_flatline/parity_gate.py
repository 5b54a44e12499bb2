"""Compile-vs-eager parity gate for the bearing-vibration anomaly scorer.

Runs the production scorer eagerly and under torch.compile on the frozen
regression fixture and fails the CI job if the two disagree.
"""
import argparse
import logging
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("parity_gate")


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, k, stride):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, stride=stride, padding=k // 2)
        self.norm = nn.GroupNorm(4, cout)

    def forward(self, x):
        return F.gelu(self.norm(self.conv(x)))


class VibrationScorer(nn.Module):
    def __init__(self, channels=3, width=32, n_classes=4):
        super().__init__()
        self.blocks = nn.Sequential(
            ConvBlock(channels, width, 9, 2),
            ConvBlock(width, width, 7, 2),
            ConvBlock(width, 2 * width, 5, 2),
            ConvBlock(2 * width, 2 * width, 3, 1),
        )
        self.head = nn.Linear(4 * width, n_classes)

    @staticmethod
    def standardize(x):
        # per-window, per-channel z-score so the model is gain invariant
        mu = x.mean(dim=-1, keepdim=True)
        sd = x.std(dim=-1, keepdim=True)
        return (x - mu) / sd

    def forward(self, x):
        h = self.blocks(self.standardize(x))
        pooled = torch.cat([h.mean(-1), h.amax(-1)], dim=1)
        return self.head(pooled)


def make_fixture(n_windows, length, seed):
    """Synthetic replay of the regression fixture: healthy, misaligned,
    bearing-fault and idle-machine windows (3-axis accelerometer)."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length) / 2048.0
    xs = []
    for i in range(n_windows):
        kind = i % 4
        base = torch.sin(2 * torch.pi * 29.5 * t)[None].repeat(3, 1)
        if kind == 1:
            base = base + 0.6 * torch.sin(2 * torch.pi * 59.0 * t)[None]
        elif kind == 2:
            base = base + (torch.rand(3, length, generator=g) < 0.01).float() * 3.0
        noise = 0.05 * torch.randn(3, length, generator=g)
        w = base + noise
        if kind == 3:
            # machine stopped: the DAQ reports the idle reading for the z axis
            w[2] = 0.0
        xs.append(w)
    return torch.stack(xs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--windows", type=int, default=64)
    p.add_argument("--length", type=int, default=1024)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--rtol", type=float, default=1e-4)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    log.info("torch %s", torch.__version__)

    torch.manual_seed(args.seed)
    model = VibrationScorer().eval()
    data = make_fixture(args.windows, args.length, args.seed)
    compiled = torch.compile(model)

    failures = 0
    worst = 0.0
    t0 = time.time()
    with torch.no_grad():
        for b, start in enumerate(range(0, len(data), args.batch)):
            x = data[start:start + args.batch]
            ref = model(x)
            out = compiled(x)
            ok = torch.allclose(out, ref, atol=args.atol, rtol=args.rtol)
            diff = (out - ref).abs().max().item()
            worst = max(worst, diff) if diff == diff else float("nan")
            log.info("batch %d: max|compiled-eager| = %.3g  %s", b, diff, "ok" if ok else "MISMATCH")
            failures += 0 if ok else 1
    log.info("checked %d windows in %.1fs, worst diff %.3g", len(data), time.time() - t0, worst)
    if failures:
        log.error("PARITY GATE FAILED: %d/%d batches differ", failures, -(-len(data) // args.batch))
        return 1
    log.info("PARITY GATE PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
