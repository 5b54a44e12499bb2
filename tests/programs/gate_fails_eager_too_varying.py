"""A parity gate whose two paths each get their own unseeded augmentation noise: it fails with compilation off
too, with other numbers on every run. The report must say that the program's results vary (no accuracy
check on the compiled graphs; blind A/B batch 21, a BEV scatter with repeated indices)."""
import sys

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)).eval()
compiled = torch.compile(model, backend="aot_eager")
x = torch.ones(8, 16)


scale = 10 ** (-2 + 2 * torch.rand(()).item())   # noise of 1e-2 .. 1 (two runs printing within 1% of each other
                                                # would read as the same failure: a test flaked on 0.05 fixed)


def augment(t):
    return t + scale * torch.randn_like(t)


with torch.no_grad():
    got, want = compiled(augment(x)), model(augment(x))
diff = (got - want).abs().max().item()
print(f"max|compiled-eager| = {diff:.4e}")
if diff > 1e-5:
    sys.exit("PARITY GATE FAILED: outputs mismatch")
