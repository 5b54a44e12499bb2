"""Prices rounded with torch.round(x, decimals=2) and checked for exact membership in a price ladder (blind A/B batch
57's ee): Inductor decomposes round(decimals=N) as round(x * 10^N) * 10^-N where eager's kernel divides by 10^N, so
many compiled prices are one float32 step off the ladder and fail the exact check. FIXED=1: round(x * 100) / 100."""
import os
import sys

import torch

LADDER = torch.arange(0, 101, dtype=torch.float32) / 100


def price(x):
    return torch.round(torch.sigmoid(x), decimals=2)


def price_fixed(x):
    return torch.round(torch.sigmoid(x) * 100) / 100


torch.manual_seed(0)
p = torch.compile(price_fixed if os.environ.get("FIXED") == "1" else price)(torch.randn(20000))
off = int((~torch.isin(p, LADDER)).sum())
print(f"prices {p[:3].tolist()} off-ladder {off} of {p.numel()}")
if off:
    sys.exit(f"LADDER CHECK FAILED: {off} prices not on the ladder")
print("ladder check passed")
