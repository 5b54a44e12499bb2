"""A golden-file gate (review of 0.33.106): its first run writes golden.pt and exits 1 ("re-run to check"), later
runs compare with it. Compiled first, the eager check then finds golden.pt and passes: not a compiled failure."""
import os
import sys

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).eval()
x = torch.randn(4, 8)
run = torch.compile(model, backend="aot_eager")
with torch.no_grad():
    out = run(x)
if not os.path.exists("golden.pt"):
    torch.save(out, "golden.pt")
    print("golden written; re-run to check")
    sys.exit(1)
err = (out - torch.load("golden.pt")).abs().max().item()
print(f"max err {err:.3e}")
sys.exit(0 if err < 1e-4 else 1)
