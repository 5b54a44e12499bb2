"""A small energy model whose forward returns forces from torch.autograd.grad, exported for serving: torch.export's
non-strict tracer lifts the output exp() keeps for the backward as a fake constant ("We found a fake tensor in the
exported program constant's list ... lifted_tensor_0"; pytorch#146719, open). FIXED=1 traces the model below autograd
with make_fx first and exports that graph (fixed shapes). (Blind A/B batch 65.)"""
import os

import torch
import torch.nn as nn
from torch.fx.experimental.proxy_tensor import make_fx


class Energy(nn.Module):
    def __init__(self):
        super().__init__()
        self.centers = nn.Parameter(torch.linspace(0.5, 3.0, 8))
        self.w = nn.Parameter(torch.randn(8) * 0.1)

    def forward(self, pos):
        pos = pos.requires_grad_(True)
        d = (pos[:, None, :] - pos[None, :, :]).pow(2).sum(-1) + 1.0
        rbf = torch.exp(-(d[..., None] - self.centers) ** 2)
        energy = (rbf * self.w).sum()
        (grad,) = torch.autograd.grad(energy, pos, create_graph=False)
        return energy.detach(), -grad


torch.manual_seed(0)
model = Energy()
pos = torch.randn(6, 3)
if os.environ.get("FIXED") == "1":
    ep = torch.export.export(make_fx(model)(pos.clone()), (pos.clone(),))
else:
    ep = torch.export.export(model, (pos.clone(),))
e0, f0 = model(pos.clone())
e1, f1 = ep.module()(pos.clone())
print(f"exported, max |dE| {abs(e1 - e0).item():.2e}, max |dF| {(f1 - f0).abs().max().item():.2e}")
