"""Graph break: .item() and float(tensor) in compiled code."""
import torch


@torch.compile(backend="eager")
def f(x):
    s = x.sum().item()
    y = x * 2
    scale = float(y.mean())
    return y + s + scale


f(torch.randn(8))
