# expect: oom fails_eager_too
import torch


@torch.compile(backend="eager")
def f(x):
    return x * 2


f(torch.ones(2))
buffer = bytearray(1 << 62)   # far more than any machine has
