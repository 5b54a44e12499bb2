"""Recompile: the batch size changes between calls."""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.lin(x).relu()


model = torch.compile(Net(), backend="eager")
for bs in (2, 3, 4):
    model(torch.randn(bs, 8))
