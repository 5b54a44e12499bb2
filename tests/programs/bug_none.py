"""No bug: compiles with Inductor and matches eager."""
import torch


def f(x):
    return torch.relu(x.sin()) * 2 + 1


x = torch.randn(16)
assert torch.allclose(torch.compile(f)(x), f(x), atol=1e-4)
print("ok")
