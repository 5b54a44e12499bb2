# expect: index_dtype fails_eager_too
import torch


@torch.compile
def gather_rows(x, idx):
    return x[idx]


print(gather_rows(torch.randn(5, 3), torch.tensor([0.0, 2.0])))
