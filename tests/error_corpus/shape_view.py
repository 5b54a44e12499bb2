# expect: shape_mismatch fails_eager_too
import torch


@torch.compile
def f(x):
    return x.view(3, 5).sum(0)


print(f(torch.randn(12)))
