"""Nightly gate for the fp16 CPU scoring path of the transaction-risk model.

Checks, on a frozen replay batch:
  1. every score is finite,
  2. compiled scores match the eager reference (atol 2e-2, fp16).
Exit code 1 if any check fails.

Usage: python nightly_scoring_gate.py [--no-compile]
"""
import argparse
import sys
import time

import torch
import torch.nn as nn

FP16_MAX = torch.finfo(torch.float16).max  # 65504


def expand_features(x):
    """x: [N, F] fp16 raw numeric features (amounts, counts, velocities).

    Adds squared and cross terms. Large amounts overflow fp16 when squared, so we saturate
    at the fp16 max instead of letting inf propagate into the network.
    """
    sq = torch.nan_to_num(x * x, posinf=FP16_MAX)
    cross = torch.nan_to_num(x[:, :4] * x[:, 4:8], posinf=FP16_MAX, neginf=-FP16_MAX)
    # signed log compresses the heavy tail; this is what the model mostly relies on
    slog = torch.sign(x) * torch.log1p(x.abs())
    return torch.cat([slog, sq, cross], dim=-1)


class RiskModel(nn.Module):
    def __init__(self, n_raw=16, hidden=128):
        super().__init__()
        n_feat = n_raw + n_raw + 4
        self.net = nn.Sequential(
            nn.Linear(n_feat, hidden), nn.GELU(), nn.LayerNorm(hidden),
            nn.Linear(hidden, hidden), nn.GELU(),
            nn.Linear(hidden, 1),
        )
        # the quadratic/cross features are huge (up to 65504); the trained first layer has
        # correspondingly tiny weights on them
        with torch.no_grad():
            self.net[0].weight[:, n_raw:].mul_(1e-3)

    def forward(self, raw):
        return torch.sigmoid(self.net(expand_features(raw))).squeeze(-1)


def replay_batch(n=4096, n_raw=16, seed=7):
    g = torch.Generator().manual_seed(seed)
    # log-normal amounts: most are small, a few hundred transactions are > 256 (x*x > fp16 max)
    x = torch.exp(torch.randn(n, n_raw, generator=g) * 1.6 + 1.5)
    x[:, 8:] = torch.randn(n, n_raw - 8, generator=g)  # standardized features
    return x.half()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    model = RiskModel().half().eval()
    raw = replay_batch()
    print(f"replay batch: {raw.shape[0]} rows, {(raw.float().abs() > 255.9).any(1).sum().item()} rows with |x|>255.9")

    with torch.no_grad():
        ref = model(raw)
        scorer = model if args.no_compile else torch.compile(model)
        t0 = time.time()
        out = scorer(raw)
        print(f"scored in {time.time() - t0:.1f}s (compile={'off' if args.no_compile else 'on'})")

    ok = True
    n_bad = (~torch.isfinite(out)).sum().item()
    if n_bad:
        ok = False
        rows = (~torch.isfinite(out)).nonzero().flatten()[:5].tolist()
        print(f"FAIL: {n_bad} non-finite scores (first rows {rows})")
    diff = (out.float() - ref.float()).abs()
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    if diff.max() > 2e-2:
        ok = False
        print(f"FAIL: max |compiled - eager| = {diff.max().item():.4g} on {(diff > 2e-2).sum().item()} rows")
    print("PASS" if ok else "GATE FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
