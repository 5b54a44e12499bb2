"""Compiles cleanly with Inductor (C++ kernels on CPU): one graph, no breaks."""
import torch
import cmd_marker  # noqa: F401


@torch.compile
def f(x):
    return (x.sin() + x.cos()).relu()


for _ in range(2):
    f(torch.randn(8))
