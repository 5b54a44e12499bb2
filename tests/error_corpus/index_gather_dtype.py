# expect: index_dtype fails_eager_too
import torch


@torch.compile
def f(x, idx):
    return torch.gather(x, 1, idx)


print(f(torch.randn(3, 4), torch.zeros(3, 1, dtype=torch.int32)))
