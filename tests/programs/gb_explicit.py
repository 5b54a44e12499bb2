"""Graph break: torch._dynamo.graph_break()."""
import torch


@torch.compile(backend="eager")
def f(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2


f(torch.randn(4))
