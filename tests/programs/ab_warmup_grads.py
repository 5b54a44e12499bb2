"""An eager-vs-compiled A/B training script (blind A/B batch 51): the compiled arm's warm-up runs a backward whose
gradients are never cleared, so its first step differs; the script logs "A/B MISMATCH" and exits 0, with or without
torch.compile. FIXED=1: zero_grad after the warm-up."""
import copy
import os

import torch
import torch.nn.functional as F
from torch import nn


def train(model, steps, x, y, warm=False):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if warm:
        F.cross_entropy(model(torch.randn_like(x)), y).backward()
        if os.environ.get("FIXED") == "1":
            model.zero_grad(set_to_none=True)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


torch.manual_seed(0)
base = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
eager = train(copy.deepcopy(base), 5, x, y)
compiled = train(torch.compile(copy.deepcopy(base), backend="aot_eager"), 5, x, y, warm=True)
gap = max(abs(a - b) for a, b in zip(eager, compiled))
print(f"max loss gap {gap:.2e}")
if gap > 1e-4:
    print("A/B MISMATCH: compiled losses drift from eager")
