# expect: shape_mismatch fails_eager_too
import torch


@torch.compile
def f(x, w):
    print("step")          # a graph break first
    return x @ w           # then a real shape bug


print(f(torch.randn(2, 5), torch.randn(4, 3)))
