"""A sequence scorer compiled with dynamic=True recompiles for every padded length (blind A/B batch 50): nn.MaxPool1d's
F.max_pool1d (aten::max_pool1d) reads the length as an int while Dynamo traces it. FIXED=1: F.max_pool2d on
x.unsqueeze(-2), which keeps the length symbolic (one graph)."""
import os

import torch
import torch.nn.functional as F
from torch import nn


class Pool(nn.Module):
    def forward(self, x):
        if os.environ.get("FIXED") == "1":
            return F.max_pool2d(x.unsqueeze(-2), (1, 2)).squeeze(-2)
        return F.max_pool1d(x, 2)


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv1d(4, 8, 1)
        self.pool = Pool()

    def forward(self, x):
        return self.pool(torch.relu(self.proj(x))).mean(-1).sum(-1)


torch.manual_seed(0)
model = torch.compile(Scorer().eval(), dynamic=True)
with torch.no_grad():
    for length in (64, 96, 128):
        print(f"len {length}: {model(torch.randn(2, 4, length)).sum().item():.4f}")
