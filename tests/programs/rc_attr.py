"""Recompile: a module attribute (python state) is mutated between calls."""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.use_relu = True

    def forward(self, x):
        y = self.lin(x)
        return y.relu() if self.use_relu else y.sigmoid()


net = Net()
compiled = torch.compile(net, backend="eager")
compiled(torch.randn(2, 4))
net.use_relu = False
compiled(torch.randn(2, 4))
