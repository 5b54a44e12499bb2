"""A graph break (print inside a compiled function), exits 0."""
import torch
import cmd_marker  # noqa: F401


@torch.compile(backend="eager")
def f(x):
    x = x.sin()
    print("step")
    return x.cos()


for _ in range(2):
    f(torch.randn(8))
