# expect: user_error fails_eager_too
import torch


@torch.compile
def f(x):
    return torch.relu(x) + 1


y = f(torch.randn(8))
assert y.min() > 1.5, f"unexpected minimum {y.min().item():.3f}"
