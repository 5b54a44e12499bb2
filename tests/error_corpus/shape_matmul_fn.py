# expect: shape_mismatch fails_eager_too
import torch


@torch.compile
def f(x, w):
    return x @ w


print(f(torch.randn(2, 5), torch.randn(4, 3)))
