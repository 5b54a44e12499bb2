"""Blind A/B batch 45: per-channel periods where math.inf means "not cyclic"; torch.remainder(x, inf) is x in eager,
NaN in Inductor's vectorized CPU code (a - floor(a / b) * b; pytorch/pytorch#198057, open on 2.15.0): the compiled
run prints NaN from the first step, eager does not. FIX=1 keeps inf out of the remainder (torch.where on
torch.isfinite)."""
import math
import os

import torch
import torch.nn as nn

FIX = bool(os.environ.get("FIX"))


class Fold(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("period", torch.tensor([24.0, math.inf, math.inf, 360.0] * 4))
        self.lin = nn.Linear(16, 4)

    def forward(self, x):
        if FIX:
            cyclic = torch.isfinite(self.period)
            folded = torch.where(cyclic, torch.remainder(x, torch.where(cyclic, self.period, 1.0)), x)
        else:
            folded = torch.remainder(x, self.period)
        return self.lin(folded)


torch.manual_seed(0)
model = torch.compile(Fold())
for step in range(3):
    y = model(torch.rand(64, 16) * 100)
    print(f"step {step} mean {y.mean().item():.4f}")
