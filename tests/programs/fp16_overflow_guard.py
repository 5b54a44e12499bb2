"""A float16 feature step with an overflow guard (blind A/B batch 8's scoring gate): nan_to_num(x * x,
posinf=65504) caps squares that overflow float16. Eager rounds x * x to float16 first (inf, then capped);
Inductor fuses both ops, computes in fp32 (a finite 90000, left alone) and rounds to inf at the store. The
gate sees non-finite features only compiled; with emulate_precision_casts it passes."""
import sys

import torch

FP16_MAX = 65504.0


def features(x):
    sq = torch.nan_to_num(x * x, posinf=FP16_MAX)
    return torch.cat([x, sq], dim=1)


def main():
    g = torch.Generator().manual_seed(0)
    x = (torch.rand(64, 4, generator=g) * 400).half()      # some |x| > 255.9: x*x overflows float16
    f = torch.compile(features)(x)
    bad = (~torch.isfinite(f)).any(dim=1).sum().item()
    print(f"rows with non-finite features: {bad}")
    if bad:
        print("GATE FAILED")
        sys.exit(1)
    print("gate passed")


if __name__ == "__main__":
    main()
