"""Compiles a function with a graph break (print), then runs far longer than any test timeout."""
import time

import torch
import cmd_marker  # noqa: F401


@torch.compile(backend="eager")
def f(x):
    x = x.sin()
    print("step")
    return x.cos()


f(torch.randn(8))
print("compiled", flush=True)
time.sleep(3600)
