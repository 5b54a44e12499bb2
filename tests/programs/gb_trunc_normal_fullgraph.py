"""Embedding noise drawn with nn.init.trunc_normal_ inside a fullgraph=True training step (blind A/B batch 55,
pytorch#194768): torch 2.15's trunc_normal_ resamples in a loop that ends on `if not mask.any()`, a data-dependent
branch inside torch. Older releases draw it in one pass and trace. INVCDF=1: a branch-free inverse-CDF draw."""
import math
import os

import torch
import torch.nn as nn


def noise_like(x, std):
    if os.environ.get("INVCDF") == "1":
        lo, hi = [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in (-2.0, 2.0)]
        u = torch.rand_like(x) * (hi - lo) + lo
        return (torch.erfinv(2 * u - 1) * math.sqrt(2) * std).clamp(-2 * std, 2 * std)
    n = torch.empty_like(x)
    nn.init.trunc_normal_(n, mean=0.0, std=std, a=-2 * std, b=2 * std)
    return n


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.head = nn.Linear(16, 4)

    def forward(self, ids):
        e = self.emb(ids)
        e = e + noise_like(e, 0.1)
        return self.head(e.mean(1))


torch.manual_seed(0)
model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = torch.compile(model, fullgraph=True, backend="eager")
ids, y = torch.randint(0, 50, (8, 6)), torch.randint(0, 4, (8,))
for i in range(2):
    loss = nn.functional.cross_entropy(step(ids), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {i} loss {loss.item():.4f}")
