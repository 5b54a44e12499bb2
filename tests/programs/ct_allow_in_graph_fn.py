"""A small tabular trainer whose activation helper is marked torch.compiler.allow_in_graph (blind A/B batch 52): the
graph keeps the Python function as one call, which the AOTAutograd cache cannot key ("Unsupported call_function
target <function gated_swish ...>"), so every start redoes AOTAutograd. PLAIN=1: the mark removed (the advice); the
warm start then hits the AOTAutograd cache. The losses are the same."""
import os

import torch
from torch import nn


def gated_swish(x, gate):
    return x * torch.sigmoid(gate) * torch.sigmoid(x)


if os.environ.get("PLAIN") != "1":
    gated_swish = torch.compiler.allow_in_graph(gated_swish)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.a, self.g = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        return x + gated_swish(self.a(x), self.g(x))


torch.manual_seed(0)
model = nn.Sequential(Block(16), Block(16), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
step = torch.compile(model)
x, y = torch.randn(64, 16), torch.randn(64, 1)
for _ in range(3):
    loss = nn.functional.mse_loss(step(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"final loss {loss.item():.4f}")
