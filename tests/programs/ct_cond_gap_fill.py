"""A meter scorer whose gap filling runs through torch.cond (blind A/B batch 50): neither the FX graph cache
("Can't cache HigherOrderOperator: cond") nor the AOTAutograd cache ("Unsupported call_function target cond")
stores the graph, so every start compiles it again. WHERE=1: both branches computed and selected with
torch.where (the advice): one graph, cached on the second start."""
import os

import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)
        self.head = nn.Linear(8, 1)

    def fill(self, x):
        return torch.nan_to_num(x, nan=0.0)

    def keep(self, x):
        return x.clone()

    def forward(self, x):
        if os.environ.get("WHERE") == "1":
            x = torch.where(torch.isnan(x).any(), self.fill(x), x)
        else:
            x = torch.cond(torch.isnan(x).any(), self.fill, self.keep, (x,))
        return torch.sigmoid(self.head(torch.relu(self.conv(x)).mean(-1))).squeeze(-1)


torch.manual_seed(0)
model = torch.compile(Scorer().eval())
x = torch.randn(16, 4, 24)
x[3, 1, 5] = float("nan")
with torch.no_grad():
    print(f"mean score {model(x).mean().item():.4f}")
