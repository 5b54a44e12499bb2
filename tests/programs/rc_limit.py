"""Recompile limit: a python int that changes every call exhausts recompile_limit."""
import torch

torch._dynamo.config.recompile_limit = 3


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.step = 0

    def forward(self, x):
        self.step += 1
        return x + self.step


m = torch.compile(Counter(), backend="eager")
for _ in range(6):
    m(torch.randn(3))
