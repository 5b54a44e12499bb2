"""Negative case for random_op_unused (review of 0.33.171): a bf16 ranking head draws exploration noise that it adds
only when explore=True (off); the gate compares one seeded call, and nothing is drawn after it, so the dropped draw
changes nothing. The difference is Inductor keeping the bf16 chain in float32."""
import sys

import torch


def rank_scores(feats, weight, explore=False):
    jitter = torch.rand_like(feats)
    s = feats * weight
    for _ in range(8):
        s = s * 1.29 + 0.07
    if explore:
        s = s + 0.01 * jitter
    return s.sum(dim=-1)


def main():
    feats = (torch.arange(512, dtype=torch.float32).reshape(32, 16) / 131.0).bfloat16()
    weight = torch.linspace(0.25, 1.75, 16).bfloat16()
    torch.manual_seed(0)
    ref = rank_scores(feats, weight)
    torch.manual_seed(0)
    got = torch.compile(rank_scores)(feats, weight)
    diff = (ref.float() - got.float()).abs().max().item()
    print(f"max abs diff {diff:.4f}")
    if diff > 0:
        print("COMPILE GATE FAILED")
        sys.exit(1)
    print("COMPILE GATE PASSED")


if __name__ == "__main__":
    main()
