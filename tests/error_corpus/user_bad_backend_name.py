# expect: user_error fails_eager_too
import torch


@torch.compile(backend="indcutor")
def f(x):
    return x + 1


print(f(torch.randn(2)))
