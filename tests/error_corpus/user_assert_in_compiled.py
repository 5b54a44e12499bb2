# expect: user_error fails_eager_too
import torch


@torch.compile(backend="eager")
def f(x):
    assert x.shape[0] == 3, "batch must be 3"
    return x + 1


print(f(torch.randn(4)))
