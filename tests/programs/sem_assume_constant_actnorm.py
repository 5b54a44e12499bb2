"""A small flow-style model whose ActNorm layers initialise themselves from the first batch (data-dependent
init, as in Glow). The "already initialised?" check reads a buffer with .item(); it is marked
torch.compiler.assume_constant_result to avoid that graph break, so the first traced answer (True) is baked
into the training graph: every compiled step re-initialises loc/logs from its batch and throws away what the
optimizer learned. Eager initialises once. No error: the printed losses and scales differ (blind A/B batch 27).
  FIXED=1       the class's fix: a plain Python flag (Dynamo guards it; one recompile when it flips)
  --no-compile  eager"""
import os
import sys

import torch
import torch.nn as nn

FIXED = os.environ.get("FIXED") == "1"


class ActNorm(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(ch))
        self.logs = nn.Parameter(torch.zeros(ch))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))
        self.init_done = False

    @torch.compiler.assume_constant_result
    def needs_init(self):
        return self.initialized.item() == 0

    def forward(self, x):
        if self.training and (not self.init_done if FIXED else self.needs_init()):
            with torch.no_grad():
                self.loc.copy_(-x.mean(0))
                self.logs.copy_(torch.log(1.0 / (x.std(0) + 1e-6)))
                self.initialized.fill_(1)
            self.init_done = True
        return (x + self.loc) * torch.exp(self.logs)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 16), ActNorm(16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x):
        return self.layers(x)


torch.manual_seed(0)
net = Net()
step = net if "--no-compile" in sys.argv else torch.compile(net, backend="eager")
opt = torch.optim.Adam(net.parameters(), lr=0.05)
w = torch.randn(6, 1)
for i in range(12):
    x = torch.randn(64, 6) * (1 + i % 3)
    loss = (step(x) - x @ w).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if i % 4 == 3:
        print(f"step {i}: loss {loss.item():.4f}")
print("actnorm logs[:3] =", [round(v, 4) for v in net.layers[1].logs[:3].tolist()])
