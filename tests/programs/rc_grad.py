"""Recompile: grad mode changes (training step vs torch.no_grad evaluation)."""
import torch

lin = torch.nn.Linear(4, 4)


@torch.compile(backend="eager")
def step(x):
    return lin(x).tanh()


step(torch.randn(2, 4))
with torch.no_grad():
    step(torch.randn(2, 4))
