"""A training loop that compiles the model and, as the "compiling the optimizer" recipe shows, the
optimizer step too: AdamW's update of every parameter tensor is traced into one graph. With --fused-step:
the fix, the step uncompiled with AdamW's fused kernel."""
import sys

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(*[nn.Sequential(nn.Linear(32, 32), nn.GELU()) for _ in range(5)], nn.Linear(32, 4))
fused = "--fused-step" in sys.argv
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=fused or None)
cmodel = torch.compile(model)


def opt_step():
    opt.step()


if not fused:
    opt_step = torch.compile(opt_step)


x, y = torch.randn(16, 32), torch.randn(16, 4)
for step in range(3):
    loss = nn.functional.mse_loss(cmodel(x), y)
    loss.backward()
    opt_step()
    opt.zero_grad(set_to_none=True)
    print(f"step {step} loss {loss.item():.4f}")
