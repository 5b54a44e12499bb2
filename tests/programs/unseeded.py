"""Compiles cleanly but prints a different number on every run: random input, no seed."""
import torch


@torch.compile(backend="eager")
def f(x):
    return (x * 2).sum()


print("value", round(f(torch.randn(16)).item(), 4))
