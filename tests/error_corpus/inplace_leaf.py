# expect: inplace_leaf fails_eager_too
import torch

w = torch.randn(3, requires_grad=True)


@torch.compile(backend="eager")
def update(w):
    w.add_(1.0)
    return w.sum()


print(update(w))
