"""A position-bias table (a buffer) indexed by a Python int per request, compiled with dynamic=False (review of
0.33.102): each slot is a graph because dynamic=False keeps ints constant, not because an item of a container is
picked (a tensor row is an op; dynamic=True compiles one graph)."""
import os

import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.register_buffer("bias_table", torch.randn(16, 8))

    def forward(self, x, slot: int):
        bias = self.bias_table[slot]
        return torch.tanh(self.proj(x) + bias).sum(-1)


torch.manual_seed(0)
scorer = torch.compile(Scorer().eval(), dynamic=os.environ.get("DYNAMIC") == "1" or False, backend="eager")
with torch.no_grad():
    for slot in range(4):
        print(f"slot {slot}: {scorer(torch.randn(2, 8), slot).sum().item():.4f}")
