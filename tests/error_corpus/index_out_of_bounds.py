# expect: index_error fails_eager_too
import torch


@torch.compile(backend="eager")
def last(x):
    return x[10]


print(last(torch.randn(5)))
