"""A small encoder with per-step timing and a namespace of outputs: two things torch releases treat
differently (time.time() in a compiled region: GB0007 on 2.14, its own GB9193 on 2.15;
types.SimpleNamespace(**kwargs): a graph break on 2.14, traced on 2.15)."""
import time
import types

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Encoder(nn.Module):
    def __init__(self, d=32, n=2):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        t0 = time.time()                       # timing inside the compiled region
        for b in self.blocks:
            x = b(x)
        logits = self.head(x.mean(1))
        fields = {"logits": logits, "hidden": x}
        out = types.SimpleNamespace(**fields)  # outputs as attributes
        out.elapsed = time.time() - t0
        return out


torch.manual_seed(0)
model = torch.compile(Encoder())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 6, 32), torch.randint(0, 4, (8,))
for step in range(3):
    out = model(x)
    loss = nn.functional.cross_entropy(out.logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
