"""A block compiled with activation checkpointing whose checkpointed body clamps only when a tensor's max is large
(blind A/B batch 58's ej): the `if` on a tensor's value breaks the graph inside checkpoint's body, and Dynamo runs
the whole checkpoint(...) call eagerly: no op of the block is compiled, and no error or warning says so.
FIXED=1: an unconditional clamp (same values), which compiles the whole block."""
import os

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, d=32, clip=50.0):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.clip = clip

    def body(self, x):
        h = self.fc2(torch.nn.functional.gelu(self.fc1(self.ln(x))))
        if os.environ.get("FIXED") == "1":
            h = h.clamp(-self.clip, self.clip)
        elif h.abs().amax() > self.clip:
            h = h.clamp(-self.clip, self.clip)
        return x + h

    def forward(self, x):
        return checkpoint(self.body, x, use_reentrant=False)


torch.manual_seed(0)
blocks = nn.ModuleList([Block() for _ in range(2)])
for b in blocks:
    b.compile()
opt = torch.optim.SGD(blocks.parameters(), lr=0.01)
for step in range(3):
    x = torch.randn(4, 16, 32)
    for b in blocks:
        x = b(x)
    loss = x.pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
