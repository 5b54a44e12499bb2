"""Recompile: a Python float argument changes value."""
import torch


@torch.compile(backend="eager")
def scale(x, factor):
    return x * factor


for factor in (0.5, 0.25, 0.125):
    scale(torch.randn(4), factor)
