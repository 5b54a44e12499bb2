"""Graph break: print() inside a compiled function (GB0059-style builtin)."""
import torch


@torch.compile(backend="eager")
def f(x):
    x = x.sin()
    print("step")
    return x.cos()


for _ in range(2):
    f(torch.randn(8))
