# expect: dtype_mismatch fails_eager_too
import torch


@torch.compile(backend="eager")
def f(x):
    return x * 2


idx = torch.arange(4).requires_grad_()
print(f(idx))
