"""A feature front-end kept as torch.jit.script(...) inside a model that is then exported (blind A/B batch 51):
non-strict torch.export calls the ScriptModule's forward with an extra argument ("takes 2 positional arguments but 3
were given"). PLAIN=1: the front-end stays an nn.Module (script a copy only to save TorchScript)."""
import os

import torch
from torch import nn


class Normalizer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("mean", torch.zeros(n))

    def forward(self, x):
        return x - self.mean[:, None]


def build_frontend(n):
    front = Normalizer(n)
    return front if os.environ.get("PLAIN") == "1" else torch.jit.script(front)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = build_frontend(8)
        self.head = nn.Conv1d(8, 2, 3)

    def forward(self, x):
        return self.head(self.frontend(x)).mean(-1)


model = Net().eval()
ep = torch.export.export(model, (torch.randn(2, 8, 16),))
print("exported", len(ep.graph.nodes), "nodes")
