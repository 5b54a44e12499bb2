"""Recompile: the input dtype changes."""
import torch


@torch.compile(backend="eager")
def f(x):
    return (x * 2).sum()


f(torch.randn(4))
f(torch.randn(4, dtype=torch.float64))
