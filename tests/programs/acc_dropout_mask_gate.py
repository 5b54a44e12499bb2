"""A training step with dropout, compiled, checked against eager with a tolerance: Inductor draws other random
numbers than eager, so the check fails. Under torch's accuracy check only the forward's bool dropout mask
differs (the float outputs are random in eager and fp64 too): not a miscompile (blind A/B batch 21)."""
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 4))
x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))


def step(m):
    torch.manual_seed(1)
    loss = nn.functional.cross_entropy(m(x), y)
    loss.backward()
    return loss.item()


eager = step(model)
compiled = step(torch.compile(model))
print(f"loss eager {eager:.5f} compiled {compiled:.5f} diff {abs(eager - compiled):.2e}")
sys.exit(0 if abs(eager - compiled) < 1e-4 else 1)
