# expect: shape_mismatch fails_eager_too
import torch


@torch.compile(fullgraph=True)
def f(x, w):
    h = torch.tanh(x)
    return h @ w


print(f(torch.randn(2, 5), torch.randn(4, 3)))
