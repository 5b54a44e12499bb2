"""A program that compiles cleanly: one graph, no breaks, no recompiles."""
import torch


@torch.compile(backend="eager")
def f(x):
    return (x.sin() + x.cos()).relu()


for _ in range(3):
    f(torch.randn(8))
