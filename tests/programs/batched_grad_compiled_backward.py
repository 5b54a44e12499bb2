"""A sensitivity audit that takes per-target input gradients with autograd.grad(..., is_grads_batched=True) through
a compiled model (blind A/B batch 59's er, pytorch#138422): the batched grad runs the backward under vmap, and the
backward torch.compile generated calls out= kernels with no batching rule ("Batching rule not implemented for
aten::mm.out"). FIXED=1: the audit runs on the uncompiled module, which shares the parameters."""
import os

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 3))
compiled = torch.compile(model)
x = torch.randn(64, 12)
loss = compiled(x).pow(2).mean()
loss.backward()

audited = model if os.environ.get("FIXED") == "1" else compiled
xa = torch.randn(16, 12, requires_grad=True)
out = audited(xa)
eye = torch.eye(3).unsqueeze(1).repeat(1, 16, 1)
(jac,) = torch.autograd.grad(out, xa, grad_outputs=eye, is_grads_batched=True)
print("jacobian", tuple(jac.shape), f"top input of target 0: d{jac[0].abs().mean(0).argmax().item()}")
