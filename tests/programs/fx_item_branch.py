"""A monitored statistic: .item() then a Python `if` on it, per layer, in a training forward (the
slow_training agent case in small). capture_scalar_outputs traces the .item() but the `if` on the
unbacked scalar then breaks: the break moves, nothing is gained. The per-layer compile also shows one
requires_grad switch (raw input, then activations): a one-time recompile, not a finding."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return self.fc(x).relu()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(3))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
            scale = x.abs().mean().item()
            if scale > 10:
                x = x / scale
        return x.sum()


torch.manual_seed(0)
model = torch.compile(Net(), backend="eager")
for _ in range(2):
    model(torch.randn(4, 16)).backward()
print("done")
