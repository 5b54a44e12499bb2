# expect: shape_mismatch fails_eager_too
import torch


@torch.compile(backend="eager")
def f(a, b):
    return a * 2 + b


print(f(torch.randn(3), torch.randn(4)))
