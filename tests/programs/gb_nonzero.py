"""Graph break: a dynamic-output-shape operator (nonzero)."""
import torch


@torch.compile(backend="eager")
def f(x):
    idx = torch.nonzero(x > 0)
    return idx.float().sum() + x.sum()


f(torch.randn(16))
