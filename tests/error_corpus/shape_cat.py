# expect: shape_mismatch fails_eager_too
import torch


@torch.compile
def f(a, b):
    return torch.cat([a, b], dim=0)


print(f(torch.randn(2, 3), torch.randn(2, 4)))
