# expect: shape_mismatch fails_eager_too
import torch


@torch.compile(backend="eager")
def f(a, b):
    return torch.vmap(torch.dot)(a, b)


print(f(torch.randn(3, 5), torch.randn(4, 5)))
