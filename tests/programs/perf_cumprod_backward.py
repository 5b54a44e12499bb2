"""A discrete-time survival model trained a few steps: survival is cumprod(1 - hazard) over 120 periods. Eager's
cumprod backward takes the cheap formula when the input has no zeros; the compiled backward always runs the
zero-safe one (pytorch/pytorch#136263). LOGSPACE=1 computes log-survival as a cumsum of logsigmoid instead."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T = 120
net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, T))
opt = torch.optim.SGD(net.parameters(), lr=0.01)


def loss_fn(x, t):
    z = net(x)
    if os.environ.get("LOGSPACE") == "1":
        log_s = torch.cumsum(F.logsigmoid(-z), dim=-1)
    else:
        log_s = torch.log(torch.cumprod(1.0 - torch.sigmoid(z), dim=-1).clamp_min(1e-12))
    return -log_s.gather(1, t[:, None]).mean()


step = torch.compile(loss_fn)
for i in range(3):
    x, t = torch.randn(256, 16), torch.randint(0, T, (256,))
    loss = step(x, t)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {i} loss {loss.item():.4f}")
