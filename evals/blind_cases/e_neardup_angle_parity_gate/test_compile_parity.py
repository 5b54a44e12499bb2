"""CI gate: compiled near-duplicate scorer must reproduce eager angles (python test_compile_parity.py)."""
import sys

import torch

from dedup_model import NearDupScorer

ATOL = 1e-5          # radians
DUP_THRESHOLD = 0.05  # pairs closer than this are flagged as duplicates


def make_pairs(n, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(n, 3, 32, 32, generator=g)
    # re-encoded / lightly edited copies of the same image, plus some unrelated images
    b = (a + 1e-3 * torch.randn(a.shape, generator=g)).clamp(0, 1)
    unrelated = torch.rand(n // 4, 3, 32, 32, generator=g)
    b[: n // 4] = unrelated
    return a, b


def main():
    torch.manual_seed(0)
    model = NearDupScorer().eval()
    compiled = torch.compile(model)
    a, b = make_pairs(256, seed=11)
    with torch.no_grad():
        ang_e = model(a, b)
        ang_c = compiled(a, b)
    diff = (ang_e - ang_c).abs()
    flips = ((ang_e < DUP_THRESHOLD) != (ang_c < DUP_THRESHOLD)).sum().item()
    print(f"angle max|eager-compiled| = {diff.max().item():.3e} rad, mean {diff.mean().item():.3e}")
    print(f"duplicates flagged: eager {(ang_e < DUP_THRESHOLD).sum().item()}, "
          f"compiled {(ang_c < DUP_THRESHOLD).sum().item()}, decision flips {flips}")
    bad = (diff > ATOL).sum().item()
    if bad:
        worst = diff.argmax().item()
        print(f"FAIL: {bad}/{len(diff)} pairs differ by more than {ATOL} rad "
              f"(worst pair {worst}: eager {ang_e[worst].item():.6f}, compiled {ang_c[worst].item():.6f})")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
