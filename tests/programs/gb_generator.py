"""A denoising loss that draws its timesteps and noise from its own torch.Generator inside the compiled
function (blind A/B batch 14's DDPM trainer, written fresh): Dynamo cannot trace a Generator argument,
so each draw breaks the graph, and --fullgraph fails. Drawing outside and passing the tensors in gives
one graph and the same numbers (tests/test_triage.py)."""
import sys

import torch
import torch.nn as nn

gen = torch.Generator().manual_seed(0)
net = nn.Sequential(nn.Linear(17, 64), nn.SiLU(), nn.Linear(64, 16))


def loss_fn(x0):
    t = torch.randint(0, 100, (x0.shape[0], 1), generator=gen)
    noise = torch.randn(x0.shape, generator=gen)
    xt = x0 + noise * (t / 100.0)
    return (net(torch.cat([xt, t / 100.0], 1)) - noise).square().mean()


step = torch.compile(loss_fn, fullgraph="--fullgraph" in sys.argv, backend="eager")
x0 = torch.randn(32, 16)
for i in range(3):
    loss = step(x0)
print(f"loss {loss.item():.4f}")
