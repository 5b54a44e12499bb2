"""Graph break: Python `if` on a tensor value (data-dependent branch)."""
import torch


@torch.compile(backend="eager")
def f(x):
    y = x.relu()
    if y.sum() > 0:
        return y * 2
    return y - 1


f(torch.randn(8))
