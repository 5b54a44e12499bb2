"""A model whose forward reads a debug switch from the environment (zero the residual branch to
check a bug, a pattern from research code). The script flips the switch for an ablation evaluation
after training; compiled, the value read while tracing stays in the graph."""
import os

import torch
import torch.nn as nn


class ResMLP(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.inp = nn.Linear(16, d)
        self.branch = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.out = nn.Linear(d, 2)

    def forward(self, x):
        h = self.inp(x)
        if os.environ.get("ABLATE_BRANCH", "0") != "1":
            h = h + self.branch(h)
        return self.out(h)


torch.manual_seed(0)
model = ResMLP()
cmodel = torch.compile(model, backend="aot_eager")
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(64, 16), torch.randint(0, 2, (64,))
for _ in range(5):
    loss = nn.functional.cross_entropy(cmodel(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

full = cmodel(x).detach()
os.environ["ABLATE_BRANCH"] = "1"           # ablation: evaluate without the residual branch
ablated = cmodel(x).detach()
want = model.out(model.inp(x)).detach()
assert torch.allclose(ablated, want, atol=1e-6), \
    f"ablation had no effect: outputs differ from the no-branch model by {(ablated - want).abs().max().item():.3g}"
print("branch contribution:", (full - ablated).abs().mean().item())
