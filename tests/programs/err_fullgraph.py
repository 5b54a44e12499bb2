"""Error: a graph break under fullgraph=True."""
import torch


@torch.compile(backend="eager", fullgraph=True)
def f(x):
    x = x + 1
    print("inside")
    return x


f(torch.randn(4))
