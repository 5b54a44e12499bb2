"""A model of repeated blocks compiled whole (compile-time tests: regional compilation is measured)."""
import sys

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, d=32, n=int(sys.argv[1]) if len(sys.argv) > 1 else 8):
        super().__init__()
        self.layers = nn.ModuleList(Block(d) for _ in range(n))
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


torch.manual_seed(0)
model = Net().eval()
compiled = torch.compile(model)
with torch.no_grad():
    for _ in range(2):
        out = compiled(torch.randn(4, 32))
print("out", tuple(out.shape))
